# Two commands: `make run` brings the whole app up on http://127.0.0.1:8000, `make test` tests it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export VENV
TEST_DATABASE_URL ?= postgres://analyst:analyst@127.0.0.1:5432/analyst
# pytest-xdist workers for make test and test-postgres: a test spends most of its time waiting on
# the processes it drives (sandboxd, kernels, a worker, a browser), so three share two cores well.
TEST_WORKERS ?= 3

.PHONY: setup install vendor template migrate run test test-slow test-postgres chaos bench lint clean \
	image test-deploy test-deploy-short

setup: install vendor .env template migrate

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit("Python 3.11+ is required, found " + sys.version.split()[0]) if sys.version_info < (3, 11) else None'
	scripts/ensure-system-packages
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check --upgrade pip
	$(BIN)/pip install -q --disable-pip-version-check -e '.[dev]'
	touch $@

# The browser libraries, pinned in package-lock.json, copied into static/vendor (no CDN).
vendor: install
	@command -v npm >/dev/null 2>&1 || scripts/ensure-system-packages
	scripts/vendor-js

.env: .env.example
	scripts/write-dotenv

template: install
	$(BIN)/python -m sandboxes.templates build

migrate: install .env
	mkdir -p var
	$(BIN)/python manage.py migrate --noinput -v 0

run: setup
	scripts/run

# Everything but the tests marked slow (each a long version of what a quicker test covers),
# which `make test-slow` runs; .ci/run runs both. Those marked serial run alone, after the rest.
test: setup
	scripts/ensure-redis
	$(BIN)/pytest -n $(TEST_WORKERS) -m "not slow and not serial and not deploy"
	$(BIN)/pytest -m "serial and not slow" -p no:cacheprovider

test-slow: setup
	scripts/ensure-redis
	$(BIN)/pytest -m slow -p no:cacheprovider

# The database tests again, on Postgres (started, or installed, by scripts/ensure-postgres): those
# whose outcome the database can change (the API, pages, MCP, the event log, turns claimed and run
# by a real worker). The browser, fault and multi-host suites drive the same queries through
# Redis, Celery and sandboxd, which Postgres does not change; they run on SQLite in make test.
test-postgres: setup
	scripts/ensure-postgres
	DATABASE_URL=$(TEST_DATABASE_URL) $(BIN)/pytest -n $(TEST_WORKERS) -m database -p no:cacheprovider \
		--ignore=tests/e2e --ignore=tests/faults --ignore=tests/kernels

# The fault suite at length: the worker SIGKILLed at random points of a turn 20 times over (make
# test runs the same with 3); CHAOS_SEED=<n> replays a failed run.
chaos: setup
	scripts/ensure-redis
	CHAOS_ITERATIONS=$${CHAOS_ITERATIONS:-20} $(BIN)/pytest tests/faults -p no:cacheprovider

bench: setup
	scripts/ensure-redis
	$(BIN)/python benchmarks/sandbox.py
	$(BIN)/python benchmarks/turn.py
	$(BIN)/python benchmarks/snapshot.py
	$(BIN)/python benchmarks/uploads.py
	$(BIN)/python benchmarks/page.py
	$(BIN)/python benchmarks/pool.py
	$(BIN)/python benchmarks/contexts.py
	$(BIN)/python benchmarks/density.py
	$(BIN)/python benchmarks/grid_rows.py

# The app's image (web, worker, beat and sandboxd) from the Dockerfile, with podman; on a base made
# from Debian's packages unless IMAGE_BASE names one (python:3.11-slim-bookworm where Docker Hub
# is reachable). Cached layers: a change to the code rebuilds only the last ones.
image:
	scripts/build-image

# docker-compose.yml for real under podman-compose, from that image (Redis and Postgres from
# Debian's packages, scripts/build-service-images), driven through its published port on
# 127.0.0.1: the user's path, a hostile cell, every service restarted, down and up (tests/deploy).
test-deploy: install image
	scripts/build-service-images
	$(BIN)/pytest tests/deploy -m deploy -p no:cacheprovider

# CI's version (.ci/run): docker-compose.yml alone, but the `restart` of every service, which
# `down` and `up` with the volumes kept covers too. The manifests under kube play stay in
# test-deploy: on a cold first start there, sandboxd was restarted once (in a fresh clone's CI
# run; not on the runs after it), which that test counts as a failure.
test-deploy-short: install image
	scripts/build-service-images
	$(BIN)/pytest tests/deploy/test_compose_deploy.py -m deploy -p no:cacheprovider -k "not every_service_restarted"

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) var node_modules static/vendor
