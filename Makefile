# Two commands set everything up from a fresh clone: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# Test workers: the suite waits on browsers, sockets and subprocesses more than it computes,
# so more workers than cores pays off on the 2-core machine.
WORKERS ?= 4
# Line coverage floor per gated package (session/core, wire, cards, contract, registry/models),
# the 95 % issue 19.6 asks; measured by a clean-clone `make test` on 2026-12-02: session/core
# 95.1, wire 95.8, cards 95.4, contract 97.4, registry/models 98.2 %.
COVERAGE_FLOOR ?= 95
# One invocation, the slowest cases listed at the end (what to look at when it grows). It ran
# as two (fresh workers for each half) while a test seemed to leave a worker unable to use
# cryptography's NoEncryption() and Playwright; whole-suite runs in one invocation on
# 2026-12-02 and 2026-12-03 showed neither.
PYTEST := $(BIN)/python -m pytest -q -n $(WORKERS) --dist loadscope
TESTS := tests

.PHONY: demo demo-relay test test-slow lint bench browser relay-deps sodium clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

# The system's libsodium (1.0.18+): the cards layer's ristretto255 group (PyNaCl's bundled
# copy is built without it). Debian's package; skipped when present.
sodium:
	@if ! $(PY) -c "import ctypes; ctypes.CDLL('libsodium.so.23')" 2>/dev/null && \
	    ! $(PY) -c "import ctypes; ctypes.CDLL('libsodium.so.26')" 2>/dev/null; then \
		echo "installing Debian libsodium23"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q libsodium23; \
	fi

# Debian's Chromium and the emoji font for the play-loop tests; skipped when present.
browser:
	@if [ ! -x /usr/bin/chromium ] || [ ! -f /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf ]; then \
		echo "installing Debian chromium + fonts-noto-color-emoji"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium fonts-noto-color-emoji; \
	fi

# Debian's nats-server (the relay), nftables and iproute2 (the NAT tests' namespaces).
relay-deps:
	@missing=""; \
	command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || missing="$$missing nats-server"; \
	command -v nft >/dev/null 2>&1 || [ -x /usr/sbin/nft ] || missing="$$missing nftables"; \
	command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ] || missing="$$missing iproute2"; \
	if [ -n "$$missing" ]; then \
		echo "installing Debian$$missing"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	fi

demo: $(STAMP) sodium
	$(BIN)/lingxi demo

# The same journey across the relay: a registry tied to a nats-server of its own, a host
# that cannot be reached directly, a guest that meets it through the relay.
demo-relay: $(STAMP) sodium relay-deps
	$(BIN)/lingxi demo --relay

test: $(STAMP) sodium browser relay-deps
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/lint-imports --no-logo
	$(BIN)/mypy
	$(PYTEST) -m "not slow" --durations=15 --cov --cov-report= $(TESTS)
	$(BIN)/python tests/coverage_gate.py --floor $(COVERAGE_FLOOR)

# Long stress and whole-game cases (marked slow); CI runs them after `make test`.
test-slow: $(STAMP) sodium browser relay-deps
	$(PYTEST) -m slow

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks

clean:
	rm -rf $(VENV) build dist src/*.egg-info
