package router

import (
	"errors"

	"github.com/firstbyte-dev/firstbyte/router/upstream"
)

// hostException is the status a cloud host's event-stream exception frame
// stands for (upstream.StreamExceptionStatus), when err is one.
func hostException(err error) (int, bool) {
	var ex *upstream.StreamException
	if !errors.As(err, &ex) {
		return 0, false
	}
	return upstream.StreamExceptionStatus(ex.Type), true
}
