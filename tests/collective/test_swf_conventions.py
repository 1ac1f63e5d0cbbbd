"""SWF replays follow the Standard Workload Format's conventions (issue 39, item 3).

The log is built here, line by line, from the format's field list as the Parallel Workloads
Archive states it (the package ships no real log): header comments, ``-1`` for unknown values,
every status of field 11, a job that cannot end before the pool's horizon.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from coalloc.cli import main
from coalloc.collective import CollectiveRequest, ResourcePool
from coalloc.collective import io as cio
from coalloc.collective.simulate import simulate

#: The format's 18 fields in order, spelled as the archive's definition gives them.
FORMAT_FIELDS = [
    "job number", "submit time", "wait time", "run time", "allocated processors",
    "average cpu time used", "used memory", "requested processors", "requested time",
    "requested memory", "status", "user id", "group id", "executable", "queue", "partition",
    "preceding job", "think time",
]  # fmt: skip


def swf_line(**fields) -> str:
    """One SWF line: every field -1 (unknown) unless given by its name in FORMAT_FIELDS."""
    values = [-1] * 18
    for key, value in fields.items():
        values[FORMAT_FIELDS.index(key.replace("_", " "))] = value
    return " ".join(str(v) for v in values)


# (job number, submit, run time, requested time, procs, status), what should happen
JOBS = [
    (11, 0, 600, 1800, 2, 1),  # completed: simulated, reserves 1800 s, ran 600 s
    (12, 60, 300, -1, 1, 1),  # no requested time: reserves its run time
    (13, 120, -1, 900, 2, 5),  # cancelled before it started: not simulated
    (14, 180, 400, 1200, 1, 5),  # cancelled after it started: it held its nodes, simulated
    (15, 240, -1, 600, 1, 0),  # failed to start: not simulated
    (16, 300, 200, 600, 1, 0),  # failed while running: simulated
    (17, 360, 100, 300, 1, 2),  # partial execution, to be continued: simulated
    (18, 420, 100, 300, 1, 3),  # last partial execution, completed
    (19, 480, 100, 300, 1, 4),  # last partial execution, failed
    (20, 540, 100, 300, 1, -1),  # status unknown: it ran, simulated
    (21, 600, -1, -1, 1, 1),  # neither run time nor requested time
    (22, 660, 100, 300, -1, 1),  # no processors known (requested nor allocated)
    (23, 50_000, 500, 4000, 1, 1),  # cannot end by the horizon (52,000 s)
]
HORIZON = 52_000.0


def build_log() -> str:
    lines = ["; Version: 2.2", "; Computer: a test cluster", "; MaxProcs: 8", ";", ""]
    for job, submit, run, req, procs, status in JOBS:
        lines.append(swf_line(job_number=job, submit_time=submit, wait_time=-1, run_time=run,
                              allocated_processors=procs, requested_processors=procs,
                              requested_time=req, status=status, user_id=1, group_id=1,
                              executable=job % 3, queue=1))  # fmt: skip
    return "\n".join(lines) + "\n"


def test_reader_matches_the_formats_field_list():
    assert len(cio.SWF_FIELDS) == 18
    assert [f.replace("_", " ") for f in cio.SWF_FIELDS] == FORMAT_FIELDS
    # a line whose field k holds 1000 + k: each lands in column k - 1 under its name
    text = "; a header line\n;  MaxJobs: 1\n" + " ".join(str(1000 + k) for k in range(1, 19))
    jobs = cio.read_swf(__import__("io").StringIO(text + "\n"))
    assert jobs.shape == (1, 18)
    for k, name in enumerate(FORMAT_FIELDS, start=1):
        assert jobs[0, k - 1] == 1000 + k, name
    assert sorted(cio.SWF_STATUS) == [-1, 0, 1, 2, 3, 4, 5]


def test_workload_keeps_ids_obeys_status_and_reserves_the_requested_time(tmp_path):
    path = tmp_path / "log.swf"
    path.write_text(build_log())
    jobs = cio.read_swf(path)
    assert jobs.shape == (len(JOBS), 18)  # comment and blank lines are not jobs
    w = cio.swf_workload(jobs, procs_per_node=1)
    by_id = {j[0]: j for j in JOBS}
    assert w.job_ids == [11, 12, 14, 16, 17, 18, 19, 20, 23]
    assert {s["job"]: s["reason"] for s in w.skipped} == {
        13: "cancelled",
        15: "failed to start",
        21: "no duration",
        22: "no processors",
    }
    assert {s["job"]: s["status"] for s in w.skipped} == {13: 5, 15: 0, 21: 1, 22: 1}
    for job, (arrival, req), run, wanted in zip(w.job_ids, w.requests, w.run_times,
                                                w.requested_times):  # fmt: skip
        _, submit, run0, req0, procs, _ = by_id[job]
        assert arrival == submit and req.count == procs
        assert req.duration == (req0 if req0 > 0 else run0)  # what a scheduler reserves
        assert run == run0 and wanted == req0
    assert [(t, str(r)) for t, r in cio.swf_requests(jobs)] == [(t, str(r)) for t, r in w.requests]
    with pytest.raises(ValueError, match=r"SWF job 9: status .*got 7"):
        cio.swf_workload(
            cio.read_swf(
                __import__("io").StringIO(
                    swf_line(job_number=9, run_time=5, requested_processors=1, status=7) + "\n"
                )
            )
        )


def test_replay_records_ids_run_times_and_the_horizon():
    jobs = cio.read_swf(__import__("io").StringIO(build_log()))
    w = cio.swf_workload(jobs, procs_per_node=1, procs_property="cores")
    pool = ResourcePool([[1.0]] * 8, ["cores"])
    booked = []
    sim = simulate(pool, w.requests, horizon=HORIZON, in_place=True,
                   on_booking=lambda q, r, res, p: booked.append((res.start, r.duration)),
                   **w.simulate_kwargs())  # fmt: skip
    recs = {r["job"]: r for r in sim.records}
    assert sorted(recs) == w.job_ids  # every record carries its SWF job number
    assert recs[23]["reason"] == "past the horizon" and not recs[23]["accepted"]
    for job in (11, 12, 14, 16, 17, 18, 19, 20):
        r = recs[job]
        _, _, run0, req0, _, _ = dict((j[0], j) for j in JOBS)[job]
        assert r["accepted"], job
        assert r["run_time"] == run0 and r["duration"] == (req0 if req0 > 0 else run0)
    # referee: the ledger holds each booking for its requested time, and nothing past the
    # horizon (job 23 would have fitted an empty pool if the horizon were ignored)
    assert all(start + dur <= HORIZON for start, dur in booked)
    r11 = recs[11]
    at = pool.reserved_at(r11["start"] + 1799.0)[:, 0].sum()
    after = pool.reserved_at(r11["start"] + 1800.0)[:, 0].sum()
    assert at >= 2.0 and at > after  # still reserved past its 600 s run, freed at 1800 s
    s = sim.summary()
    assert s["requests"] == 9 and s["rejections"] == {"past the horizon": 1}
    assert s["skipped"] == {"cancelled": 1, "failed to start": 1, "no duration": 1,
                            "no processors": 1}  # fmt: skip
    # without a horizon the job past it is booked (the pool's last amounts hold for ever)
    free = simulate(ResourcePool([[1.0]] * 8, ["cores"]), w.requests, **w.simulate_kwargs())
    assert {r["job"]: r["accepted"] for r in free.records}[23]


def test_simulate_checks_its_bookkeeping_arguments():
    reqs = [(0.0, CollectiveRequest(60, 1, minimum={"cores": 1}))]
    pool = ResourcePool([[1.0]], ["cores"])
    with pytest.raises(ValueError, match="job_ids must have one value per request"):
        simulate(pool, reqs, job_ids=[1, 2])
    with pytest.raises(ValueError, match="run_times"):
        simulate(pool, reqs, run_times=[float("nan")])
    assert simulate(pool, reqs).records[0]["job"] == 0  # default: the position


def test_cli_reports_skipped_jobs_and_keeps_ids(tmp_path, capsys):
    cio.write_pool(tmp_path / "p.json", ResourcePool([[1.0]] * 8, ["cores"]))
    (tmp_path / "log.swf").write_text(build_log())
    rc = main(["collective", "simulate", str(tmp_path / "p.json"), str(tmp_path / "log.swf"),
               "--horizon", str(HORIZON), "--records", str(tmp_path / "r.jsonl")])  # fmt: skip
    assert rc == 0
    out = capsys.readouterr().out
    summary = json.loads(out[: out.rindex("}") + 1])
    assert summary["skipped"]["cancelled"] == 1 and summary["requests"] == 9
    assert summary["rejections"] == {"past the horizon": 1}
    lines = [json.loads(x) for x in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert sorted(x["job"] for x in lines) == sorted(j[0] for j in JOBS)
    assert {x["job"] for x in lines if x.get("simulated") is False} == {13, 15, 21, 22}
    assert np.isclose(next(x for x in lines if x["job"] == 11)["run_time"], 600)


def test_horizon_caps_the_window_on_the_grid():
    """A job that fits before the horizon only if it starts early enough starts by then."""
    pool = ResourcePool([[1.0]], ["cores"])
    first = CollectiveRequest(1000, 1, 0, 10_000, {"cores": 1})
    second = CollectiveRequest(500, 1, 0, 10_000, {"cores": 1})
    for align in (None, 300.0):
        sim = simulate(pool, [(0.0, first), (0.0, second)], horizon=1900.0, align=align)
        a, b = sim.records
        assert a["accepted"] and a["start"] == 0.0
        # the second fits after the first only if it ends by 1,900 s: on the 300 s grid
        # the first holds [0, 1200) and the second [1200, 1800), else [1000, 1500)
        assert b["accepted"] and b["start"] + b["duration"] <= 1900.0
        assert b["start"] == (1200.0 if align else 1000.0)
        late = simulate(pool, [(0.0, first), (0.0, CollectiveRequest(1000, 1, 0, 10_000,
                                                                     {"cores": 1}))],
                        horizon=1900.0, align=align)  # fmt: skip
        assert late.records[1]["reason"] != "past the horizon"  # it could start at 0 alone
        assert not late.records[1]["accepted"]
