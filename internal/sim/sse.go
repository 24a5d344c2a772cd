package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// sseWriter buffers the events of one step and sends them in one write and flush, so
// each step reaches the client at once and as a whole.
type sseWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	buf []byte
	err error
}

// event appends "event: name" (when name is not empty) and "data: JSON(v)".
func (e *sseWriter) event(name string, v any) {
	if name != "" {
		e.buf = append(e.buf, "event: "...)
		e.buf = append(e.buf, name...)
		e.buf = append(e.buf, '\n')
	}
	data, err := json.Marshal(v)
	if err != nil {
		// Only the simulator's own types are marshalled: a failure is a bug here.
		panic(fmt.Sprintf("sim: marshal %T: %v", v, err))
	}
	e.data(data)
}

// data appends a "data:" line and the blank line that ends an event.
func (e *sseWriter) data(b []byte) {
	e.buf = append(e.buf, "data: "...)
	e.buf = append(e.buf, b...)
	e.buf = append(e.buf, '\n', '\n')
}

func (e *sseWriter) flush() error {
	if e.err != nil {
		return e.err
	}
	if _, err := e.w.Write(e.buf); err != nil {
		e.err = err
		return err
	}
	e.buf = e.buf[:0]
	e.err = e.rc.Flush()
	return e.err
}
