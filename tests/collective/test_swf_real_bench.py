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
    # by field 11: job 12 cancelled (5), job 13 failed (0), job 16 unknown (-1, no run time)
    assert fig["skipped_by_status"] == {"cancelled": 1, "failed": 1, "unknown": 1}
    assert fig["peak_rss_mib"] > 10  # the command's own memory, not a default
    assert fig["simulated"] == 3
    # job 15 asks for 99999 s: it cannot end by the horizon of 50000 s
    assert fig["rejected"] == {"past the horizon": 1} and fig["past_the_horizon"] == 1
    assert fig["accepted"] == 2
    # jobs 11 and 15 reserve their requested time, job 14 (none requested) its run time
    assert fig["reserved_requested_time"] == 2 and fig["reserved_run_time"] == 1
    assert fig["status_field"] == {"completed": 3, "cancelled": 1, "failed": 1, "unknown": 1}
    # the referee (the log replayed without the package) agrees on every count and start
    assert fig["referee"] == {"skipped": True, "simulated": True, "accepted": True,
                              "rejected": True, "past_the_horizon": True,
                              "starts_differing": 0}  # fmt: skip


#: 8 nodes: job 1 takes them all for 100 s (it asked for 100 s), so job 2 (4 nodes, at 10 s)
#: waits until 100 s and job 3 (6 nodes, at 20 s) finds no start in its window (each job may
#: wait 100 s; from 100 s job 2 holds 4 of the 8 nodes); job 4 (2 nodes, 500 s requested,
#: 30 s run) starts on arrival beside job 2; job 5 (status 5, ran 40 s) is simulated and fills
#: the last 2 nodes; job 6 (status 5, never ran) is skipped as cancelled.
BUSY = """; MaxNodes: 8
 1    0  -1  100  8 -1 -1 -1  100 -1  1 1 1 -1 -1 -1 -1 -1
 2   10  -1  300  4 -1 -1  4   -1 -1  1 1 1 -1 -1 -1 -1 -1
 3   20  -1  100  6 -1 -1  6   -1 -1  1 1 1 -1 -1 -1 -1 -1
 4  150  -1   30  2 -1 -1  2  500 -1  1 1 1 -1 -1 -1 -1 -1
 5  160  -1   40  2 -1 -1  2   -1 -1  5 1 1 -1 -1 -1 -1 -1
 6  170  -1   -1  2 -1 -1  2  600 -1  5 1 1 -1 -1 -1 -1 -1
"""


def test_referee_books_what_the_log_implies(bench_module, tmp_path):
    """The referee itself, against starts worked out by hand above; then the command on the
    same log agrees with it (waits and a rejection: starts that a wrong replay would move)."""
    path = tmp_path / "busy.swf"
    path.write_text(BUSY)
    ref = bench_module.referee(str(path), 8, 100.0)
    assert ref["starts"] == {1: 0.0, 2: 100.0, 3: None, 4: 150.0, 5: 160.0}
    assert ref["skipped"] == {"cancelled": 1} and ref["skipped_by_status"] == {"cancelled": 1}
    assert (ref["simulated"], ref["accepted"], ref["rejected"]) == (5, 4, 1)
    # a horizon of 300 s: job 2 (300 s from 10 s) and job 4 (500 s requested from 150 s)
    # cannot end by it, so job 3 gets the nodes at 100 s, and job 5 the 2 left beside it
    cut = bench_module.referee(str(path), 8, 100.0, horizon=300.0)
    assert cut["starts"] == {1: 0.0, 2: None, 3: 100.0, 4: None, 5: 160.0}
    assert cut["past_the_horizon"] == 2 and cut["rejected"] == 0
    out = tmp_path / "fig.json"
    assert bench_module.main(["--swf", str(path), "--limit", "0", "--max-wait", "100",
                              "--out", str(out), "--quiet"]) == 0  # fmt: skip
    fig = json.loads(out.read_text())
    assert fig["accepted"] == 4 and sum(fig["rejected"].values()) == 1
    # jobs 1 (asked for the 100 s it ran) and 4 reserve their requested time, 2, 3, 5 their run
    assert fig["reserved_requested_time"] == 2 and fig["reserved_run_time"] == 3
    assert fig["referee"]["starts_differing"] == 0 and all(
        v is True for k, v in fig["referee"].items() if k != "starts_differing")
