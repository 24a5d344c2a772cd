package keyratelimitprocessor

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/collector/processor/processortest"
)

// spanSpec is one span of a test batch: its target ("" for none: a
// server span) and upstream model.
type spanSpec struct{ target, model string }

// buildBatch is what a gateway's exporter sends: per instance one
// resource, with its server spans and attempt spans in one scope.
//
//	resource instance-a
//	  scope firstbyte
//	    POST /v1/chat/completions   (server, no firstbyte.target)
//	    chat llama-3.3-70b          (client, firstbyte.target groq)
//	    ...
func buildBatch(instances map[string][]spanSpec) ptrace.Traces {
	td := ptrace.NewTraces()
	for inst, spans := range instances {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", "firstbyte")
		rs.Resource().Attributes().PutStr("service.instance.id", inst)
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName("github.com/firstbyte-dev/firstbyte")
		for i, sp := range spans {
			s := ss.Spans().AppendEmpty()
			s.SetTraceID(pcommon.TraceID{byte(i + 1)})
			s.SetSpanID(pcommon.SpanID{byte(i + 1)})
			if sp.target == "" {
				s.SetName("POST /v1/chat/completions")
				s.SetKind(ptrace.SpanKindServer)
				continue
			}
			s.SetName("chat " + sp.model)
			s.SetKind(ptrace.SpanKindClient)
			s.Attributes().PutStr(attrTarget, sp.target)
			s.Attributes().PutStr(attrModel, sp.model)
			s.Attributes().PutDouble("gen_ai.response.time_to_first_chunk", 0.1)
		}
	}
	return td
}

func repeat(s spanSpec, n int) []spanSpec {
	out := make([]spanSpec, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// countByKey counts the spans a sink received per "target/model" ("" for
// spans without a target), and checks no empty scope or resource is left.
func countByKey(t *testing.T, sink *consumertest.TracesSink) map[string]int {
	t.Helper()
	got := map[string]int{}
	for _, td := range sink.AllTraces() {
		for _, rs := range td.ResourceSpans().All() {
			if rs.ScopeSpans().Len() == 0 {
				t.Error("a resource with no scope left was passed on")
			}
			for _, ss := range rs.ScopeSpans().All() {
				if ss.Spans().Len() == 0 {
					t.Error("a scope with no span left was passed on")
				}
				for _, s := range ss.Spans().All() {
					tg, _ := s.Attributes().Get(attrTarget)
					m, _ := s.Attributes().Get(attrModel)
					k := ""
					if tg.Str() != "" {
						k = tg.Str() + "/" + m.Str()
					}
					got[k]++
				}
			}
		}
	}
	return got
}

func newTestProcessor(t *testing.T, cfg *Config, now func() time.Time) (processor.Traces, *consumertest.TracesSink) {
	t.Helper()
	sink := new(consumertest.TracesSink)
	p := newRateLimiter(cfg, now)
	proc, err := processorhelper.NewTraces(context.Background(), processortest.NewNopSettings(Type), cfg, sink, p.processTraces,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}))
	if err != nil {
		t.Fatal(err)
	}
	return proc, sink
}

