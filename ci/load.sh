#!/usr/bin/env bash
# The timeout tests under an artificial load (issue 24): busy loops on every CPU and two more
# compete with the batch, its workers and CBC while the timeout tests run, so that a race
# between a timeout and the work it stops shows up here first (about 30 s of wall time).
# Run after ci/test.sh, in the virtual environment it made (or any with coalloc[test,exact]).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -f .venv/bin/activate ]; then . .venv/bin/activate; fi
busy=$(( $(nproc) + 2 ))
COALLOC_TEST_LOAD=${COALLOC_TEST_LOAD:-$busy} python -m pytest -q -p no:cacheprovider \
    -m "slow or not slow" tests/shared/test_batch_timeout.py
