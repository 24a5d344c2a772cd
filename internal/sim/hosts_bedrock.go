package sim

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// bedrockFront checks a Bedrock runtime request (SigV4 or an API key) and
// turns InvokeModel's body into a Messages request.
func (s *Server) bedrockFront(w http.ResponseWriter, r *http.Request, body []byte) (http.ResponseWriter, []byte, bool) {
	if err := s.bedrockAuth(r, body); err != "" {
		typ, _, _ := strings.Cut(err, ":")
		w.Header().Set("X-Amzn-ErrorType", typ+":http://internal.amazon.com/coral/com.amazon.coral.service/")
		writeJSON(w, http.StatusForbidden, map[string]string{"message": strings.TrimSpace(strings.TrimPrefix(err, typ+":"))})
		return w, nil, false
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/model/")
	i := strings.LastIndexByte(rest, '/')
	if !ok || i < 0 {
		bedrockError(w, http.StatusNotFound, "UnknownOperationException", "")
		return w, nil, false
	}
	model, action := rest[:i], rest[i+1:]
	if action == "converse" || action == "converse-stream" {
		stream := action == "converse-stream"
		msgBody, signed, refusal := converseFront(body, model, stream)
		if refusal != "" {
			bedrockError(w, http.StatusBadRequest, "ValidationException", refusal)
			return w, nil, false
		}
		r.URL.Path = "/v1/messages"
		c := &converseWriter{hostWriter: hostWriter{ResponseWriter: w, stream: stream}, gate: exceptionGate{ex: s.host.Exception}, signed: signed}
		var in converseRequest
		c.reasons = json.Unmarshal(body, &in) == nil && converseReasons(&in)
		return c, msgBody, true
	}
	if action != "invoke" && action != "invoke-with-response-stream" {
		bedrockError(w, http.StatusNotFound, "UnknownOperationException", "")
		return w, nil, false
	}
	switch {
	case anthropicVersionOf(body) != "bedrock-2023-05-31":
		bedrockError(w, http.StatusBadRequest, "ValidationException", "Malformed input request: anthropic_version must be bedrock-2023-05-31")
		return w, nil, false
	case hasField(body, "model") || hasField(body, "stream"):
		bedrockError(w, http.StatusBadRequest, "ValidationException", "Malformed input request: extraneous key [model or stream] is not permitted")
		return w, nil, false
	}
	stream := action == "invoke-with-response-stream"
	r.URL.Path = "/v1/messages"
	body = withFields(body, map[string]any{"model": model, "stream": stream})
	return &bedrockWriter{ResponseWriter: w, stream: stream, gate: exceptionGate{ex: s.host.Exception}}, body, true
}

// bedrockAuth is "" when r carries a valid credential, else the refusal
// ("Type: message").
func (s *Server) bedrockAuth(r *http.Request, body []byte) string {
	auth := r.Header.Get("Authorization")
	if key, ok := strings.CutPrefix(auth, "Bearer "); ok {
		if s.host.APIKey != "" && key == s.host.APIKey {
			return ""
		}
		return "UnrecognizedClientException: The security token included in the request is invalid."
	}
	region := s.host.Region
	if region == "" {
		region = "us-east-1"
	}
	if err := VerifySigV4(r, body, s.host.AWSKeys, region, "bedrock", s.now()); err != nil {
		msg := err.Error()
		if !strings.Contains(msg, "Exception:") {
			msg = "MissingAuthenticationTokenException: " + msg
		}
		return msg
	}
	return ""
}

func bedrockError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("X-Amzn-ErrorType", typ+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	writeJSON(w, status, map[string]string{"message": msg})
}

// bedrockTypes are the error types Bedrock answers each status with.
var bedrockTypes = map[int]string{
	400: "ValidationException", 403: "AccessDeniedException", 404: "ResourceNotFoundException",
	408: "ModelTimeoutException", 429: "ThrottlingException", 500: "InternalServerException",
	503: "ServiceUnavailableException",
}

// bedrockWriter puts a Messages answer in Bedrock's framing: an error
// typed by X-Amzn-ErrorType, a stream as event-stream chunk frames.
type bedrockWriter struct {
	http.ResponseWriter
	stream  bool
	status  int
	pending []byte // SSE bytes not yet framed
	gate    exceptionGate
}

func (b *bedrockWriter) WriteHeader(status int) {
	b.status = status
	h := b.Header()
	if status >= 400 {
		typ := bedrockTypes[status]
		if typ == "" {
			typ = "InternalServerException"
		}
		h.Set("X-Amzn-ErrorType", typ+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	} else if b.stream {
		h.Set("Content-Type", "application/vnd.amazon.eventstream")
		h.Del("Cache-Control")
	}
	b.ResponseWriter.WriteHeader(status)
}

func (b *bedrockWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.WriteHeader(http.StatusOK)
	}
	if !b.stream || b.status >= 400 {
		return b.ResponseWriter.Write(p)
	}
	b.pending = append(b.pending, p...)
	var out bytes.Buffer
	for {
		i := bytes.Index(b.pending, []byte("\n\n"))
		if i < 0 {
			break
		}
		ev := b.pending[:i]
		b.pending = b.pending[i+2:]
		for line := range bytes.SplitSeq(ev, []byte("\n")) {
			if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok && b.gate.admit(&out) {
				writeChunkFrame(&out, data)
			}
		}
	}
	if _, err := b.ResponseWriter.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (b *bedrockWriter) Flush() { http.NewResponseController(b.ResponseWriter).Flush() }

func (b *bedrockWriter) Unwrap() http.ResponseWriter { return b.ResponseWriter }

// chunkPadding is the p field Bedrock adds to each chunk so that frame
// sizes do not tell the content's length.
const chunkPadding = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"

// writeChunkFrame writes one chunk event carrying an Anthropic event.
func writeChunkFrame(w *bytes.Buffer, event []byte) {
	payload, _ := json.Marshal(map[string]string{"bytes": base64.StdEncoding.EncodeToString(event), "p": chunkPadding[:1+len(event)%len(chunkPadding)]})
	var m eventstream.Message
	m.Headers.Set(":event-type", eventstream.StringValue("chunk"))
	m.Headers.Set(":content-type", eventstream.StringValue("application/json"))
	m.Headers.Set(":message-type", eventstream.StringValue("event"))
	m.Payload = payload
	_ = eventstream.NewEncoder().Encode(w, m)
}

// exceptionGate puts a Host.Exception in an event stream: it counts the
// event frames written and, when the exception is due, writes it in the
// next one's place and drops every frame after it.
type exceptionGate struct {
	ex     *StreamException // nil: the stream runs its course
	frames int              // event frames admitted
	done   bool             // the exception was written
}

// admit reports whether the next event frame may be written to w; when
// the exception is due it writes the exception frame to w instead.
func (g *exceptionGate) admit(w *bytes.Buffer) bool {
	switch {
	case g.ex == nil:
		return true
	case g.done:
		return false
	case g.frames >= g.ex.AfterEvents:
		g.done = true
		writeExceptionFrame(w, g.ex.Type)
		return false
	}
	g.frames++
	return true
}

// writeExceptionFrame writes an exception message of type typ, its
// payload the JSON message Bedrock sends with one.
func writeExceptionFrame(w *bytes.Buffer, typ string) {
	var m eventstream.Message
	m.Headers.Set(":exception-type", eventstream.StringValue(typ))
	m.Headers.Set(":content-type", eventstream.StringValue("application/json"))
	m.Headers.Set(":message-type", eventstream.StringValue("exception"))
	m.Payload, _ = json.Marshal(map[string]string{"message": "Simulated " + typ + " from Bedrock."})
	_ = eventstream.NewEncoder().Encode(w, m)
}
