# firstbyte — the two commands a newcomer runs are `make demo` and `make test`.
GO        ?= go
BIN       := bin
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS   := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
DEMO_DURATION ?= 2m
DEMO_FLAGS    ?=
ROUTING_E2E_FLAGS ?= -rounds 1

.PHONY: build test test-unit test-integration test-clients demo bench lint otelcol clean
.PHONY: test-deploy test-fuzz fuzz soak study routing-e2e helm fleetbench bench-compare

build: ## the gateway binary
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/firstbyte ./cmd/firstbyte

otelcol: ## the OpenTelemetry Collector built from collector modules (nested module)
	cd collector/otelcol && $(GO) build -trimpath -o ../../$(BIN)/firstbyte-otelcol .

# helm, built from its Go module: the nested module deploy/helm/tools pins
# the version (a `tool` directive), so the gateway's go.mod stays lean. The
# ldflags are helm's own release build's: its version, and the Kubernetes
# version it assumes (from the client-go it is built with), which
# `helm template` and `helm lint` check a chart's kubeVersion against.
HELM       := $(BIN)/helm
HELM_TOOLS := deploy/helm/tools
helm: $(HELM) ## helm (for the chart's tests), built from deploy/helm/tools
$(HELM): $(HELM_TOOLS)/go.mod $(HELM_TOOLS)/go.sum
	cd $(HELM_TOOLS) && helm=$$($(GO) list -m -f '{{.Version}}' helm.sh/helm/v3) && \
	k8s=$$($(GO) list -m -f '{{.Version}}' k8s.io/client-go) && k8s=$${k8s#v} && \
	major=$$(( $${k8s%%.*} + 1 )) && minor=$$(echo $$k8s | cut -d. -f2) && \
	$(GO) build -trimpath -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$$helm \
		-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=$$major -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$$minor \
		-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=$$major -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$$minor" \
		-o $(CURDIR)/$(HELM) helm.sh/helm/v3/cmd/helm

demo: build ## simulated providers, the gateway and live traffic; stops 10 s after its story (DEMO_FLAGS=-stay: after DEMO_DURATION) or Ctrl-C
	$(BIN)/firstbyte demo -duration $(DEMO_DURATION) $(DEMO_FLAGS)

test: lint test-unit test-integration test-clients ## everything CI runs
test: test-deploy test-fuzz

# The second line runs without the race detector what only costs more under
# it: the attempt property's 10,000 random sequences (1,500 under -race), and
# the routing study's goals and reproducibility, deterministic runs on
# virtual clocks that cost five times as much under the detector (under
# -race the study runs every scenario briefly, two runs at a time).
test-unit: ## unit and end-to-end tests of the gateway module, race detector on
	$(GO) test -race -count=1 ./...
	$(GO) test -count=1 -run '^(TestAttemptIntegrityProperty|TestStudyGoals|TestStudyIsReproducibleFromItsSeed)$$' ./router/ ./cmd/internal/study/

# -parallel 8: the parallel tests of cmd/firstbyte mostly wait on child
# processes, and go test's default (GOMAXPROCS, 2 here) ran them two at a
# time; those that measure time keep clear of the heavy ones themselves
# (harness_integration_test.go), and those that measure latency under load
# are not parallel.
test-integration: build otelcol ## the real binary against a real Prometheus, a real OTel Collector and a traced Node application
	cd collector/otelcol && $(GO) test -count=1 ./...
	cd examples/clients/node-fleet && npm ci --no-audit --no-fund
	FIRSTBYTE_BIN=$(CURDIR)/$(BIN)/firstbyte OTELCOL_BIN=$(CURDIR)/$(BIN)/firstbyte-otelcol \
		$(GO) test -count=1 -tags integration -parallel 8 ./dashboards/ ./cmd/firstbyte/

test-deploy: build otelcol helm ## deploy/: every file of the compose stack and the Helm chart through its own tool (Docker and a cluster not needed)
	FIRSTBYTE_BIN=$(CURDIR)/$(BIN)/firstbyte OTELCOL_BIN=$(CURDIR)/$(BIN)/firstbyte-otelcol HELM_BIN=$(CURDIR)/$(HELM) \
		$(GO) test -count=1 -tags integration ./deploy/

test-clients: build ## the official OpenAI (Go, Node) and Anthropic (Node) SDKs against the real binary
	cd examples/clients/node && npm ci --no-audit --no-fund
	cd examples/clients/go && FIRSTBYTE_BIN=$(CURDIR)/$(BIN)/firstbyte $(GO) test -count=1 ./...

# Fuzz targets, each for FUZZTIME (make test: a second each, a worker per
# core, their seed corpora also run as tests in test-unit; make fuzz:
# minutes). A failing input is written under the package's testdata/fuzz.
FUZZTIME ?= 1s
FUZZ_TARGETS := ./router/upstream/:FuzzEventStreamReader ./router/upstream/:FuzzRateSignal ./router/:FuzzAttemptIntegrity ./router/reqbody/:FuzzScanRequest ./router/conn/:FuzzFramingScan ./router/config/:FuzzParseConfig ./router/:FuzzStreamRelay ./collector/:FuzzIngest ./collector/:FuzzPrefilter \
	./router/translate/:FuzzMessagesToChatStream ./router/translate/:FuzzChatToMessagesStream ./router/translate/:FuzzChatToResponsesStream ./router/translate/:FuzzMessagesToResponsesStream ./router/internal/jsonscan/:FuzzValid ./router/internal/jsonscan/:FuzzStrings \
	./router/translate/:FuzzUsageFilters ./router/translate/:FuzzChatToMessages ./router/translate/:FuzzMessagesToChat ./router/translate/:FuzzResponsesRequest ./router/translate/:FuzzResponsesAndErrors \
	./router/translate/:FuzzDecodeRequest ./router/translate/:FuzzModelAnswers ./router/translate/:FuzzModelStreams ./router/translate/:FuzzAnthropicSchema ./router/translate/:FuzzFitForAnthropic ./router/upstream/:FuzzChunkBytes
FUZZ_PACKAGES := $(sort $(foreach t,$(FUZZ_TARGETS),$(firstword $(subst :, ,$(t)))))
# Each package's instrumented test binary is built once (`go test -c -fuzz`)
# and runs its targets one after another, as `go test -fuzz` would: from the
# package's directory (its testdata/fuzz corpus) with the go command's fuzz
# cache (GOCACHE/fuzz/<import path>). A target that fails with a failing
# input written (a real finding) fails the run at once, its output shown.
# One that fails without writing an input is the fuzzing engine itself (a
# worker lost on a busy machine): its output is shown and it is run once more.
test-fuzz: ## every fuzz target for FUZZTIME
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; log=$$tmp/log; cache=$$($(GO) env GOCACHE)/fuzz; \
	for pkg in $(FUZZ_PACKAGES); do \
		bin=$$tmp/$$(echo $$pkg | tr -c 'a-z0-9\n' _).test; \
		$(GO) test -c -fuzz . -o $$bin $$pkg; \
		dir=$$cache/$$($(GO) list $$pkg); \
		for t in $(FUZZ_TARGETS); do \
			[ "$${t%%:*}" = "$$pkg" ] || continue; name=$${t#*:}; \
			echo "fuzz $$name ($$pkg, $(FUZZTIME))"; \
			run() { (cd $$pkg && $$bin -test.run '^$$' -test.fuzz "^$$name$$" -test.fuzztime $(FUZZTIME) \
				-test.fuzzcachedir $$dir -test.timeout 10m -test.paniconexit0) >$$log 2>&1; }; \
			if ! run; then \
				tail -40 $$log; \
				if grep -q 'Failing input written' $$log; then exit 1; fi; \
				echo "fuzz $$name: the engine failed without a failing input; once more"; \
				run || { tail -40 $$log; exit 1; }; \
			fi; \
		done; \
	done

fuzz: ## the fuzz targets for longer (FUZZTIME=2m each by default here)
	$(MAKE) test-fuzz FUZZTIME=$(or $(FUZZ_LONG),2m)

soak: build ## the chaos soak through the real binary for SOAK_DURATION (figures: docs/reliability.md)
	FIRSTBYTE_BIN=$(CURDIR)/$(BIN)/firstbyte FIRSTBYTE_SOAK_DURATION=$(or $(SOAK_DURATION),4m) \
		$(GO) test -count=1 -tags integration -timeout 30m -run '^TestChaosSoak$$' -v ./cmd/firstbyte/ | grep -v 'level='

bench: build ## micro-benchmarks and the side-by-side load comparison (figures: docs/benchmarks.md)
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./router/ ./router/mode/ ./router/translate/ ./router/upstream/ ./collector/ ./telemetry/
	$(GO) run ./cmd/firstbyte-loadtest -gateway $(BIN)/firstbyte

# The regression guard: the working tree's gateway against REF's (any
# commit, built in a temporary worktree) and the bare proxy, interleaved in
# one sitting, ROUNDS rounds; prints each ratio's median and spread. Run it
# before every change that may move the request path (docs/benchmarks.md).
bench-compare: build ## the working tree against REF=<commit> and the bare proxy, interleaved (~3 min; figures: docs/benchmarks.md)
	@test -n "$(REF)" || { echo 'usage: make bench-compare REF=<commit> [ROUNDS=5]'; exit 2; }
	@set -e; ref=$$(git rev-parse --short "$(REF)^{commit}"); dir=$$(mktemp -d /tmp/firstbyte-ref-XXXXXX); \
	trap 'git worktree remove --force '"$$dir"' >/dev/null 2>&1; rm -rf '"$$dir" EXIT; \
	git worktree add --detach "$$dir" "$$ref" >/dev/null 2>&1; \
	echo "building $$ref in $$dir"; \
	(cd "$$dir" && $(GO) build -trimpath -ldflags "-s -w -X main.version=ref -X main.commit=$$ref" -o $(CURDIR)/$(BIN)/firstbyte-ref ./cmd/firstbyte); \
	$(GO) run ./cmd/firstbyte-loadtest -compare -gateway $(BIN)/firstbyte -ref $(BIN)/firstbyte-ref -rounds $(or $(ROUNDS),5)

fleetbench: build otelcol ## the fleet figures (docs/fleet.md, "Beyond one collector"): p50 freshness at 1 in N, the collector's CPU per fanned-out span (~8 min)
	$(GO) run ./cmd/firstbyte-fleetbench p50
	$(GO) run ./cmd/firstbyte-fleetbench fanout -gateway $(BIN)/firstbyte -otelcol $(BIN)/firstbyte-otelcol \
		-rate 2000 -endpoints 2,4,8 -kind both -limit 10 -repeat 3

study: ## the routing-quality study: every mode through failure scenarios on a virtual clock (results: docs/routing-study.md)
	$(GO) run ./cmd/firstbyte study -out docs/study -markdown docs/routing-study.md

routing-e2e: build otelcol ## routing quality through the real binary: every scenario, mode and the oracle (~21 min a round; figures: docs/routing-e2e.md)
	$(GO) run ./cmd/firstbyte-loadtest -routing -gateway $(BIN)/firstbyte -otelcol $(BIN)/firstbyte-otelcol $(ROUTING_E2E_FLAGS)

lint: ## gofmt and go vet of every module (the helm tools module has no code: its go.mod is checked tidy)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo 'gofmt: files above need formatting'; exit 1; }
	$(GO) vet ./...
	$(GO) vet -tags integration ./cmd/firstbyte/ ./dashboards/
	$(GO) vet -tags integration ./deploy/
	cd collector/otelcol && $(GO) vet ./...
	cd $(HELM_TOOLS) && $(GO) mod tidy -diff
	cd examples/clients/go && $(GO) vet ./...

clean:
	rm -rf $(BIN)
