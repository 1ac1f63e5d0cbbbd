#!/usr/bin/env bash
# The README's test command: a fresh virtual environment, coalloc with its test and exact
# extras built from source, then the whole test suite (slow tests included) on two workers.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv && . .venv/bin/activate && pip install ".[test,exact]" && python -m pytest -n 2 -m "slow or not slow"
