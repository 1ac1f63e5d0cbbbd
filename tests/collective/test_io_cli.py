"""Formats (JSON, CSV, SWF, workload) and the ``coalloc collective`` commands."""

import json

import numpy as np
import pytest

from coalloc._shared.jsonio import InstanceError
from coalloc.cli import main
from coalloc.collective import CollectiveRequest, coallocate, io, verify
from coalloc.collective.generators import random_instance, table1_pool
from coalloc.collective.simulate import simulate


def test_pool_and_request_roundtrip(tmp_path):
    pool, req = random_instance(6, 2, seed=1)
    io.write_pool(tmp_path / "p.json", pool)
    io.write_request(tmp_path / "r.json", req)
    p2 = io.read_pool(tmp_path / "p.json")
    r2 = io.read_request(tmp_path / "r.json")
    assert np.array_equal(p2.reserved, pool.reserved) and p2.names == pool.names
    assert r2.to_dict() == req.to_dict()
    a, b = coallocate(pool, req), coallocate(p2, r2)
    assert a.start == b.start
    io.write_instance(tmp_path / "i.json", pool, req)
    p3, r3 = io.read_instance(tmp_path / "i.json")
    assert np.array_equal(p3.capacity, pool.capacity) and r3.count == req.count


def test_slots_json_and_csv(tmp_path):
    (tmp_path / "p.json").write_text(json.dumps({
        "format": "coalloc.collective.pool", "names": ["cores"], "capacity": [[4], [2]],
        "slot_seconds": 300, "slots": [[[1, 4]], [[0, 0]]],
        "labels": {"arch": ["amd64", "i386"]}}))  # fmt: skip
    pool = io.read_pool(tmp_path / "p.json")
    assert pool.reserved_at(400).ravel().tolist() == [4.0, 0.0]
    (tmp_path / "nodes.csv").write_text("node,cores,ram,label:arch\na,4,8,amd64\nb,2,4,i386\n")
    (tmp_path / "usage.csv").write_text("node,property,slot,reserved\na,cores,1,3\nb,ram,0,1\n")
    pc = io.read_pool_csv(tmp_path / "nodes.csv", tmp_path / "usage.csv", 300)
    assert pc.names == ("cores", "ram") and pc.node_names == ("a", "b")
    assert pc.reserved_at(310)[0].tolist() == [3.0, 0.0]
    assert pc.reserved_at(10)[1].tolist() == [0.0, 1.0]
    assert pc.match({"arch": "i386"}).tolist() == [False, True]


@pytest.mark.parametrize("text, words", [
    ("{", "not valid JSON"),
    ('{"format": "coalloc.collective.pool", "names": ["a"]}', "capacity: missing"),
    ('{"names": ["a"], "capacity": [[-1]]}', r"capacity\[0\]\[0\]: expected a finite number >= 0"),
    ('{"names": ["a"], "capacity": [[1]], "times": [0], "reserved": [[[3]]]}', "exceeds"),
])  # fmt: skip
def test_bad_pool_files(tmp_path, text, words):
    (tmp_path / "bad.json").write_text(text)
    with pytest.raises(InstanceError, match=words):
        io.read_pool(tmp_path / "bad.json")


def test_bad_request_file(tmp_path):
    (tmp_path / "r.json").write_text('{"duration": 10, "count": 0}')
    with pytest.raises(InstanceError, match="count"):
        io.read_request(tmp_path / "r.json")
    (tmp_path / "r2.json").write_text('{"duration": 10, "count": 2, "color": 1}')
    with pytest.raises(InstanceError, match="color: unknown key 'color'"):
        io.read_request(tmp_path / "r2.json")


SWF = """; Version: 2.2
; MaxProcs: 8
1 0 5 600 2 -1 1048576 2 900 -1 1 1 1 1 1 1 -1 -1
2 60 0 1200 4 -1 -1 4 -1 -1 1 1 1 1 1 1 -1 -1
3 100 0 -1 1 -1 -1 1 -1 -1 0 1 1 1 1 1 -1 -1
"""


def test_swf_job_with_overflowing_memory_is_refused_by_name(tmp_path):
    # found by the fuzzer: 2048 processors x 1e308 KB is finite per field, infinite in total;
    # the request's own check refused it without saying which file or job
    path = tmp_path / "huge.swf"
    path.write_text("1 0 5 100 4 2 -1 2048 20 1e308 1 1 1 1 1 -1 -1 -1\n"
                    "2 0 5 100 4 2 -1 4 20 1024 1 1 1 1 1 -1 -1 -1\n")  # fmt: skip
    jobs = io.read_swf(path)
    with pytest.raises(ValueError, match=r"huge\.swf: SWF job 1: .*not a finite amount"):
        io.swf_requests(jobs, memory_property="ram", source=str(path))
    ((_, req),) = io.swf_requests(jobs[1:], memory_property="ram")  # the sane job maps
    path.write_text("7 0 5 100 4 2 -1 1e308 20 -1 1 1 1 1 1 -1 -1 -1\n")  # processors too
    with pytest.raises(ValueError, match=r"huge\.swf: SWF job 7: 1e\+308 processors"):
        io.swf_requests(io.read_swf(path), source=str(path))
    assert req.total == {"cores": 4.0, "ram": 4 * 1024 / 1048576}


