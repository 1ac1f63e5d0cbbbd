#!/usr/bin/env bash
# Coverage-guided fuzzing (atheris) of every family's file readers and of the CLI: each target
# runs for a bounded time from its seed corpus (fuzz/corpus/<target>/), then the corpus is
# replayed. Any finding (an exception other than the family's clear error, a message that does
# not name the file, a solved result that fails verify, a CLI traceback or exit code other than
# 0/1/2) fails the run; libFuzzer leaves the input in $out/crash-*.
# Run after ci/test.sh, in its virtual environment. FUZZ_SECONDS sets the time per target.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${VIRTUAL_ENV:-}" ] && [ -f .venv/bin/activate ]; then . .venv/bin/activate; fi
python -m pip install --quiet "atheris==3.0.0"
seconds="${FUZZ_SECONDS:-10}"
out="$(mktemp -d /tmp/coalloc-fuzz-out.XXXXXX)"
root="$(pwd)"
targets="$(python fuzz/run.py --list)"
failed=0
for t in $targets; do
    # -rss_limit_mb: a file that makes a reader allocate gigabytes is a finding too
    if ! (cd "$out" && python "$root/fuzz/run.py" "$t" -max_total_time="$seconds" -timeout=20 \
            -max_len=4096 -rss_limit_mb=3072 -print_final_stats=1 > "$out/$t.log" 2>&1); then
        echo "fuzz: target $t FAILED (log and input in $out):"
        grep -v "^#\|^INFO\|^WARNING" "$out/$t.log" | tail -25
        failed=1
    else
        echo "fuzz: $t: $(grep "^Done" "$out/$t.log")"
    fi
done
python fuzz/run.py --replay
[ "$failed" -eq 0 ] || { echo "fuzz: findings (see above)"; exit 1; }
rm -rf "$out"
echo "fuzz: no findings"