func TestProcessTraces(t *testing.T) {
	groq, openai := spanSpec{"groq", "llama-3.3-70b"}, spanSpec{"openai", "gpt-4o-mini"}
	server := spanSpec{}
	tests := []struct {
		name       string
		cfg        Config
		batches    []map[string][]spanSpec // one a second
		want       map[string]int
		wantOnward int // batches that reached the next consumer
	}{
		{
			name: "each key keeps its rate, however busy the others",
			cfg:  Config{SpansPerSecond: 5, Burst: 5},
			batches: []map[string][]spanSpec{
				{"a": repeat(groq, 100), "b": append(repeat(groq, 100), openai, openai)},
				{"a": repeat(groq, 100), "b": repeat(openai, 3)},
				{"a": repeat(groq, 100)},
			},
			// groq: 5 a second for 3 s; openai: its 2, then 3 more.
			want:       map[string]int{"groq/llama-3.3-70b": 15, "openai/gpt-4o-mini": 5},
			wantOnward: 3,
		},
		{
			name: "the same target with another model is another key",
			cfg:  Config{SpansPerSecond: 1, Burst: 1},
			batches: []map[string][]spanSpec{
				{"a": {groq, groq, {"groq", "llama-3.1-8b"}, {"groq", "llama-3.1-8b"}}},
			},
			want:       map[string]int{"groq/llama-3.3-70b": 1, "groq/llama-3.1-8b": 1},
			wantOnward: 1,
		},
		{
			name: "spans without a key pass by default",
			cfg:  Config{SpansPerSecond: 1, Burst: 1},
			batches: []map[string][]spanSpec{
				{"a": {server, groq, server, groq}},
			},
			want:       map[string]int{"": 2, "groq/llama-3.3-70b": 1},
			wantOnward: 1,
		},
		{
			name: "without_key: drop",
			cfg:  Config{SpansPerSecond: 1, Burst: 1, WithoutKey: WithoutKeyDrop},
			batches: []map[string][]spanSpec{
				{"a": {server, groq, server}, "b": {server}},
				{"b": {server, server}}, // nothing left: not passed on
			},
			want:       map[string]int{"groq/llama-3.3-70b": 1},
			wantOnward: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			proc, sink := newTestProcessor(t, &tt.cfg, c.now)
			for _, b := range tt.batches {
				if err := proc.ConsumeTraces(context.Background(), buildBatch(b)); err != nil {
					t.Fatalf("ConsumeTraces: %v", err)
				}
				c.advance(time.Second)
			}
			got := countByKey(t, sink)
			for k, want := range tt.want {
				if got[k] != want {
					t.Errorf("%q: %d spans passed, want %d (all: %v)", k, got[k], want, got)
				}
			}
			for k := range got {
				if _, ok := tt.want[k]; !ok {
					t.Errorf("%q: %d spans passed, want none", k, got[k])
				}
			}
			if n := len(sink.AllTraces()); n != tt.wantOnward {
				t.Errorf("%d batches passed on, want %d", n, tt.wantOnward)
			}
		})
	}
}

// The factory builds the processor from a config as the collector reads
// it, and refuses a config without a rate.
func TestFactoryAndConfig(t *testing.T) {
	f := NewFactory()
	if f.Type() != Type || f.TracesStability() != component.StabilityLevelDevelopment {
		t.Errorf("factory type %v stability %v", f.Type(), f.TracesStability())
	}
	cfg := f.CreateDefaultConfig().(*Config)
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "spans_per_second") {
		t.Errorf("default config Validate() = %v; want spans_per_second required", err)
	}
	conf := confmap.NewFromStringMap(map[string]any{"spans_per_second": 2.5, "burst": 4, "without_key": "drop"})
	if err := conf.Unmarshal(cfg); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate() = %v", err)
	}
	if cfg.SpansPerSecond != 2.5 || cfg.burst() != 4 || cfg.maxKeys() != DefaultMaxKeys || cfg.WithoutKey != WithoutKeyDrop {
		t.Errorf("config = %+v", cfg)
	}
	if err := confmap.NewFromStringMap(map[string]any{"spans_per_secnd": 1}).Unmarshal(f.CreateDefaultConfig()); err == nil {
		t.Error("an unknown key was accepted")
	}

	sink := new(consumertest.TracesSink)
	proc, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(Type), cfg, sink)
	if err != nil {
		t.Fatalf("CreateTraces: %v", err)
	}
	if !proc.Capabilities().MutatesData {
		t.Error("the processor removes spans in place: it must declare MutatesData")
	}
	if err := proc.ConsumeTraces(context.Background(), buildBatch(map[string][]spanSpec{"a": repeat(spanSpec{"groq", "m"}, 10)})); err != nil {
		t.Fatal(err)
	}
	if got := sink.SpanCount(); got != 4 {
		t.Errorf("10 spans of one key at once with burst 4: %d passed, want 4", got)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		cfg  Config
		want []string
	}{
		{Config{SpansPerSecond: 1}, nil},
		{Config{SpansPerSecond: 0.1, Burst: 1, MaxKeys: 1, WithoutKey: "pass"}, nil},
		{Config{}, []string{"spans_per_second"}},
		{Config{SpansPerSecond: -1, Burst: -1, MaxKeys: -1, WithoutKey: "keep"}, []string{"spans_per_second", "burst", "max_keys", "without_key"}},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		if (err != nil) != (len(tt.want) > 0) {
			t.Errorf("Validate(%+v) = %v, want errors about %v", tt.cfg, err, tt.want)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Validate(%+v) = %v; want it to name %s", tt.cfg, err, w)
			}
		}
	}
	if got := (&Config{SpansPerSecond: 2.5}).burst(); got != 3 {
		t.Errorf("default burst at 2.5/s = %v, want 3", got)
	}
	if got := (&Config{SpansPerSecond: 0.2}).burst(); got != 1 {
		t.Errorf("default burst at 0.2/s = %v, want 1", got)
	}
}