def test_swf_reader_and_simulation(tmp_path):
    (tmp_path / "w.swf").write_text(SWF)
    jobs = io.read_swf(tmp_path / "w.swf")
    assert jobs.shape == (3, 18)
    reqs = io.swf_requests(jobs, memory_property="ram", procs_per_node=2)
    assert len(reqs) == 2  # job 3 has no run time
    (t0, r0), (t1, r1) = reqs
    assert (t0, t1) == (0.0, 60.0) and r0.count == 1 and r1.count == 2
    assert r0.total == {"cores": 2.0, "ram": 2.0} and r1.total == {"cores": 4.0}
    (tmp_path / "bad.swf").write_text("1 2 3\n")
    with pytest.raises(InstanceError, match="18 SWF fields"):
        io.read_swf(tmp_path / "bad.swf")
    pool = table1_pool(10, n_slots=12, seed=2)
    sim = simulate(pool, [(t, CollectiveRequest(r.duration, r.count, r.earliest_start,
                                                r.latest_start, {"cores": 0.1}, {"cores": 1.0}))
                          for t, r in reqs])  # fmt: skip
    assert len(sim.records) == 2 and sim.usage.shape[1] == 3
    assert np.all(sim.job_usage >= -1e-12)
    assert sim.summary()["requests"] == 2


def test_simulation_reserves_in_turn():
    from coalloc.collective import ResourcePool

    pool = ResourcePool([[4.0], [4.0]], ["cores"])
    req = CollectiveRequest(600, 2, 0, 3600, {"cores": 3})
    sim = simulate(pool, [(0.0, req)] * 3)
    starts = [r["start"] for r in sim.records]
    assert starts == [0.0, 600.0, 1200.0]
    assert pool.reserved.sum() == 0  # the caller's pool is not modified
    assert sim.job_usage[0, 0] == pytest.approx(6 / 8)


def test_cli_solve_generate_verify_simulate(tmp_path, capsys):
    pool, req = random_instance(8, 2, seed=3, load=0.3)
    io.write_pool(tmp_path / "p.json", pool)
    io.write_request(tmp_path / "r.json", req)
    assert main(["collective", "solve", str(tmp_path / "r.json"), str(tmp_path / "p.json"),
                 "-o", str(tmp_path / "out.json"), "-v"]) == 0  # fmt: skip
    out = json.loads((tmp_path / "out.json").read_text())
    assert verify(req, pool, coallocate(pool, req)).ok and out["verify"]["ok"]
    assert main(["collective", "verify", str(tmp_path / "r.json"), str(tmp_path / "p.json"),
                 str(tmp_path / "out.json")]) == 0  # fmt: skip
    assert main(["collective", "generate", "instance", "--nodes", "20", "--count", "2",
                 "-o", str(tmp_path / "i.json")]) == 0  # fmt: skip
    assert main(["collective", "solve", str(tmp_path / "i.json"), str(tmp_path / "i.json"),
                 "--method", "cankar"]) in (0, 1)  # fmt: skip
    (tmp_path / "w.swf").write_text(SWF)
    assert main(["collective", "simulate", str(tmp_path / "p.json"), str(tmp_path / "w.swf"),
                 "--procs-property", "p0", "-o", str(tmp_path / "u.csv")]) == 0  # fmt: skip
    assert (tmp_path / "u.csv").read_text().startswith("slot_start")
    capsys.readouterr()


