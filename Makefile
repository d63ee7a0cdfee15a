# aiccsim: `make help` lists the targets.
.DEFAULT_GOAL := help
CARGO ?= cargo

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  make %-8s %s\n", $$1, $$2}'

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

.PHONY: help build demo lint test bench
