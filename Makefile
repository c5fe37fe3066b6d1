# make test   installs what the tests need (redis-server, via apt-get when
#             missing), then runs vet and the whole suite under the race
#             detector. The tests start their own redis-server processes on
#             127.0.0.1; nothing has to be running beforehand.
# make run    prints five numbers from the command line tool.

GO ?= go
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
TEMPLATE ?= @<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>

.PHONY: test deps vet run bench fuzz

test: deps vet
	$(GO) test -race -count=1 -timeout 40m ./...

deps:
	@if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then \
		echo "installing redis-server (needed by the Redis tests)"; \
		if command -v apt-get >/dev/null 2>&1; then \
			$(SUDO) apt-get update -qq && \
			DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --reinstall redis-server redis-tools >/dev/null; \
		elif command -v brew >/dev/null 2>&1; then brew install redis; \
		else echo "cannot install redis-server: install it with your package manager" >&2; exit 1; fi; \
	fi
	@redis-server --version

vet:
	$(GO) vet ./...

run:
	$(GO) run ./cmd/sn next -t '$(TEMPLATE)' -n 5

bench: deps
	$(GO) test -run '^$$' -bench . -count 5 ./...

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 60s ./parser
	$(GO) test -run '^$$' -fuzz FuzzNew -fuzztime 60s .
	$(GO) test -run '^$$' -fuzz FuzzCollision -fuzztime 60s .
	$(GO) test -run '^$$' -fuzz FuzzCompute -fuzztime 60s ./checksum
