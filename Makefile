# aiccsim: `make help` lists the targets.
.DEFAULT_GOAL := help
CARGO ?= cargo
PYTHON ?= python3
VENV := .venv
CHROMIUM ?= chromium

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  make %-10s %s\n", $$1, $$2}'

build: ## build the aiccsim binary (target/release/aiccsim)
	$(CARGO) build --release -p aiccsim-cli

# The plot is drawn by the Python package (matplotlib), which `make python` puts in .venv/.
demo: build python ## reproduce the headline experiment: 16-to-1 incast, PFC only vs DCQCN -> out/incast/ (table + plot)
	AICCSIM_PYTHON=$(abspath $(VENV))/bin/python ./target/release/aiccsim reproduce incast

lint: venv ## formatting and clippy (Rust), ruff and mypy (Python), warnings as errors
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(VENV)/bin/ruff check
	$(VENV)/bin/ruff format --check
	$(VENV)/bin/mypy

test: lint chromium ## lints, then every test (optimised, with debug assertions and overflow checks)
	$(CARGO) test --workspace
	AICCSIM_BIN=$(CURDIR)/target/debug/aiccsim AICCSIM_CHROMIUM=$$(command -v $(CHROMIUM)) \
		$(MAKE) --no-print-directory pytest

# The test that opens `aiccsim report` pages in a headless browser needs Chromium: Debian's
# package (no browser download), through sudo unless root. `make test` makes the test fail,
# not skip, without it.
chromium: ## install Chromium (Debian's package) if it is missing, for the report's browser test
	@command -v $(CHROMIUM) >/dev/null || { \
		sudo=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$sudo apt-get update -q && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; }

# A stamp file, so that the venv is made again only when the requirements change.
$(VENV)/installed: requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet -r requirements-dev.txt
	touch $@

venv: $(VENV)/installed ## .venv/ with the Python packages of requirements-dev.txt

# Cargo's dev profile, like the Rust tests: debug assertions on, and the core library that
# `cargo test` built is reused instead of compiled again.
python: venv ## build the Python package into .venv/ (editable: python/ is used in place)
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --profile dev

pytest: python ## the Python tests (tests/python)
	$(VENV)/bin/python -m pytest tests/python

bench: build ## the benchmark scenarios of BENCHMARKS.md
	./target/release/aiccsim bench

FUZZ_SECONDS ?= 30
CARGO_FUZZ_VERSION ?= 0.13.2

# The fuzzer's dictionary: fuzz/scenario.dict (units, numbers at the edges of the types, section
# names, punctuation) and every key (a row `| \`key\`` of a table) and every quoted word of
# docs/scenario.md, so that a key or a word documented there reaches the fuzzer without a line
# of its own. crates/aiccsim/tests/all/workload_registry.rs composes it the same way.
fuzz/target/scenario.dict: fuzz/scenario.dict docs/scenario.md
	mkdir -p fuzz/target
	{ cat fuzz/scenario.dict; grep -oE '^\| `[a-z_][a-z0-9_]*`' docs/scenario.md | sed -E 's/^\| `(.*)`$$/"\1"/'; \
		grep -oE '"[a-z_]+"' docs/scenario.md; } | awk '!seen[$$0]++' > $@

# New inputs go to a scratch corpus under fuzz/target, so the kept corpus (fuzz/corpus/scenario
# and fuzz/seeds) only changes by hand: see fuzz/README.md. libFuzzer exits non-zero on a crash.
fuzz-smoke: fuzz/target/scenario.dict ## fuzz scenario parsing, validation and short runs for 30 s (installs nightly and cargo-fuzz if missing)
	rustup run nightly rustc --version >/dev/null 2>&1 || rustup toolchain install nightly --profile minimal
	$(CARGO) +nightly fuzz --version >/dev/null 2>&1 || $(CARGO) install cargo-fuzz --locked --version $(CARGO_FUZZ_VERSION)
	mkdir -p fuzz/target/smoke-corpus
	cd fuzz && $(CARGO) +nightly fuzz run --sanitizer none scenario target/smoke-corpus corpus/scenario seeds -- \
		-dict=target/scenario.dict -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -timeout=10 -max_len=8192

.PHONY: help build demo lint test chromium bench venv python pytest fuzz-smoke
