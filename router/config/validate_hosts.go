package config

import (
	"crypto/x509"
	"fmt"
	"maps"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
)

// The host fields of a provider: what each kind needs to be reached, and
// that no field is written on a kind that does not read it.

// servedAPIs are, per kind, the calls the request path serves today. A
// provider whose upstream models would go through another one is refused,
// so serve never sends a host's request in the wrong format.
var servedAPIs = map[string][]string{
	KindOpenAI:    {APIOpenAI},
	KindAnthropic: {APIAnthropic},
	KindAzure:     {APIOpenAI},
	KindBedrock:   {APIInvoke, APIConverse},
	KindVertex:    {APIInvoke, APIGemini, APIOpenAI},
	KindGemini:    {APIGemini},
}

// azureDate is a dated Azure OpenAI api-version: 2024-10-21,
// 2025-04-01-preview.
var azureDate = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}(-preview)?$`)

// headerName is an HTTP field name (RFC 9110 token).
var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// hostOnlyKinds say which kinds read each host field; written elsewhere it
// is refused (it would be silently ignored).
var hostOnlyKinds = []struct {
	field string
	kinds []string
	set   func(*Provider) bool
}{
	{"region", []string{KindBedrock, KindVertex}, func(p *Provider) bool { return p.Region != "" }},
	{"project", []string{KindVertex}, func(p *Provider) bool { return p.Project != "" }},
	{"api_version", []string{KindAzure}, func(p *Provider) bool { return p.APIVersion != "" }},
	{"credentials", []string{KindVertex}, func(p *Provider) bool { return p.Credentials != "" }},
	{"profile", []string{KindBedrock}, func(p *Provider) bool { return p.Profile != "" }},
	{"api", []string{KindBedrock, KindVertex}, func(p *Provider) bool { return p.API != "" }},
}

func (v *validation) host(name string, p *Provider) {
	path := "providers." + name
	if !slices.Contains(kinds, p.Kind) {
		return // reported as an unknown kind
	}
	for _, f := range hostOnlyKinds {
		if f.set(p) && !slices.Contains(f.kinds, p.Kind) {
			v.add(path+"."+f.field, "not read by kind %s (only by %s)", p.Kind, strings.Join(f.kinds, " and "))
		}
	}
	switch p.Kind {
	case KindBedrock:
		v.region(path, p, "the AWS region (e.g. us-west-2): it names the host and signs each request")
	case KindVertex:
		v.region(path, p, "the Vertex AI location: global, us, eu or a region such as us-east5")
		if p.Project == "" {
			v.add(path+".project", "required: the Google Cloud project id")
		}
		if p.Credentials != "" {
			if _, err := os.Stat(p.Credentials); err != nil {
				v.add(path+".credentials", "cannot read %s: %v", quoteName(p.Credentials), pathErr(err))
			}
		}
	case KindGemini:
		if p.APIKey == "" {
			v.add(path+".api_key", "required: the Gemini API key (Google AI Studio), sent as x-goog-api-key")
		}
	case KindAzure:
		if p.APIVersion != AzureAPIV1 && !azureDate.MatchString(p.APIVersion) {
			v.add(path+".api_version", "%s is neither v1 nor a dated version such as 2024-10-21", quoteName(p.APIVersion))
		}
		if u, err := url.Parse(p.BaseURL); err == nil && strings.Contains(u.Path, "/openai") {
			v.add(path+".base_url", "is the resource endpoint (https://NAME.openai.azure.com), without /openai/...: the deployment is the upstream model (model_map value)")
		}
	}
	if p.API != "" && apisByKind[p.Kind] != nil && !slices.Contains(apisByKind[p.Kind], p.API) {
		v.add(path+".api", "%s", unknownValue("api", p.API, apisByKind[p.Kind]))
	}
	v.hostTransport(path, p)
	v.notAppliedYet(path, p)
}

// notAppliedYet refuses the transport settings the request path does not
// apply yet: accepting them would silently send requests without them.
func (v *validation) notAppliedYet(path string, p *Provider) {
}

// region checks a bedrock or vertex provider's region.
func (v *validation) region(path string, p *Provider, what string) {
	switch {
	case p.Region == "":
		v.add(path+".region", "required: %s", what)
	case !validRegion(p.Region):
		v.add(path+".region", "%s is not a region name (lower-case letters, digits and dashes)", quoteName(p.Region))
	}
}

// hostTransport checks what every kind takes: headers, query, tls, http2.
func (v *validation) hostTransport(path string, p *Provider) {
	for _, k := range slices.Sorted(maps.Keys(p.Headers)) {
		switch {
		case !headerName.MatchString(k):
			v.add(path+".headers", "%s is not an HTTP header name", quoteName(k))
		case slices.Contains([]string{"host", "content-length", "transfer-encoding", "connection"}, strings.ToLower(k)):
			v.add(path+".headers."+k, "is set by the gateway for each request; it cannot be configured")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.Query)) {
		if strings.TrimSpace(k) == "" {
			v.add(path+".query", "empty parameter name")
		}
	}
	if !slices.Contains(http2Modes, p.HTTP2) {
		v.add(path+".http2", "%s", unknownValue("http2 setting", p.HTTP2, http2Modes))
	} else if p.HTTP2 == HTTP2PriorKnowledge && strings.HasPrefix(p.BaseURL, "https:") {
		v.add(path+".http2", "prior_knowledge is unencrypted HTTP/2 (h2c), but base_url is https: leave it out (auto negotiates HTTP/2 over TLS)")
	}
	if f := p.TLS.CAFile; f != "" {
		pem, err := os.ReadFile(f)
		switch {
		case err != nil:
			v.add(path+".tls.ca_file", "cannot read %s: %v", quoteName(f), pathErr(err))
		case !x509.NewCertPool().AppendCertsFromPEM(pem):
			v.add(path+".tls.ca_file", "%s holds no PEM certificate", quoteName(f))
		}
	}
}

// pathErr is err without the path an *os.PathError repeats.
func pathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// hostRoutes checks, per target, that each upstream model can go where its
// provider's host would send it: a bedrock model routed to invoke is an
// Anthropic one, and the call is one the request path serves.
func (v *validation) hostRoutes() {
	c := v.c
	unserved := map[string]map[string]bool{} // provider → calls not served
	apis := map[string]map[string]bool{}     // provider → calls its models go through
	for i, t := range c.Targets {
		p := c.Providers[t.VirtualKey]
		if p == nil || !slices.Contains(kinds, p.Kind) {
			continue
		}
		for _, client := range slices.Sorted(maps.Keys(t.Routes(p))) {
			up := t.Routes(p)[client]
			api := p.APIFor(up)
			if p.Kind == KindBedrock && api == APIInvoke && !strings.Contains(up, "anthropic.") {
				v.add(routePath(i, t, p, client, "providers."+t.VirtualKey),
					"%s is not an Anthropic model (its id has no \"anthropic.\"): bedrock's invoke call is served only for Anthropic models; leave api out to send it through converse", quoteName(up))
			}
			if apis[t.VirtualKey] == nil {
				apis[t.VirtualKey] = map[string]bool{}
			}
			apis[t.VirtualKey][api] = true
			if !slices.Contains(servedAPIs[p.Kind], api) && (p.API == "" || slices.Contains(apisByKind[p.Kind], p.API)) {
				if unserved[t.VirtualKey] == nil {
					unserved[t.VirtualKey] = map[string]bool{}
				}
				unserved[t.VirtualKey][api] = true
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(apis)) {
		if len(apis[name]) > 1 && len(unserved[name]) == 0 {
			calls := slices.Sorted(maps.Keys(apis[name]))
			v.add("providers."+name+".kind", "its models go through %s and %s: one provider serves one of them here; put the models of each on a provider of its own",
				strings.Join(calls[:len(calls)-1], ", "), calls[len(calls)-1])
		}
	}
	for _, name := range slices.Sorted(maps.Keys(unserved)) {
		p := c.Providers[name]
		field := "providers." + name + ".kind"
		if p.API != "" {
			field = "providers." + name + ".api"
		}
		for _, api := range slices.Sorted(maps.Keys(unserved[name])) {
			v.add(field, "%s", notServed(p.Kind, api))
		}
	}
}

// notServed says a kind's call is not served yet.
func notServed(kind, api string) string {
	if len(apisByKind[kind]) == 0 {
		return fmt.Sprintf("%s providers are not served yet", kind)
	}
	return fmt.Sprintf("%s models with api %s are not served yet", kind, api)
}

// routePath is where target i's route for client model is written: its
// model_map entry, or its provider's models list.
func routePath(i int, t Target, p *Provider, client, provider string) string {
	if _, ok := t.ModelMap[client]; ok {
		return fmt.Sprintf("targets[%d].model_map.%s", i, client)
	}
	if j := slices.Index(p.Models, client); j >= 0 {
		return fmt.Sprintf("%s.models[%d]", provider, j)
	}
	return fmt.Sprintf("targets[%d]", i)
}

// ProviderAPI is the call provider name's upstream models go through (one
// per provider: Validate refuses a provider whose models need two), or ""
// when no target uses it.
func (c *Config) ProviderAPI(name string) string {
	p := c.Providers[name]
	if p == nil {
		return ""
	}
	if p.API != "" {
		return p.API
	}
	for _, t := range c.Targets {
		if t.VirtualKey != name {
			continue
		}
		for _, up := range t.Routes(p) {
			return p.APIFor(up)
		}
	}
	return p.APIFor("")
}
