package sim

import (
	"reflect"
	"strings"
	"testing"
)

// TestParseConfigHosts: a config file's provider speaks a cloud host with
// host:, its credentials as the Go API takes them; an unknown kind names
// its field.
func TestParseConfigHosts(t *testing.T) {
	t.Parallel()
	cfg, err := ParseConfig([]byte(`
providers:
  - name: az
    host: {kind: azure, api_key: az-key-1}
  - name: br
    host:
      kind: bedrock
      region: us-west-2
      api_key: br-key-1
      aws_keys: [{access_key_id: AKIDEXAMPLE, secret_access_key: secret-1}]
      exception: {type: modelStreamErrorException, after_events: 3}
  - name: vx
    host: {kind: vertex}
  - name: gm
    host: {kind: gemini, api_key: gm-key-1}
  - name: plain
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []*Host{
		{Kind: HostAzure, APIKey: "az-key-1"},
		{Kind: HostBedrock, APIKey: "br-key-1", Region: "us-west-2", AWSKeys: []AWSKey{{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret-1"}},
			Exception: &StreamException{Type: "modelStreamErrorException", AfterEvents: 3}},
		{Kind: HostVertex},
		{Kind: HostGemini, APIKey: "gm-key-1"},
		nil,
	}
	for i, p := range cfg.Providers {
		if !reflect.DeepEqual(p.Host, want[i]) {
			t.Errorf("providers[%d].host = %+v, want %+v", i, p.Host, want[i])
		}
	}
	if _, err := ParseConfig([]byte("providers:\n  - name: g\n    host: {kind: grok}\n")); err == nil || !strings.Contains(err.Error(), "providers[0].host.kind") {
		t.Errorf("host kind grok: %v, want an error naming providers[0].host.kind", err)
	}
	for text, field := range map[string]string{
		"{kind: azure, exception: {type: x}}":                     "providers[0].host.exception",
		"{kind: bedrock, exception: {after_events: 1}}":           "providers[0].host.exception.type",
		"{kind: bedrock, exception: {type: x, after_events: -1}}": "providers[0].host.exception.after_events",
	} {
		if _, err := ParseConfig([]byte("providers:\n  - name: g\n    host: " + text + "\n")); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("host %s: %v, want an error naming %s", text, err, field)
		}
	}
}
