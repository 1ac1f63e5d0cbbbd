"""The Table 4 replay in parts (bench/testbed/table4.py): assembled from parts computed in two
calls and two processes, it equals the one-process run; a part is reused only when its
parameters match; ``--quiet`` silences the simulator's bars too."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from bench.testbed import table4 as t4

from coalloc import testbed as tb
from coalloc.testbed import generators as g

N = 10  # experiments of the tiny workload
BASE = ["--replay-only", "--experiments", str(N), "--status-every", "0", "--no-plot"]
TIMING = {"median_ms"}  # wall time differs between runs; everything else must not


class _FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _table(path):
    with open(path, newline="") as fh:
        return [{k: v for k, v in r.items() if k not in TIMING} for r in csv.DictReader(fh)]


def _part(d, stem):
    with open(d / f"{stem}.csv", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.slow
def test_parts_assemble_to_the_one_process_run(tmp_path, monkeypatch, capsys):
    one, parts = tmp_path / "one", tmp_path / "parts"
    term = _FakeTerminal()
    monkeypatch.setattr("sys.stderr", term)  # a terminal: bars would show without --quiet
    t4.main(BASE + ["--seeds", "2", "--quiet", "--out-dir", str(one)])
    assert "simulate" not in term.getvalue() and "it/s" not in term.getvalue()
    monkeypatch.setattr("sys.stderr", io.StringIO())
    capsys.readouterr()

    # the same replay in two calls: one annealer seed, then the second one on resume
    t4.main(BASE + ["--seeds", "1", "--jobs", "2", "--quiet", "--out-dir", str(parts)])
    d = parts / "testbed_replay"
    first = {p.name: p.stat().st_mtime_ns for p in d.glob("*.json")}
    assert "annealer seeds in: 1 (1000;" in capsys.readouterr().out
    t4.main(BASE + ["--seeds", "2", "--jobs", "2", "--resume", "--quiet", "--out-dir",
                    str(parts)])  # fmt: skip
    out = capsys.readouterr().out
    assert "part filter: reused" in out and "part anneal_seed1000: reused" in out
    assert "part anneal_seed2000: done" in out and "annealer seeds in: 2 (1000, 2000;" in out
    again = {p.name: p.stat().st_mtime_ns for p in d.glob("*.json")}
    assert all(again[k] == v for k, v in first.items())  # nothing computed twice
    assert _table(parts / "testbed_table4.csv") == _table(one / "testbed_table4.csv")

    # referee: the library's own one-process replay of the filtered workload
    ptop = g.deterlab(255, 5, seed=0)
    wl = g.workload(N, seed=0, mean_interarrival=1.0, mean_duration=6.0)
    kept = [i for i, (_, _, top) in enumerate(wl) if tb.assign(top, ptop, "assign+",
                                                               seed=0).success]  # fmt: skip
    assert [int(r["experiment"]) for r in _part(d, "filter") if r["kept"] == "1"] == kept
    sub = [wl[i] for i in kept]
    ref_plus = tb.simulate(ptop, sub, ["assign+", "assign+.2m"], seed=0)
    ref_ann = tb.simulate(ptop, sub, ["anneal"], seed=2000)
    for stem, res, m in (("plus_assign+", ref_plus, "assign+"),
                         ("plus_assign+.2m", ref_plus, "assign+.2m"),
                         ("anneal_seed2000", ref_ann, "anneal")):  # fmt: skip
        rows = _part(d, stem)
        assert [r["success"] == "1" for r in rows] == res.success[m].tolist(), stem
        got = np.array([float(r["isw"]) if r["isw"] else np.nan for r in rows])
        np.testing.assert_array_equal(got, res.isw[m])
        assert [r["constraint"] for r in rows if r["success"] != "1"] == [
            why["constraint"] for _, why in res.reasons[m]]
    table = {r["algorithm"]: r for r in _table(parts / "testbed_table4.csv")}
    other = sum(r["success"] != "1" for r in _part(one / "testbed_replay", "anneal_seed1000"))
    fails = [ref_ann.failures("anneal"), other]
    assert table["assign (anneal, 2 seeds)"]["failures"].startswith(f"{np.mean(fails):.1f} ")
    assert table["assign+"]["failures"] == str(ref_plus.failures("assign+"))

    # a part whose parameters differ is not reused: it is recomputed
    side = d / "anneal_seed2000.json"
    meta = json.loads(side.read_text())
    meta["params"]["filter_sha256"] = "0" * 16
    meta["failures"] = -1
    side.write_text(json.dumps(meta))
    t4.main(BASE + ["--seeds", "2", "--resume", "--quiet", "--out-dir", str(parts)])
    out = capsys.readouterr().out
    assert "part anneal_seed2000: done" in out and "part anneal_seed1000: reused" in out
    assert json.loads(side.read_text())["failures"] == ref_ann.failures("anneal")
    assert _table(parts / "testbed_table4.csv") == _table(one / "testbed_table4.csv")

    # the report needs the filter of the same workload: another duration is refused
    with pytest.raises(SystemExit, match="no empty-testbed filter"):
        t4.main(["--report-only", "--experiments", str(N), "--duration", "7",
                 "--out-dir", str(parts)])  # fmt: skip


def test_redo_names():
    assert t4._redo("anneal_seed3000", ["anneal"]) and t4._redo("plus_assign+.1", ["plus"])
    assert t4._redo("plus_assign+", ["plus_assign+"])
    assert not t4._redo("plus_assign+.1", ["plus_assign+"]) and not t4._redo("filter", ["plus"])
