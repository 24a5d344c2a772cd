// Package deploy holds no code: it is the home of deploy/'s tests.
//
// deploy/ is the container route to firstbyte: a multi-stage Dockerfile
// (the gateway and the collector of collector/otelcol, static, non-root,
// on distroless), compose.yaml, the whole stack on one machine (two
// gateway replicas with simulated providers, the OpenTelemetry Collector
// fanning spans out to both, Prometheus, Grafana with the dashboard, and
// Jaeger), with the configuration files they mount, and the Helm chart
// helm/firstbyte (with helm/tools, the nested module helm is built from).
//
// Docker is not available where the tests run, so the tests check every
// file the stack uses with that file's own tool where one exists (the
// gateway's `check` and the simulator's parser, the collector's
// `validate`, `promtool check config`; build tag integration, with the
// built binaries), and parse compose.yaml and the Dockerfile to check that
// every file they reference exists, every command is one the binaries
// have, and every address a service talks to is one the service it names
// listens on. The Helm chart goes through the real helm (lint, template),
// its objects parsed, its gateway config through the real `firstbyte
// check` and `serve`, its collector config through the real collector's
// `validate`.
//
// What it must not do: hold code the gateway could import, or anything
// that needs Docker or a Kubernetes cluster to be checked.
package deploy
