# memwarden — developer and operator entry points. `make help` lists them.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
MW     := $(BIN)/memwarden

.DEFAULT_GOAL := help
.PHONY: help setup test-tools test lint format e2e demo bench checkpoint rotate index health maintain doctor status install uninstall config-example clean

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

setup: $(STAMP) ## create .venv and install memwarden (editable) with its dev tools; fast when done

test-tools: ## install the programs some tests run, when missing (apt-get, as root): systemd-analyze, promtool, alertmanager, zsh, fish
	@sh scripts/test-tools.sh

test: setup test-tools ## run the unit and integration tests (the e2e suite is `make e2e`)
	$(BIN)/python -m pytest -q

e2e: setup test-tools ## end-to-end tests against the real OpenClaw gateway from the npm registry
	$(BIN)/python -m pytest -q -m e2e tests/e2e --timeout=900

lint: setup ## ruff lint and format check
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/ruff format --check src tests bench scripts

format: setup ## ruff fix + format
	$(BIN)/ruff check --fix src tests bench scripts
	$(BIN)/ruff format src tests bench scripts

demo: setup ## build a sample deployment under .demo/ and run every job once against it
	$(BIN)/python scripts/demo.py

bench: setup ## run the benchmarks and write bench/REPORT.md
	$(BIN)/python bench/run.py

config-example: setup ## regenerate config/memwarden.example.toml and docs/configuration.md from the schema
	$(MW) config example > config/memwarden.example.toml
	$(MW) config docs > docs/configuration.md

checkpoint: setup ## write ACTIVE_CONTEXT.md and the daily log for every agent
	$(MW) checkpoint

rotate: setup ## reset sessions whose context passed the threshold (through the gateway)
	$(MW) rotate

index: setup ## rebuild memory/INDEX.md catalogs
	$(MW) index

health: setup ## run the health checks and alert on Slack
	$(MW) health

maintain: setup ## retention, log rotation, state pruning, gateway config backup
	$(MW) maintain

doctor: setup ## check the whole deployment and print the fixes
	$(MW) doctor

status: setup ## last run of each job, open alerts, pending sends
	$(MW) status

install: setup ## install the timers for this platform's scheduler (systemd user units, launchd or cron)
	$(MW) install auto

uninstall: setup ## remove what `make install` installed
	$(MW) uninstall auto

clean: ## remove the venv, caches and the demo deployment
	rm -rf $(VENV) .demo .pytest_cache .ruff_cache build src/*.egg-info
