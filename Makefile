# make test   installs what the tests need (redis-server, postgresql,
#             mariadb-server, etcd-server, redis-sentinel, chromium, nodejs/npm,
#             python3, buildah and systemd's systemd-analyze, via apt-get when
#             missing), then
#             checks that every module's go.mod is tidy, runs vet, compares
#             each module's API with its last tag, lints the service's OpenAPI document with an outside
#             tool (@redocly/cli, through npx) and runs the whole suite under
#             the race detector, with the oldest Go the go.mod files name. The tests start their
#             own redis-server, postgres, mariadbd and etcd processes on
#             127.0.0.1 (as the postgres and mysql users when run as
#             root); nothing has to be running beforehand, and the
#             packages' own services are not used.
# make run    prints five numbers from the command line tool.
# make image  builds the container image (deploy/Containerfile).

GO ?= go
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
TEMPLATE ?= @<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>

.PHONY: test deps vet api lint-openapi run image bench bench-all fuzz

# REDOCLY is the OpenAPI linter, pinned; it needs Node.js 20.19 or later.
REDOCLY ?= @redocly/cli@2.77.0

# GO_OLDEST is the release every go.mod's go line names: the oldest Go sn
# builds with. Every target runs with it (the go command fetches it through
# the module proxy), so that the go line is a tested claim, and the build
# cache serves vet and the tests alike. GOTOOLCHAIN=local make test runs
# with the machine's Go instead.
GO_OLDEST := $(shell sed -n 's/^go //p' go.mod)
export GOTOOLCHAIN ?= go$(GO_OLDEST)

# MODULES are the modules of this repository, as go.work lists them: the
# core (.), one per store or tool with a heavy client, the command, the
# test servers' harnesses, the tests that need real servers (tests) and the
# benchmarks. PKGS names all their packages, for one go test that runs them
# side by side, two at a time on two cores: the modules whose packages take
# longest (SLOW, a few minutes each) first, so that none of them runs alone
# at the end while the other core idles.
MODULES := $(shell awk '$$1 ~ /^\.\/?/ && NF == 1 {print $$1}' go.work)
SLOW := ./sequence/redisseq ./cmd/sn ./tests ./sequence/etcdseq
PKGS := $(patsubst %,%/...,$(SLOW)) ./... $(patsubst %,%/...,$(filter-out . $(SLOW),$(MODULES)))

test: deps vet api lint-openapi
	$(GO) test -race -count=1 -timeout 40m $(PKGS)

deps:
	@missing=""; \
	{ command -v redis-server && command -v redis-cli; } >/dev/null 2>&1 || missing="$$missing redis-server redis-tools"; \
	command -v redis-sentinel >/dev/null 2>&1 || missing="$$missing redis-sentinel"; \
	{ ls /usr/lib/postgresql/*/bin/initdb || command -v initdb; } >/dev/null 2>&1 || missing="$$missing postgresql"; \
	{ [ -x /usr/sbin/mariadbd ] || command -v mariadbd; } >/dev/null 2>&1 || missing="$$missing mariadb-server"; \
	command -v etcd >/dev/null 2>&1 || missing="$$missing etcd-server"; \
	{ command -v chromium || command -v chromium-browser || command -v google-chrome; } >/dev/null 2>&1 || missing="$$missing chromium"; \
	{ command -v node && command -v npx; } >/dev/null 2>&1 || missing="$$missing nodejs npm"; \
	command -v python3 >/dev/null 2>&1 || missing="$$missing python3"; \
	command -v buildah >/dev/null 2>&1 || missing="$$missing buildah"; \
	[ -f /etc/ssl/certs/ca-certificates.crt ] || missing="$$missing ca-certificates"; \
	command -v systemd-analyze >/dev/null 2>&1 || missing="$$missing systemd"; \
	if [ -n "$$missing" ]; then \
		echo "installing$$missing (needed by the Redis, PostgreSQL, MariaDB, etcd, browser, image and unit tests and the OpenAPI lint)"; \
		if command -v apt-get >/dev/null 2>&1; then \
			$(SUDO) apt-get update -qq && \
			$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --reinstall $$missing >/dev/null; \
		elif command -v brew >/dev/null 2>&1; then brew install redis postgresql@15 mariadb etcd chromium node; \
		else echo "cannot install$$missing: install them with your package manager" >&2; exit 1; fi; \
	fi
	@redis-server --version
	@"$$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)/postgres" --version 2>/dev/null || postgres --version
	@/usr/sbin/mariadbd --version 2>/dev/null || mariadbd --version
	@etcd --version | head -n 1
	@chromium --version 2>/dev/null || chromium-browser --version 2>/dev/null || google-chrome --version
	@echo "node $$(node --version)"
	@python3 --version
	@buildah --version
	@systemd-analyze --version | head -n 1

# vet also fails on an untidy go.mod or go.sum: what the module requires
# is what its packages and tests import.
vet:
	@for m in $(MODULES); do echo "go mod tidy -diff ($$m)"; (cd $$m && $(GO) mod tidy -diff) || exit 1; done
	$(GO) vet $(PKGS)

# api compares the API of every module with its last tag (.ci/apicheck):
# an incompatible change fails unless the changelog declares it (before v1).
api:
	.ci/apicheck $(MODULES)

# lint-openapi checks server/openapi.json with redocly's recommended rules
# (redocly.yaml): 0 errors, or make test fails.
lint-openapi:
	npx --yes $(REDOCLY) lint --format=stylish server/openapi.json

run:
	$(GO) run ./cmd/sn next -t '$(TEMPLATE)' -n 5

# image builds the container image of deploy/Containerfile (sn, static, on
# scratch) as localhost/sn:latest, with buildah or podman.
image:
	deploy/build-image

# bench runs sn against its peers, interleaved in rounds, and prints the
# table bench/README.md shows; then sn serve against a bare net/http
# handler under wrk (installed when missing), remote blocks against the
# library, and 8 client processes on one sn serve. bench-all runs every
# package's benchmarks.
bench: deps
	@command -v wrk >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
	cd bench && $(GO) test -run '^$$' -bench Peers -benchtime 1x -timeout 30m
	$(GO) test -run '^$$' -bench BoundHandle -count 3 ./sequence
	$(GO) test -run '^$$' -bench ServeWrk -benchtime 1x ./cmd/sn
	$(GO) test -run '^$$' -bench Remote -count 6 ./remote
	$(GO) test -run '^$$' -bench RemoteProcesses -benchtime 4000000x -count 3 ./cmd/sn

bench-all: deps
	$(GO) test -run '^$$' -bench . -count 5 ./...

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 60s ./parser
	$(GO) test -run '^$$' -fuzz FuzzNew -fuzztime 60s .
	$(GO) test -run '^$$' -fuzz FuzzCollision -fuzztime 60s .
	$(GO) test -run '^$$' -fuzz FuzzCompute -fuzztime 60s ./checksum
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 60s ./config
