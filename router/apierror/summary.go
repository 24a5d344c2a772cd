package apierror

import (
	"bytes"
	"cmp"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"
)

// When every candidate failed over or was skipped, the client gets the
// last failure as it was, with the attempts summarised beside it
// (Summary, set into the upstream's error by WithMembers), never instead
// of it. Only a failure with no upstream answer gets the gateway's own
// error (FailureMessage).

// Skip is a candidate passed over without an attempt.
type Skip struct{ Target, Reason string }

// Failure is a failover-safe failure, kept for the answer the client gets
// when every candidate failed.
type Failure struct {
	Target  string
	Attempt int
	Status  int    // what the client gets if this is the last failure
	Reason  string // error.type: an HTTP status, "timeout", "transport", ...
	Detail  string // the reason in more words ("transport (connection refused)"); "": none
}

// FailureMessage is the gateway's own answer when the last failure had no
// upstream answer to show: its status (the last failure's: 502 transport
// or unusable answer, 504 timeout; 503 when nothing could be attempted),
// with a message naming every attempt of the attempts made and every skip.
func FailureMessage(attempts int, failures []Failure, skipped []Skip) (status int, msg string) {
	status = http.StatusServiceUnavailable
	msg = "no target could be tried:"
	if n := len(failures); n > 0 {
		status = failures[n-1].Status
		msg = "all " + strconv.Itoa(attempts) + " attempts failed:"
	}
	for i, f := range failures {
		if i > 0 {
			msg += ";"
		}
		msg += " attempt " + strconv.Itoa(f.Attempt) + " " + f.Target + ": " + cmp.Or(f.Detail, f.Reason)
	}
	for i, s := range skipped {
		if i > 0 || len(failures) > 0 {
			msg += ";"
		}
		msg += " " + s.Target + " skipped: " + s.Reason
	}
	return status, msg
}

// Summary is the attempts and skips as members of an error object:
// ,"firstbyte_attempts":[...],"firstbyte_skipped":[...].
func Summary(failures []Failure, skipped []Skip) []byte {
	extra := []byte(`,"firstbyte_attempts":[`)
	for i, f := range failures {
		if i > 0 {
			extra = append(extra, ',')
		}
		extra = append(extra, `{"target":`...)
		extra = jsonscan.AppendString(extra, f.Target)
		extra = append(extra, `,"attempt":`...)
		extra = strconv.AppendInt(extra, int64(f.Attempt), 10)
		extra = append(extra, `,"status":`...)
		extra = strconv.AppendInt(extra, int64(f.Status), 10)
		extra = append(extra, `,"error":`...)
		extra = jsonscan.AppendString(extra, f.Reason)
		if f.Detail != "" {
			extra = append(extra, `,"detail":`...)
			extra = jsonscan.AppendString(extra, f.Detail)
		}
		extra = append(extra, '}')
	}
	extra = append(extra, ']')
	if len(skipped) > 0 {
		extra = append(extra, `,"firstbyte_skipped":[`...)
		for i, s := range skipped {
			if i > 0 {
				extra = append(extra, ',')
			}
			extra = append(extra, `{"target":`...)
			extra = jsonscan.AppendString(extra, s.Target)
			extra = append(extra, `,"reason":`...)
			extra = jsonscan.AppendString(extra, s.Reason)
			extra = append(extra, '}')
		}
		extra = append(extra, ']')
	}
	return extra
}

// WithMembers appends members (",\"k\":v,...") to the "error" object of an
// error body ({"error":{...}} or {"type":"error","error":{...}}), keeping
// every byte of it; ok is false (and body is returned as it is) when the
// body has no such object.
func WithMembers(body, members []byte) (out []byte, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return body, false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return body, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return body, false
		}
		if key != "error" || len(v) < 2 || v[0] != '{' {
			continue
		}
		end := int(dec.InputOffset()) - 1 // the error object's closing brace
		if end < 0 || end >= len(body) || body[end] != '}' {
			return body, false
		}
		if len(members) > 0 && len(bytes.TrimSpace(v[1:len(v)-1])) == 0 {
			members = members[1:] // an empty object: no comma before the first member
		}
		out = make([]byte, 0, len(body)+len(members))
		out = append(out, body[:end]...)
		out = append(out, members...)
		return append(out, body[end:]...), true
	}
	return body, false
}
