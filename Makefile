# aiccsim: `make help` lists the targets.
.DEFAULT_GOAL := help
CARGO ?= cargo

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  make %-10s %s\n", $$1, $$2}'

build: ## build the aiccsim binary (target/release/aiccsim)
	$(CARGO) build --release -p aiccsim-cli

demo: build ## reproduce the headline experiment: 16-to-1 incast, PFC only vs DCQCN -> out/incast/
	./target/release/aiccsim reproduce incast

lint: ## formatting and clippy, warnings as errors
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

test: lint ## lints, then every test (optimised, with debug assertions and overflow checks)
	$(CARGO) test --workspace

bench: build ## the benchmark scenarios of BENCHMARKS.md
	./target/release/aiccsim bench

FUZZ_SECONDS ?= 30
CARGO_FUZZ_VERSION ?= 0.13.2

# New inputs go to a scratch corpus under fuzz/target, so the kept corpus (fuzz/corpus/scenario
# and fuzz/seeds) only changes by hand: see fuzz/README.md. libFuzzer exits non-zero on a crash.
fuzz-smoke: ## fuzz scenario parsing, validation and short runs for 30 s (installs nightly and cargo-fuzz if missing)
	rustup run nightly rustc --version >/dev/null 2>&1 || rustup toolchain install nightly --profile minimal
	$(CARGO) +nightly fuzz --version >/dev/null 2>&1 || $(CARGO) install cargo-fuzz --locked --version $(CARGO_FUZZ_VERSION)
	mkdir -p fuzz/target/smoke-corpus
	cd fuzz && $(CARGO) +nightly fuzz run --sanitizer none scenario target/smoke-corpus corpus/scenario seeds -- \
		-dict=scenario.dict -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -timeout=10 -max_len=8192

.PHONY: help build demo lint test bench fuzz-smoke
