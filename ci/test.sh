#!/usr/bin/env bash
# The README's test command: a fresh virtual environment, coalloc with its test and exact
# extras built from source, then the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv && . .venv/bin/activate && pip install ".[test,exact]" && python -m pytest
