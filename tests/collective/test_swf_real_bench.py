"""Issue 39: ``bench/collective/swf_real.py`` replays a Parallel Workloads Archive log through
``coalloc collective simulate``; here on a log built in the same format (the package ships
none), its figures checked against what the log's own fields say."""

from __future__ import annotations

import gzip
import json
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: job, submit, wait, run, alloc, cpu, mem, req procs, req time, req mem, status, ...
LOG = """; Version: 2.2
; Computer: Test machine
; Installation: nowhere
; MaxNodes: 8
; MaxProcs: 8
;
 11    0  -1  3600  4 -1 -1  4  7200 -1  1 1 1 -1 -1 -1 -1 -1
 12   60  -1    -1  2 -1 -1  2   600 -1  5 1 1 -1 -1 -1 -1 -1
 13  120  -1     0  2 -1 -1  2   600 -1  0 1 1 -1 -1 -1 -1 -1
 14  180  -1   100  8 -1 -1 -1    -1 -1  1 1 1 -1 -1 -1 -1 -1
 15  240  -1    50  2 -1 -1  2 99999 -1  1 1 1 -1 -1 -1 -1 -1
 16  300  -1    -1 -1 -1 -1 -1    -1 -1 -1 1 1 -1 -1 -1 -1 -1
"""


@pytest.fixture
def bench_module(monkeypatch):
    monkeypatch.syspath_prepend(ROOT)
    # the coalloc in use (src/ in a checkout, site-packages for an installed wheel: CI's src/
    # has no compiled modules) for the command the bench runs, and the checkout for bench/
    import coalloc

    here = os.path.dirname(os.path.dirname(os.path.abspath(coalloc.__file__)))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([here, ROOT]))
    from bench.collective import swf_real

    return swf_real


def test_header_is_read(bench_module):
    info = bench_module.header(LOG)
    assert info["Computer"] == "Test machine" and info["MaxNodes"] == "8"


@pytest.mark.parametrize("compressed", [False, True])
def test_replay_counts_what_the_log_says(bench_module, tmp_path, compressed):
    path = tmp_path / ("t.swf.gz" if compressed else "t.swf")
    data = LOG.encode()
    path.write_bytes(gzip.compress(data) if compressed else data)
    out = tmp_path / "fig.json"
    rc = bench_module.main(["--swf", str(path), "--limit", "0", "--horizon", "50000",
                            "--out", str(out), "--quiet"])  # fmt: skip
    assert rc == 0
    fig = json.loads(out.read_text())
    # the referee: the log's fields, read by hand above
    assert fig["nodes"] == 8 and fig["jobs_read"] == 6 and fig["job_numbers_kept"]
    assert fig["skipped"] == {"cancelled": 1, "failed to start": 1, "no duration": 1}
    assert fig["simulated"] == 3
    # job 15 asks for 99999 s: it cannot end by the horizon of 50000 s
    assert fig["rejected"] == {"past the horizon": 1} and fig["past_the_horizon"] == 1
    assert fig["accepted"] == 2
    # jobs 11 and 15 reserve their requested time, job 14 (none requested) its run time
    assert fig["reserved_requested_time"] == 2 and fig["reserved_run_time"] == 1
    assert fig["status_field"] == {"completed": 3, "cancelled": 1, "failed": 1, "unknown": 1}
