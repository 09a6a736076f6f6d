# queuewatch — common tasks. `make test` is what CI runs (.ci/run).
GO      ?= go
PKGS    ?= ./...
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

.PHONY: demo elasticmq build test test-helm test-short test-kafka-quorum bench bench-kminion bench-rabbitmq lint fmt generate check-generated docs

demo: ## run the zero-config demo: embedded Kafka + simulated services, UI on :8080
	$(GO) run ./cmd/queuewatch demo

# ElasticMQ's jars come from Maven Central (mvn) into .cache/, as for the tests;
# the node address is what the queue URLs it hands out name.
ELASTICMQ_PORT ?= 9324
elasticmq: ## run ElasticMQ (a local SQS) on 127.0.0.1:9324 for `make demo`'s SQS queues; needs java and mvn; Ctrl-C stops it
	internal/testenv/elasticmq-install.sh
	java -Xmx256m -Drest-sqs.bind-hostname=127.0.0.1 -Drest-sqs.bind-port=$(ELASTICMQ_PORT) \
		-Dnode-address.host=127.0.0.1 -Dnode-address.port=$(ELASTICMQ_PORT) \
		-Daws.region=us-east-1 -Daws.accountId=000000000000 \
		-cp '.cache/elasticmq-1.7.1/*' org.elasticmq.server.Main

build: ## build bin/queuewatch
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o bin/queuewatch ./cmd/queuewatch

test: check-generated ## the full suite: every test against the real parts, with -race
	$(GO) test -race -count=1 -timeout 15m $(PKGS)
	$(MAKE) test-helm

# The chart's tests are a module of their own (deploy/helm/go.mod), so that
# Helm's SDK and the Kubernetes types stay out of queuewatch's go.mod; ./...
# does not reach into it.
test-helm: ## render, lint and validate the Helm chart offline (Helm's Go SDK)
	cd deploy/helm && $(GO) test -race -count=1 ./...

test-short: ## the inner loop: every package without -race, skipping browsers, extra broker nodes and long fault runs
	$(GO) test -short -count=1 $(PKGS)

test-kafka-quorum: ## failover on a three-node Apache Kafka cluster: three more JVMs, so not part of make test
	QUEUEWATCH_KAFKA_QUORUM=1 $(GO) test -race -count=1 -timeout 15m -run '^TestQuorum$$' -v ./collectors/kafka/realkafka/

bench: ## benchmarks behind the performance numbers in docs/performance.md
	$(GO) test -run '^$$' -bench . -benchmem -timeout 30m ./collectors/... ./alerts/... ./web/...

fmt: ## format the tree as the lint gate wants it (gofmt + gofumpt)
	$(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0 fmt ./...

lint: ## golangci-lint, pinned: `go run pkg@version` fetches and builds it once (no go.mod entry, no install step)
	$(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0 run ./...
	cd deploy/helm && $(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0 run ./...

generate: ## regenerate templ components, the rule file and dashboards (and the Helm chart's copies of them)
	$(GO) tool templ generate -path web/components
	QUEUEWATCH_UPDATE_GOLDEN=1 $(GO) test -count=1 -run 'Golden' ./alerts/... ./grafana/... ./collectors/ >/dev/null
	cd deploy/helm && QUEUEWATCH_UPDATE_GOLDEN=1 $(GO) test -count=1 -run 'Golden' . >/dev/null

check-generated: ## fail when generated files are stale
	$(GO) tool templ generate -path web/components >/dev/null 2>&1
	git diff --exit-code -- web/components || (echo "templ output is stale: run make generate and commit" && exit 1)

bench-rabbitmq: ## queuewatch's RabbitMQ poll side by side with a rabbitmq_prometheus scrape on 10,000 queues in one vhost of the local broker (created, then deleted)
	$(GO) run ./internal/bench/rabbitmq

bench-kminion: ## queuewatch side by side with kminion (.cache/bin/kminion, when installed) on one seeded kfake cluster; LARGE=1 for 100k group-partitions
	$(GO) run ./internal/bench/kminion $(if $(LARGE),-large)

# The documentation site: MkDocs Material, pinned, in a venv of its own under
# .cache/ (made on first use; a changed pin installs into it). --strict turns
# every warning into a failure: with mkdocs.yml's validation settings that is
# a link to a missing page or anchor, or a page left out of the nav.
# NO_MKDOCS_2_WARNING silences Material's end-of-life banner in the log.
MKDOCS_MATERIAL ?= 9.8.2
DOCS_VENV       ?= .cache/docs-venv
DOCS_STAMP      := $(DOCS_VENV)/.mkdocs-material-$(MKDOCS_MATERIAL)

$(DOCS_STAMP):
	python3 -m venv $(DOCS_VENV)
	$(DOCS_VENV)/bin/pip install -q 'mkdocs-material==$(MKDOCS_MATERIAL)'
	touch $@

docs: $(DOCS_STAMP) ## build the documentation site (docs/, mkdocs.yml) with --strict into .cache/site: a broken link or anchor fails
	NO_MKDOCS_2_WARNING=1 $(DOCS_VENV)/bin/mkdocs build --strict --site-dir .cache/site
