package main

import (
	"fmt"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// spanBatch builds one OTLP/HTTP protobuf body as a gateway's exporter
// sends it: one resource (a peer instance), n attempt spans spread over
// the keys targets x 1 model, each with the attributes firstbyte puts on
// an attempt, ended at now with a time to first chunk around 200 ms.
func spanBatch(rng *rand.Rand, n, keys int, now time.Time) ([]byte, error) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	res := rs.Resource().Attributes()
	res.PutStr("service.name", "firstbyte")
	res.PutStr("service.instance.id", "fleetbench-peer")
	res.PutStr("service.version", "fleetbench")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("github.com/firstbyte-dev/firstbyte")
	for i := range n {
		target := fmt.Sprintf("t%d", i%keys)
		ttfb := 0.1 + 0.2*rng.Float64()
		s := ss.Spans().AppendEmpty()
		var tid pcommon.TraceID
		var sid pcommon.SpanID
		for j := range tid {
			tid[j] = byte(rng.Uint32())
		}
		for j := range sid {
			sid[j] = byte(rng.Uint32())
		}
		s.SetTraceID(tid)
		s.SetSpanID(sid)
		s.SetParentSpanID(pcommon.SpanID{1})
		s.SetName("chat " + benchModel)
		s.SetKind(ptrace.SpanKindClient)
		end := now.Add(-time.Duration(i) * time.Millisecond)
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(end.Add(-time.Duration(ttfb * 1.5 * float64(time.Second)))))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(end))
		a := s.Attributes()
		a.PutStr("gen_ai.operation.name", "chat")
		a.PutStr("gen_ai.provider.name", "openai")
		a.PutStr("gen_ai.request.model", benchModel)
		a.PutStr("server.address", "127.0.0.1")
		a.PutInt("server.port", 1)
		a.PutInt("http.response.status_code", 200)
		a.PutStr("firstbyte.target", target)
		a.PutStr("firstbyte.requested_model", benchModel)
		a.PutInt("firstbyte.attempt", 1)
		a.PutStr("firstbyte.selection", "leader")
		a.PutStr("firstbyte.outcome", "success")
		a.PutDouble("gen_ai.response.time_to_first_chunk", ttfb)
		a.PutInt("gen_ai.usage.input_tokens", 40)
		a.PutInt("gen_ai.usage.output_tokens", 120)
	}
	return ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
}

// benchModel is the one upstream model the bench's keys use.
const benchModel = "bench-model"
