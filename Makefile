# firstbyte — the two commands a newcomer runs are `make demo` and `make test`.
GO        ?= go
BIN       := bin
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS   := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
DEMO_DURATION ?= 2m
ROUTING_E2E_FLAGS ?= -rounds 1

.PHONY: build test test-unit test-integration test-clients demo bench routing-e2e lint otelcol clean

build: ## the gateway binary
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/firstbyte ./cmd/firstbyte

otelcol: ## the OpenTelemetry Collector built from collector modules (nested module)
	cd collector/otelcol && $(GO) build -trimpath -o ../../$(BIN)/firstbyte-otelcol .

demo: ## simulated providers, the gateway and live traffic; stops after DEMO_DURATION or Ctrl-C
	$(GO) run ./cmd/firstbyte demo -duration $(DEMO_DURATION)

test: lint test-unit test-integration test-clients ## everything CI runs

test-unit: ## unit and end-to-end tests of the gateway module, race detector on
	$(GO) test -race -count=1 ./...

test-integration: build otelcol ## the real binary against a real Prometheus and a real OTel Collector
	cd collector/otelcol && $(GO) test -count=1 ./...
	FIRSTBYTE_BIN=$(CURDIR)/$(BIN)/firstbyte OTELCOL_BIN=$(CURDIR)/$(BIN)/firstbyte-otelcol \
		$(GO) test -count=1 -tags integration ./dashboards/ ./cmd/firstbyte/

test-clients: build ## the official OpenAI (Go, Node) and Anthropic (Node) SDKs against the real binary
	cd examples/clients/node && npm ci --no-audit --no-fund
	cd examples/clients/go && FIRSTBYTE_BIN=$(CURDIR)/$(BIN)/firstbyte $(GO) test -count=1 ./...

bench: build ## micro-benchmarks and the side-by-side load comparison (figures: docs/benchmarks.md)
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./router/ ./collector/ ./telemetry/
	$(GO) run ./cmd/firstbyte-loadtest -gateway $(BIN)/firstbyte

routing-e2e: build ## routing quality through the real binary: every scenario, mode and the oracle (~7 min a round; figures: docs/routing-e2e.md)
	$(GO) run ./cmd/firstbyte-loadtest -routing -gateway $(BIN)/firstbyte $(ROUTING_E2E_FLAGS)

lint: ## gofmt and go vet, both modules
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo 'gofmt: files above need formatting'; exit 1; }
	$(GO) vet ./...
	$(GO) vet -tags integration ./cmd/firstbyte/ ./dashboards/
	cd collector/otelcol && $(GO) vet ./...
	cd examples/clients/go && $(GO) vet ./...

clean:
	rm -rf $(BIN)
