package config

// HTTP/2 settings (http2).
const (
	HTTP2Auto           = "auto"
	HTTP2PriorKnowledge = "prior_knowledge"
	HTTP2Off            = "off"
)

var http2Modes = []string{HTTP2Auto, HTTP2PriorKnowledge, HTTP2Off}

// TLS is what an upstream's certificate is checked against.
type TLS struct {
	// CAFile is a PEM file of CA certificates trusted beside the system
	// pool (a private endpoint's, or a test upstream's). Empty: the system
	// pool only.
	CAFile string `yaml:"ca_file"`
}
