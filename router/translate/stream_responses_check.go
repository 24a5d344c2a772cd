package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// responsesCheck relays an OpenAI Responses event stream byte for byte,
// holding it to its API: every event's data is one JSON value, and the
// stream ends with response.completed or response.incomplete (an answer
// cut short by max_output_tokens is still a whole answer), or with
// response.failed or error (the provider's own error: the stream is
// broken, and the client has the provider's event). It reads the usage of
// the final response.
type responsesCheck struct {
	dec   sseDecoder
	usage Usage
	end   string // the event that ended the stream ("" : none yet)
	err   error
}

// NewResponsesCheck passes a Responses event stream through unchanged
// (Feed appends p as it came). Feed reports an event that is not JSON
// (ErrInvalidUpstream); Finish reports ErrTruncated when the stream never
// said how it ended, ErrStreamError when it ended with the provider's
// error.
func NewResponsesCheck() Stream { return &responsesCheck{} }

func (c *responsesCheck) Usage() Usage { return c.usage }

func (c *responsesCheck) Feed(dst, p []byte) ([]byte, error) {
	dst = append(dst, p...)
	if c.err != nil {
		return dst, c.err
	}
	c.dec.begin(p)
	for {
		ev, ok := c.dec.next()
		if !ok {
			break
		}
		if c.err = c.check(ev); c.err != nil {
			return dst, c.err
		}
	}
	if err := c.dec.end(); err != nil {
		c.err = err
	}
	return dst, c.err
}

func (c *responsesCheck) Finish(dst []byte) ([]byte, error) {
	if c.err != nil {
		return dst, c.err
	}
	if ev, ok := c.dec.finishEvent(); ok {
		if c.err = c.check(ev); c.err != nil {
			return dst, c.err
		}
	}
	switch c.end {
	case "response.completed", "response.incomplete":
		return dst, nil
	case "response.failed", "error":
		return dst, ErrStreamError
	}
	return dst, ErrTruncated
}

// check holds an event to the API and notes the one that ends the stream
// (by its event name, else its data's type), with the usage it reports.
func (c *responsesCheck) check(ev sseEvent) error {
	if !ev.hasData || c.end != "" {
		return nil
	}
	if err := checkEventJSON(ev); err != nil {
		return err
	}
	name := ev.name
	var response []byte
	jsonscan.Object(ev.data, func(k, v []byte) {
		switch string(k) {
		case "type":
			if len(name) == 0 && isString(v) {
				name = v[1 : len(v)-1]
			}
		case "response":
			response = v
		}
	})
	switch string(name) {
	case "response.completed", "response.incomplete", "response.failed", "error":
		c.end = string(name)
		if u := jsonscan.Field(response, "usage"); present(u) {
			c.usage = messagesUsage(Usage{}, u) // input_tokens, output_tokens: the same names
		}
	}
	return nil
}
