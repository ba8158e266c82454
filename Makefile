# One command per task; CI runs the same ones (.ci/run calls `make test`).
# Every target installs what it needs first, and does nothing more when it is already there.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
PYTEST_WORKERS ?= auto
PEERS := bench/.peers
PEERS_STAMP := $(PEERS)/node_modules/.package.json
WEB_NPM := tests/web
WEB_STAMP := $(WEB_NPM)/node_modules/.package.json
WEB_TESTS := tests/test_web_review.py tests/test_web_visual.py tests/test_web_sessions.py
CLIENTS := tests/.npm
CLIENTS_STAMP := $(CLIENTS)/node_modules/.package.json
CAPTURE_NPM := src/viewfinder/capture/assets
CAPTURE_STAMP := $(CAPTURE_NPM)/node_modules/.package.json

.PHONY: install test test-web web-test-deps clients capture-assets check serve bench chromium wrk \
	format docs clean

install: $(STAMP) capture-assets

# Reinstall when the dependencies or the native kernel change.
$(STAMP): pyproject.toml $(wildcard src/viewfinder/imaging/*.c src/viewfinder/imaging/*.h)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The slowest tests are listed at the end: the suite is to stay well under 15 minutes.
test: install clients chromium web-test-deps
	$(PY) -m pytest -n $(PYTEST_WORKERS) -q --durations=15

# The dashboard's tests alone. `UPDATE=1 make test-web` renews the screenshots in tests/visual/
# after an intended change of the dashboard's look (look at them, then commit them).
test-web: install chromium web-test-deps
	$(PY) -m pytest -n 2 -q $(WEB_TESTS)

# axe-core, which the capture engine injects into captured pages, pinned in
# src/viewfinder/capture/assets/package.json (and its lock); the engine reads it from
# node_modules there (or from VIEWFINDER_AXE_PATH). The stamp is a copy of its package.json.
capture-assets: $(CAPTURE_STAMP)

$(CAPTURE_STAMP): $(CAPTURE_NPM)/package.json $(CAPTURE_NPM)/package-lock.json
	npm ci --no-audit --no-fund --loglevel=error --prefix $(CAPTURE_NPM)
	cp $(CAPTURE_NPM)/package.json $@

# axe-core for the dashboard's accessibility checks, pinned in tests/web/package.json (and its
# lock); node_modules is ignored. The stamp is a copy of the package.json it was installed from.
web-test-deps: $(WEB_STAMP)

$(WEB_STAMP): $(WEB_NPM)/package.json $(WEB_NPM)/package-lock.json
	npm ci --no-audit --no-fund --loglevel=error --prefix $(WEB_NPM)
	cp $(WEB_NPM)/package.json $@

# Real clients the tests drive (the MCP Inspector CLI) and pixelmatch, the reference the pixel
# classifier is checked against, pinned in tests/npm/package.json and
# installed into an ignored folder the same way as the bench peers below.
clients: $(CLIENTS_STAMP)

$(CLIENTS_STAMP): tests/npm/package.json
	mkdir -p $(CLIENTS)
	cp tests/npm/package.json $(CLIENTS)/package.json
	npm install --no-audit --no-fund --loglevel=error --prefix $(CLIENTS)
	cp tests/npm/package.json $@

check: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

# The review server on http://$(HOST):$(PORT), data in .viewfinder/ (keys printed on first start).
HOST ?= 127.0.0.1
PORT ?= 8000
serve: install
	$(VENV)/bin/viewfinder serve --host $(HOST) --port $(PORT)

format: install
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

docs: install
	$(PY) scripts/cli_reference.py

chromium:
	@command -v chromium >/dev/null 2>&1 || { \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium fonts-dejavu-core fonts-liberation; }

bench: install chromium wrk $(PEERS_STAMP)
	$(PY) -m pip install --quiet -e '.[dev,bench]'
	$(PY) -m bench.engine
	$(PY) -m bench.analysis
	$(PY) -m bench.heldout
	$(PY) -m bench.cli
	$(PY) -m bench.build
	$(PY) -m bench.scale
	$(PY) -m bench.checkups
	$(PY) -m bench.replays
	$(PY) -m bench.api
	$(PY) -m bench.memory

# The HTTP load generator bench.api drives.
wrk:
	@command -v wrk >/dev/null 2>&1 || { \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq wrk; }

# The pinned peers go into an ignored folder. The stamp is a copy of the package.json they were
# installed from, kept inside node_modules: a changed pin or a deleted node_modules reinstalls.
$(PEERS_STAMP): bench/peers/package.json
	mkdir -p $(PEERS)
	cp bench/peers/package.json $(PEERS)/package.json
	npm install --no-audit --no-fund --loglevel=error --prefix $(PEERS)
	cp bench/peers/package.json $@

clean:
	rm -rf $(VENV) build src/*.egg-info src/viewfinder/imaging/*.so bench/.corpus bench/.corpus-build bench/.analysis-corpus-1280 bench/.peers bench/.results \
		$(CLIENTS) $(WEB_NPM)/node_modules $(CAPTURE_NPM)/node_modules
