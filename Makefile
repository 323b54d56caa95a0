# Two commands set everything up from a fresh clone: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench browser clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

# Debian's Chromium and the emoji font for the play-loop tests; skipped when present.
browser:
	@if [ ! -x /usr/bin/chromium ] || [ ! -f /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf ]; then \
		echo "installing Debian chromium + fonts-noto-color-emoji"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium fonts-noto-color-emoji; \
	fi

demo: $(STAMP)
	$(BIN)/lingxi demo

test: $(STAMP) browser
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/lint-imports --no-logo
	$(BIN)/mypy
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks

clean:
	rm -rf $(VENV) build dist src/*.egg-info
