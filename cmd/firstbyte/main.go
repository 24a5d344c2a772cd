// Command firstbyte is the gateway binary. main only wires packages
// together: router (the request path), collector (spans into the tracker
// and metrics), telemetry (the OTel SDK), router/config (the schema),
// internal/sim (simulated providers) and cmd/internal/study (the routing study).
package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
)

// Set by -ldflags at release time; "dev" otherwise.
var (
	version = "dev"
	commit  = ""
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

const usage = `firstbyte: an LLM gateway that routes each request to the provider answering fastest.

Usage:
  firstbyte serve [-config FILE]   run the gateway (default firstbyte.yaml; env FIRSTBYTE_CONFIG)
  firstbyte check -config FILE     validate a config; exit 1 listing every error
  firstbyte demo [-duration D]     simulated providers, the gateway and live traffic in one process
  firstbyte sim -config FILE       simulated OpenAI- and Anthropic-compatible providers
  firstbyte study [-out DIR] [-seed N] [-scenarios LIST] [-modes LIST] [-duration D]
                                   the routing-quality study: every mode through failure scenarios, deterministic
  firstbyte health [-url URL] [-live] [-config FILE]
                                   exit 0 when the admin /readyz (-live: /health) answers 200, else 1;
                                   a container health check with no curl (default URL from admin.listen)
  firstbyte version                version, commit, Go version
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return cmdServe(args[1:], stdout, stderr)
	case "check":
		return cmdCheck(args[1:], stdout, stderr)
	case "demo":
		return cmdDemo(args[1:], stdout, stderr)
	case "sim":
		return cmdSim(args[1:], stdout, stderr)
	case "study":
		return cmdStudy(args[1:], stdout, stderr)
	case "health":
		return cmdHealth(args[1:], stdout, stderr)
	case "version", "-version", "--version":
		fmt.Fprintf(stdout, "firstbyte %s (commit %s, %s)\n", version, buildCommit(), runtime.Version())
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "firstbyte: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}

func buildCommit() string {
	if commit != "" {
		return commit
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}