def test_cli_bad_input_exit_2(tmp_path, capsys):
    (tmp_path / "bad.json").write_text("{")
    assert main(["collective", "solve", str(tmp_path / "bad.json"), str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not valid JSON" in err[0]


def test_cli_reserve_to_is_atomic(tmp_path):
    pool, req = random_instance(8, 2, seed=3, load=0.3)
    io.write_pool(tmp_path / "p.json", pool)
    io.write_request(tmp_path / "r.json", req)
    assert main(["collective", "solve", str(tmp_path / "r.json"), str(tmp_path / "p.json"),
                 "--reserve-to", str(tmp_path / "p2.json")]) == 0  # fmt: skip
    p2 = io.read_pool(tmp_path / "p2.json")
    res = coallocate(pool, req)
    for j, a in zip(res.resources, res.amounts):
        probe = res.start
        assert np.allclose(p2.reserved_at(probe)[j], pool.reserved_at(probe)[j] + a)


def test_workload_json_and_cli_simulate(tmp_path, capsys):
    from coalloc.collective import ResourcePool

    pool = ResourcePool([[4.0], [4.0]], ["cores"])
    io.write_pool(tmp_path / "p.json", pool)
    (tmp_path / "w.json").write_text(json.dumps({
        "format": "coalloc.collective.workload",
        "requests": [
            {"arrival": 0, "duration": 600, "count": 2, "minimum": {"cores": 3}},
            {"arrival": 10, "duration": 600, "count": 1, "minimum": {"cores": 2},
             "total": {"cores": 2}},
        ]}))  # fmt: skip
    reqs = io.read_workload(tmp_path / "w.json")
    assert [a for a, _ in reqs] == [0.0, 10.0] and reqs[1][1].collective
    sim = simulate(pool, reqs)
    assert [r["start"] for r in sim.records] == [0.0, 600.0]
    assert sim.records[1]["delay"] == 590.0
    assert main(["collective", "simulate", str(tmp_path / "p.json"), str(tmp_path / "w.json"),
                 "--records", str(tmp_path / "r.jsonl")]) == 0  # fmt: skip
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    assert json.loads(lines[1])["start"] == 600.0
    (tmp_path / "bad.json").write_text('{"format": "coalloc.collective.workload", "requests": 3}')
    assert main(["collective", "simulate", str(tmp_path / "p.json"),
                 str(tmp_path / "bad.json")]) == 2  # fmt: skip
    capsys.readouterr()


def test_solve_says_how_the_start_compares_and_json(tmp_path, capsys):
    import json as _json

    from coalloc import collective as col
    from coalloc.cli import main

    pool, request = col.generators.random_instance(14, 4, seed=4, load=0.7, n_slots=24)
    pp, rp = tmp_path / "pool.json", tmp_path / "req.json"
    col.write_pool(pp, pool)
    col.write_request(rp, request)
    assert main(["collective", "solve", str(rp), str(pp)]) == 0
    lines = capsys.readouterr().out.splitlines()
    # referee: the exact brute force says whether an earlier start exists
    best = col.coallocate(pool, request, "brute_force")
    wait = best.start - request.earliest_start
    assert wait > 0
    assert f"proven earliest start: {best.start:g} s, {wait:g} s after" in lines[1]
    assert len([x for x in lines if x.startswith("  n")]) == request.count
    assert main(["collective", "solve", str(rp), str(pp), "--method", "cankar", "--json"]) == 0
    data = _json.loads(capsys.readouterr().out)
    assert data["start"] >= best.start and data["earliest_start"] == request.earliest_start
    res = col.coallocate(pool, request, "cankar")
    assert col.verify(request, pool, res).ok == data["verify"]["ok"]


def test_workload_window_opens_at_the_arrival_as_for_an_swf_job(tmp_path):
    """A JSON workload request arriving at 60 s gets the window an SWF job submitted then gets."""
    from coalloc.collective import DEFAULT_HORIZON
    from coalloc.collective import io as cio

    swf = tmp_path / "w.swf"
    swf.write_text("1 0 5 600 2 -1 -1 2 1200 -1 1 1 1 1 1 -1 -1 -1\n"
                   "2 60 0 300 1 -1 -1 1 600 -1 1 1 1 1 1 -1 -1 -1\n")  # fmt: skip
    referee = cio.swf_requests(cio.read_swf(swf), max_wait=DEFAULT_HORIZON)
    (tmp_path / "w.json").write_text(json.dumps({
        "format": "coalloc.collective.workload",
        "requests": [
            # an SWF job reserves its requested time (field 9)
            {"arrival": 60, "duration": 600, "count": 1},
            {"duration": 1200, "count": 2},
            # explicit fields are kept as written
            {"arrival": 30, "earliest_start": 10, "latest_start": 500, "duration": 5,
             "count": 1},
            {"arrival": 30, "latest_start": 5000, "duration": 5, "count": 1},
        ]}))  # fmt: skip
    got = cio.read_workload(tmp_path / "w.json")
    assert [t for t, _ in got] == [0.0, 30.0, 30.0, 60.0]
    windows = {(t, r.duration): (r.earliest_start, r.latest_start) for t, r in got}
    for arrival, req in referee:
        assert windows[(arrival, req.duration)] == (req.earliest_start, req.latest_start)
    assert windows[(60.0, 600.0)] == (60.0, 60.0 + DEFAULT_HORIZON)
    explicit = [r for t, r in got if t == 30.0]
    assert sorted((r.earliest_start, r.latest_start) for r in explicit) == [
        (10.0, 500.0),
        (30.0, 5000.0),
    ]
