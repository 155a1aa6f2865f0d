# The verbs a person uses. Everything runs through npm scripts so CI and people run the same thing.
.DEFAULT_GOAL := help
.PHONY: help dev check test fuzz test-cluster test-skaffold test-keda runtime test-runtime tools lint typecheck unit build docs docs-check bench bench-soak image images image-check chart release cluster cluster-down skaffold monitoring keda clean

node_modules/.package-lock.json: package-lock.json
	npm ci
	@touch $@

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

dev: node_modules/.package-lock.json ## Run the whole gateway locally (Redis + every component); Ctrl-C stops it
	npm run dev

check: node_modules/.package-lock.json ## The quick check of this branch's change (against main): type check, lint, and the suites that import a changed file
	npm run check

# Jest workers for `make test` beside the slow suites, which run one at a time (tools/run-tests): the suites mostly
# wait (for blocks, webhooks, processes of their own), so on two cores three at a time keep the CPU busy.
TEST_WORKERS ?= 2

test: node_modules/.package-lock.json tools ## Type-check, lint, then every test but the cluster suites (real Redis, Kubo, Helm, real processes)
	npm run typecheck
	npm run lint
	tools/check-tools redis-server ipfs helm promtool st
	TEST_WORKERS=$(TEST_WORKERS) tools/run-tests

test-cluster: node_modules/.package-lock.json tools ## The chart for real in the local cluster (root; starts it, builds and loads the images, installs the packaged chart from an OCI registry in it)
	tools/install-registry
	tools/install-external-secrets
	npm test -- --selectProjects cluster --runInBand

fuzz: node_modules/.package-lock.json tools ## The api fuzzer with a long budget (FUZZ_EXAMPLES 100 cases per operation, at least FUZZ_MIN_REQUESTS 8000 requests; make test runs 25 and 2000)
	FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-100} FUZZ_MIN_REQUESTS=$${FUZZ_MIN_REQUESTS:-8000} npm test -- --selectProjects slow --testPathPatterns e2e/test/fuzz

tools: ## Build the tools the tests run (Kubo, Helm, promtool; schemathesis from PyPI) into ~/.cache/frequency-gateway, once
	tools/install-kubo
	tools/install-helm
	tools/install-prometheus
	tools/install-schemathesis

typecheck: node_modules/.package-lock.json ## TypeScript, strict, across every package and test
	npm run typecheck

lint: node_modules/.package-lock.json ## ESLint, the import-cycle check (tools/lint/cycles.js) and Prettier
	npm run lint

unit: node_modules/.package-lock.json ## Only the tests (but the cluster suites), without type-checking and lint
	npm test -- --ignoreProjects cluster

build: node_modules/.package-lock.json ## Compile every package to dist/ (what the image runs)
	npm run build

bench: build ## Run the benchmarks on the compiled build (figures with same-run baselines; install-to-Ready and save-to-serving in the local cluster); each writes docs/measurements/<benchmark>.json, then docs/measurements.md is regenerated
	npm run bench --workspaces --if-present
	npm run docs:measurements

bench-soak: ## The long benchmark: the whole gateway for BENCH_SOAK_MINUTES (30) at half its intake saturation on 6-second blocks (memory slopes through 5-minute floors, Redis memory and keys, p99 to finalized)
	npm run bench:soak -w e2e
	npm run docs:measurements

chart: node_modules/.package-lock.json ## Package the chart into dist/charts/ after checking its version policy (chart version = appVersion = package.json's); `helm push` it to an OCI registry
	tools/install-helm
	tools/package-chart

release: node_modules/.package-lock.json ## Release package.json's version: record the chart's digest (charts/released.json), commit, tag v<version> with docs/releases/<version>.md
	tools/release

IMAGE ?= frequency-gateway:dev
image: ## Build the one container image of every component (IMAGE=frequency-gateway:dev) with the project's dockerd (root) or DOCKER_HOST
	dev/images/gateway $(IMAGE)

images: image ## The gateway image and the Redis and Kubo stand-ins, loaded into the local cluster when it is up (root)
	dev/images/standins
	@if [ -S /run/frequency-gateway-cluster/containerd.sock ]; then \
	  dev/images/load $(IMAGE) redis:7.4-alpine ipfs/kubo:v0.43.0; \
	else echo "images: the local cluster is not up; make cluster, then make images, loads them"; fi

cluster: ## Build (once, cached) and start the local one-node Kubernetes (root); dev/cluster/kubectl talks to it
	dev/cluster/build
	dev/cluster/up

cluster-down: ## Stop the local cluster, leaving nothing on the host (state kept; dev/cluster/down --purge forgets it)
	dev/cluster/down

test-skaffold: node_modules/.package-lock.json ## dev/cluster/skaffold dev in the local cluster: deploys, forwards, serves saved source edits through file sync and a manifest edit through a rebuilt image (save-to-serving printed; root)
	tools/install-skaffold
	npm test -- --selectProjects skaffold --runInBand

test-keda: node_modules/.package-lock.json tools ## KEDA scales a worker on its backlog in the local cluster, up and back down (timings printed; root)
	dev/cluster/autoscaling
	npm test -- --selectProjects keda --runInBand

runtime: node_modules/.package-lock.json ## Build the real Frequency runtime's Wasm from source (SOURCE=, default ../shared/reference/frequency-v2.0.1) into the tool cache, once (root for the Rust toolchain)
	dev/runtime/install-toolchain
	npm run build-runtime -w dev/runtime -- $(if $(SOURCE),--source $(SOURCE))

test-runtime: runtime ## Journeys of the gateway against the real runtime under chopsticks, and the devchain compared with it
	npm test -- --selectProjects runtime-journeys --runInBand

skaffold: ## Build skaffold and the Helm 3 it drives into the tool cache, once; then `dev/cluster/skaffold dev`
	tools/install-skaffold

monitoring: ## Prometheus and prometheus-operator in the local cluster, scraping the chart's ServiceMonitors (root)
	dev/cluster/monitoring

keda: ## KEDA (operator and metrics API server, built from its Go module) in the local cluster, for the chart's ScaledObjects (root)
	dev/cluster/autoscaling

image-check: build ## Without Docker: the image's production layout (npm ci --omit=dev, dist/) starts every component
	tools/image-smoke

docs: node_modules/.package-lock.json ## Regenerate docs/configuration.md, the chart's values table and docs/measurements.md
	npm run docs:config
	npm run docs:chart
	npm run docs:measurements

docs-check: node_modules/.package-lock.json ## Check the Markdown: README budgets, links, paths in code, make targets and npm scripts it names
	npm test -- --selectProjects tools --testPathPatterns docsCheck

clean: ## Remove build output and local dev state
	rm -rf shared/*/dist services/*/dist dev/*/dist .dev
	find . -name '*.tsbuildinfo' -not -path './node_modules/*' -delete
