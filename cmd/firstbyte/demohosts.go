package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The demo's second pool: one model, three hosts. The same Claude model is
// bought from Anthropic, AWS Bedrock and Google Vertex AI, each simulated
// speaking its host's API with its credential (Bedrock an API key as a
// Bearer; Vertex OAuth tokens from the sim's token endpoint, got with a
// service-account file the demo writes), at steady, different speeds.
// The story is told on the first pool; this one shows a host is a target
// like any other, which least-latency ranks by what it measures.
const demoHostsModel = "claude-sonnet-4-5"

// demoHostsTitle heads the pool's rows in the table.
const demoHostsTitle = demoHostsModel + ": one model, three hosts (Anthropic, AWS Bedrock, Google Vertex AI)"

// demoHostsSimConfig are the pool's providers, in the demo's sim config.
// The Bedrock key is the sim's own, not a secret.
const demoHostsSimConfig = `
  - name: anthropic-sim
    ttfb: {median: 450ms, spread: 0.2}
    stream: {chunks: 8, interval: 10ms}
  - name: bedrock-sim
    ttfb: {median: 250ms, spread: 0.2}
    stream: {chunks: 8, interval: 10ms}
    host: {kind: bedrock, region: us-west-2, api_key: demo-bedrock-not-a-secret}
  - name: vertex-sim
    ttfb: {median: 650ms, spread: 0.2}
    stream: {chunks: 8, interval: 10ms}
    host: {kind: vertex}
`

// demoHostsProviders are the pool's gateway providers (YAML lines), the
// sims at urls (".../v1"); vertexCredentials is the service-account file
// whose token_uri is the Vertex sim's.
func demoHostsProviders(urls map[string]string, vertexCredentials string) string {
	host := func(name string) string { return strings.TrimSuffix(urls[name], "/v1") }
	return fmt.Sprintf(`  anthropic-sim: {kind: anthropic, base_url: %q, api_key: demo-not-a-secret, timeout: {first_byte: 2s}}
  bedrock-sim:   {kind: bedrock, region: us-west-2, base_url: %q, api_key: demo-bedrock-not-a-secret, timeout: {first_byte: 2s}}
  vertex-sim:    {kind: vertex, project: demo, region: us-east5, base_url: %q, credentials: %q, timeout: {first_byte: 2s}}
`, urls["anthropic-sim"], host("bedrock-sim"), host("vertex-sim"), vertexCredentials)
}

// demoHostsTargets are the pool's targets, each host naming the model its way.
const demoHostsTargets = `  - {virtual_key: anthropic-sim, model_map: {` + demoHostsModel + `: claude-sonnet-4-5-20250929}}
  - {virtual_key: bedrock-sim,   model_map: {` + demoHostsModel + `: "us.anthropic.claude-sonnet-4-5-20250929-v1:0"}}
  - {virtual_key: vertex-sim,    model_map: {` + demoHostsModel + `: "claude-sonnet-4-5@20250929"}}
`

// writeDemoServiceAccount writes, in dir, a Google service-account file
// with a fresh key whose token_uri is tokenURI (the Vertex sim trusts any
// assertion), and returns its path.
func writeDemoServiceAccount(dir, tokenURI string) (string, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", err
	}
	sa, err := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "demo", "private_key_id": "demo-1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "firstbyte-demo@demo.iam.gserviceaccount.com", "client_id": "1", "token_uri": tokenURI,
	})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "vertex-sim-service-account.json")
	return path, os.WriteFile(path, sa, 0o600)
}
