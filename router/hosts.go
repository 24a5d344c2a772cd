package router

import (
	"errors"

	"github.com/firstbyte-dev/firstbyte/router/upstream"
)

// hostException is what a cloud host's event-stream exception frame
// stands for (upstream.StreamExceptionVerdict), when err is one: its
// status, error.type and whether a disabling one is the target's only.
func hostException(err error) (status int, errorType string, targetOnly, ok bool) {
	var ex *upstream.StreamException
	if !errors.As(err, &ex) {
		return 0, "", false, false
	}
	status, errorType, targetOnly = upstream.StreamExceptionVerdict(ex.Type)
	return status, errorType, targetOnly, true
}
