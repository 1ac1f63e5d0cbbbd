#!/usr/bin/env bash
# Coverage-guided fuzzing (atheris) of every family's file readers, of the verify commands'
# result files and of the CLI: each target runs for a bounded time from its seed corpus
# (fuzz/corpus/<target>/, two targets at a time), then the whole corpus is replayed. Any
# finding (an exception other than the family's clear error, a message that does not name the
# file, a solved result that fails verify, a CLI traceback or an exit code other than 0/1/2)
# fails the run; libFuzzer leaves the input in the output folder as crash-*.
# Run after ci/test.sh, in its virtual environment. FUZZ_SECONDS: time per target (default 10).
# FUZZ_SEED: libFuzzer's seed (default 1), so that a CI run explores the same inputs as the
# last one and a red run is the change's doing, not the draw's; FUZZ_SEED=0 draws a random
# seed (a campaign by hand: its findings go into fuzz/corpus/, which every run replays).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${VIRTUAL_ENV:-}" ] && [ -f .venv/bin/activate ]; then . .venv/bin/activate; fi
python -m pip install --quiet "atheris==3.0.0"
export FUZZ_SECONDS="${FUZZ_SECONDS:-10}"
export FUZZ_SEED="${FUZZ_SEED:-1}"
export FUZZ_OUT
FUZZ_OUT="$(mktemp -d /tmp/coalloc-fuzz-out.XXXXXX)"
export FUZZ_ROOT
FUZZ_ROOT="$(pwd)"
export COALLOC_FUZZ_TMP="$FUZZ_OUT/tmp"  # the targets' scratch files (libFuzzer exits hard)
one() {
    local t="$1"
    # -rss_limit_mb: a small file that makes a reader allocate gigabytes is a finding too
    if (cd "$FUZZ_OUT" && python "$FUZZ_ROOT/fuzz/run.py" "$t" -max_total_time="$FUZZ_SECONDS" -seed="$FUZZ_SEED" \
            -timeout=30 -max_len=4096 -rss_limit_mb=3072 -artifact_prefix="$FUZZ_OUT/$t-" \
            > "$FUZZ_OUT/$t.log" 2>&1); then
        echo "fuzz: $t: $(grep '^Done' "$FUZZ_OUT/$t.log" || echo 'no summary')"
    else
        echo "fuzz: $t: FINDING (log and input in $FUZZ_OUT):"
        grep -v "^#\|^INFO\|^WARNING" "$FUZZ_OUT/$t.log" | tail -25
        return 1
    fi
}
export -f one
failed=0
python fuzz/run.py --list | xargs -P 2 -I{} bash -c 'one {}' || failed=1
python fuzz/run.py --replay || failed=1
[ "$failed" -eq 0 ] || { echo "fuzz: findings (see above)"; exit 1; }
rm -rf "$FUZZ_OUT"
echo "fuzz: no findings"
