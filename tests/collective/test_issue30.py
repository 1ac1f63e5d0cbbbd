"""Issue 30, collective family: every reproducer of the fuzzing campaign as a test.

Item 1 (0/0 in the utilisation factor), item 2 (CP-SAT rounding the wrong way), item 3 (one
tolerance rule), item 8 (a ledger safe under threads) and the collective part of item 9
(inputs that crashed or silently changed meaning). The referees are the brute-force method
(its own loops and its own statement of the tolerance rule) and the independent verify.
"""

import inspect
import json
import math
import threading

import numpy as np
import pytest

from coalloc.cli import main
from coalloc.collective import METHODS as REGISTERED
from coalloc.collective import CollectiveRequest, ResourcePool, coallocate, io, verify
from coalloc.collective.model import TOLERANCE
from coalloc.collective.verify import verify_coallocation

#: The exact method's solver keyword: ``solver=`` where the family protocol renames it
#: (issue 23), else ``backend=``.
SOLVER = "solver" if "solver" in inspect.signature(REGISTERED["exact"]).parameters else "backend"

METHODS = [
    ("scan", {}),
    ("scan", {"backend": "numpy"}),
    ("cankar", {}),
    ("cankar", {"backend": "numpy"}),
    ("exact", {SOLVER: "highs"}),
    ("exact", {SOLVER: "cbc"}),
    ("exact", {SOLVER: "cpsat"}),
    ("brute_force", {}),
]


def _gpu_pool():
    # node 0 and 1 have no GPU at all: the factor's sum of capacities is 0 on {0, 1}
    return ResourcePool([[4.0, 0.0], [2.0, 0.0], [2.0, 1.0]], ["cores", "gpus"])


# ------------------------------------------------------------------------------ item 1


@pytest.mark.parametrize("method,kw", METHODS)
@pytest.mark.parametrize(
    "request_kw",
    [
        {"minimum": {"cores": 1, "gpus": 0}},
        {"minimum": {"cores": 1}, "total": {"gpus": 0}},
        {"minimum": {"cores": 1, "gpus": 0}, "total": {"cores": 3, "gpus": 0}},
    ],
)
def test_zero_demand_on_zero_capacity_is_no_nan(method, kw, request_kw):
    """0/0 made the factor NaN: "infeasible" (proven) or more than N resources."""
    pool = _gpu_pool()
    req = CollectiveRequest(60, 2, **request_kw)
    res = coallocate(pool, req, method, **kw)
    assert res.start == 0.0, res.message
    assert res.resources.size == 2 and np.all(np.isfinite(res.amounts))
    assert math.isfinite(res.utilisation)
    report = verify(req, pool, res)
    assert report.ok, report.violations
    if method != "cankar":  # a proven answer: the best factor is the brute force's
        ref = coallocate(pool, req, "brute_force")
        assert res.utilisation == pytest.approx(ref.utilisation, rel=1e-12)


def test_zero_demand_factor_prefers_the_set_without_the_property():
    """The rule 0/0 = 1: a set with no GPU wastes none; one with an idle GPU wastes it."""
    pool = _gpu_pool()
    req = CollectiveRequest(60, 2, minimum={"cores": 1, "gpus": 0})
    res = coallocate(pool, req, "brute_force")
    assert sorted(res.resources.tolist()) == [0, 1]
    assert res.utilisation == pytest.approx(2 / 6)  # cores 2 of 6, GPUs 0/0 -> 1


def test_cankar_result_file_has_no_nan_and_verifies(tmp_path, capsys):
    """The paper's method wrote NaN into the result file, which verify then refused."""
    pool = ResourcePool([[4.0, 0.0], [2.0, 0.0], [1.0, 0.0]], ["cores", "gpus"])
    req = CollectiveRequest(60, 2, minimum={"cores": 1, "gpus": 0})
    io.write_instance(tmp_path / "i.json", pool, req)
    out = tmp_path / "r.json"
    rc = main(["collective", "solve", str(tmp_path / "i.json"), str(tmp_path / "i.json"),
               "--method", "cankar", "-o", str(out)])  # fmt: skip
    assert rc == 0
    text = out.read_text()
    assert "NaN" not in text and "Infinity" not in text
    assert math.isfinite(json.loads(text)["utilisation"])
    capsys.readouterr()
    rc = main(["collective", "verify", str(tmp_path / "i.json"), str(tmp_path / "i.json"),
               str(out)])  # fmt: skip
    assert rc == 0 and "admissible" in capsys.readouterr().out


def test_exact_never_returns_more_than_n_resources():
    pool = ResourcePool([[2.0, 0.0]] * 5 + [[2.0, 3.0]], ["cores", "gpus"])
    req = CollectiveRequest(60, 3, minimum={"cores": 1, "gpus": 0})
    for backend in ("highs", "cbc", "cpsat"):
        res = coallocate(pool, req, "exact", **{SOLVER: backend})
        assert res.status == "optimal" and res.resources.size == 3
        assert verify(req, pool, res).ok


# ------------------------------------------------------------------------------ item 2


@pytest.mark.parametrize("method,kw", METHODS)
def test_cpsat_no_longer_rounds_the_wrong_way(method, kw):
    pool = ResourcePool([[3.0], [1.0], [1.0]], ["cores"])
    req = CollectiveRequest(60, 2, minimum={"cores": 1}, total={"cores": 4})
    res = coallocate(pool, req, method, **kw)
    assert res.start == 0.0, res.message
    assert sorted(res.resources.tolist()) in ([0, 1], [0, 2])
    assert verify(req, pool, res).ok


@pytest.mark.parametrize("scale", [1e-9, 1e-3, 1.0, 7.0, 1e6, 1e12])
def test_cpsat_decides_scaled_and_unrepresentable_columns(scale):
    """Availabilities that no 64-bit integer scaling holds exactly (a column spanning 1e-300
    to 1e12): the relaxation proves infeasibility, the conservative model finds sets; no
    answer is "infeasible" where a set exists."""
    from coalloc.collective.exact import feasible_subset

    avail = np.array([[3.0], [1.0], [1.0], [1e-300]]) * scale
    d = np.array([4.0]) * scale
    tol = TOLERANCE * avail.max(axis=0)
    for backend in ("highs", "cbc", "cpsat"):
        status, rows = feasible_subset(avail, d, 2, solver=backend, tol=tol)
        assert status == "feasible" and sorted(rows.tolist()) in ([0, 1], [0, 2])
        status, rows = feasible_subset(avail, d * 1.01, 2, solver=backend, tol=tol)
        assert status == "infeasible" and rows is None


@pytest.mark.parametrize("eps", [5e-8, 3e-9])
def test_float_solvers_never_take_their_own_tolerance_for_the_rule(eps):
    """HiGHS and CBC accept a row 1e-7 short of its bound; such a set fails the rule's
    check on the original data and the start goes to CP-SAT's exact integers: proven
    infeasible, as the rule says, not "feasible" and not left undecided."""
    from coalloc.collective.exact import feasible_subset

    avail, d = np.array([[1.1], [1.1], [0.55]]), np.array([2.2 + 1.1 * eps])
    tol = TOLERANCE * avail.max(axis=0)
    for backend in ("highs", "cbc", "cpsat"):
        assert feasible_subset(avail, d, 2, solver=backend, tol=tol) == ("infeasible", None)
    status, rows = feasible_subset(avail, d - 1.1 * eps, 2, solver="highs", tol=tol)
    assert status == "feasible" and rows.tolist() == [0, 1]


# ------------------------------------------------------------------------------ item 3


def _memory_pool(reserved):
    return ResourcePool([[8.0], [8.0]], ["mem"]).reserve(0, 1000, [0, 1], [[reserved]] * 2)


@pytest.mark.parametrize("method,kw", METHODS)
def test_free_memory_8_minus_6_2_meets_a_minimum_of_1_8_everywhere(method, kw):
    """8.0 - 6.2 = 1.7999999999999998: solvers said "proven infeasible" while verify
    accepted the set and reserve booked it."""
    pool = _memory_pool(6.2)
    assert 8.0 - 6.2 < 1.8
    req = CollectiveRequest(60, 2, minimum={"mem": 1.8})
    res = coallocate(pool, req, method, **kw)
    assert res.start == 0.0, res.message
    assert verify(req, pool, res).ok
    pool.copy().reserve(res.start, req.duration, res.resources, res.amounts)
    # and the collective total: 2 x 1.7999999999999998 against 3.6
    req = CollectiveRequest(60, 2, minimum={"mem": 1.0}, total={"mem": 3.6})
    res = coallocate(pool, req, method, **kw)
    assert res.start == 0.0 and verify(req, pool, res).ok


@pytest.mark.parametrize("method,kw", METHODS)
def test_a_real_shortfall_is_refused_everywhere(method, kw):
    """Beyond the tolerance (1e-6 short of 1.8 GB) every method, verify and reserve refuse."""
    pool = _memory_pool(6.2 + 1e-6)
    req = CollectiveRequest(60, 2, 0, 2000, minimum={"mem": 1.8})
    res = coallocate(pool, req, method, **kw)
    assert res.start == 1000.0  # the earliest start after the reservation ends
    report = verify_coallocation(req, pool, 0.0, [0, 1], [[1.8], [1.8]])
    assert not report.ok
    with pytest.raises(ValueError, match="cannot reserve"):
        pool.copy().reserve(0, 60, [0], [[1.8]])


def test_verify_and_reserve_state_one_rule_at_every_scale():
    """The rule's tolerance follows the property's units: at 1e-9 scale an excess of the
    whole capacity is an error (it was within an absolute 1e-9 before)."""
    for scale in (1e-9, 1.0, 1e12):
        pool = ResourcePool([[4.0 * scale]], ["x"])
        tau = TOLERANCE * 4.0 * scale
        assert pool.tolerance.tolist() == [tau]
        pool.copy().reserve(0, 1, [0], [[4.0 * scale + 0.5 * tau]])
        with pytest.raises(ValueError, match="cannot reserve"):
            pool.copy().reserve(0, 1, [0], [[4.0 * scale + 2 * tau]])
        req = CollectiveRequest(1, 1, minimum={"x": 4.0 * scale})
        assert verify_coallocation(req, pool, 0.0, [0], [[4.0 * scale + 0.5 * tau]]).ok
        assert not verify_coallocation(req, pool, 0.0, [0], [[4.0 * scale + 2 * tau]]).ok


# ------------------------------------------------------------------------------ item 8


def test_forty_threads_on_one_ten_core_node_book_exactly_ten():
    pool = ResourcePool([[10.0]], ["cores"])
    barrier = threading.Barrier(40)
    acks = []

    def worker():
        barrier.wait()
        try:
            pool.reserve(0, 60, [0], [[1.0]])
        except ValueError:
            return
        acks.append(1)

    threads = [threading.Thread(target=worker) for _ in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(acks) == 10
    assert pool.reserved_at(0).tolist() == [[10.0]]


def test_threads_solving_and_reserving_never_overbook():
    """Threads share one pool, each solving with reserve=True; every acknowledged result is
    replayed on a fresh ledger, checked by verify before it is booked there, and the shared
    pool must hold exactly the replayed ledger."""
    rng = np.random.default_rng(5)
    cap = rng.integers(2, 9, (6, 2)).astype(float)
    pool = ResourcePool(cap, ["cores", "ram"])
    original = pool.copy()
    reqs = [
        CollectiveRequest(
            float(rng.choice([60, 120])),
            int(rng.integers(1, 4)),
            0.0,
            600.0,
            minimum={"cores": 1.0, "ram": 0.5},
        )  # fmt: skip
        for _ in range(48)
    ]
    acks, lock = [], threading.Lock()
    barrier = threading.Barrier(8)

    def worker(k):
        barrier.wait()
        for q in range(k, len(reqs), 8):
            method = ("scan", "cankar")[q % 2]
            try:
                res = coallocate(pool, reqs[q], method, seed=q, reserve=True)
            except ValueError:  # lost a race between solving and booking: nothing booked
                continue
            if res.start is not None:
                with lock:
                    acks.append((reqs[q], res))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert acks
    ledger = original.copy()
    for req, res in sorted(acks, key=lambda x: x[1].start):
        report = verify_coallocation(req, ledger, res.start, res.resources, res.amounts)
        assert report.admissible, report.violations
        ledger.reserve(res.start, req.duration, res.resources, res.amounts)
    for t in np.union1d(ledger.times, pool.times):
        assert np.allclose(pool.reserved_at(t), ledger.reserved_at(t), rtol=0, atol=1e-12)
        assert np.all(pool.reserved_at(t) <= cap + pool.tolerance)


def test_reserve_never_clamps_and_release_is_checked():
    pool = ResourcePool([[4.0]], ["cores"])
    with pytest.raises(ValueError, match="only 4 is free"):
        pool.reserve(0, 10, [0], [[5.0]])
    assert pool.reserved_at(0).tolist() == [[0.0]]
    pool.reserve(0, 10, [0], [[3.0]])
    with pytest.raises(ValueError, match="cannot release 4"):
        pool.release(0, 10, [0], [[4.0]])
    with pytest.raises(ValueError, match="cannot release"):
        pool.release(0, 20, [0], [[1.0]])  # [10, 20) holds nothing
    pool.release(2, 5, [0], [[1.0]])
    assert [pool.reserved_at(t)[0, 0] for t in (0, 2, 7, 10)] == [3.0, 2.0, 3.0, 0.0]


def test_reserve_and_release_from_threads_balance():
    pool = ResourcePool([[3.0], [3.0]], ["cores"])
    barrier = threading.Barrier(12)
    errors = []

    def worker(k):
        barrier.wait()
        for _ in range(50):
            try:
                pool.reserve(0, 30, [k % 2], [[1.0]])
            except ValueError:
                continue
            free = 3.0 - pool.reserved_at(0)[k % 2, 0]
            if free < -1e-12:
                errors.append(free)
            pool.release(0, 30, [k % 2], [[1.0]])

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert pool.reserved_at(0).tolist() == [[0.0], [0.0]]


def test_pool_pickles_and_copies_with_its_own_lock():
    import pickle

    pool = ResourcePool([[4.0]], ["cores"]).reserve(0, 10, [0], [[1.0]])
    other = pickle.loads(pickle.dumps(pool))
    assert other._lock is not pool._lock and other.reserved_at(0).tolist() == [[1.0]]
    assert pool.copy()._lock is not pool._lock


# ------------------------------------------------------------------------------ item 9


def _one_line_exit_2(capsys, argv):
    try:
        rc = main(argv)
    except SystemExit as exc:  # refused while parsing (the CLI's strict number types)
        rc = exc.code
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


@pytest.fixture
def sim_files(tmp_path):
    io.write_pool(tmp_path / "p.json", ResourcePool([[4.0], [4.0]], ["cores"]))
    (tmp_path / "w.swf").write_text(
        "1 0 5 100 4 -1 -1 4 120 -1 1 1 1 1 1 -1 -1 -1\n"
        "2 10 5 100 2 -1 -1 2 120 -1 1 1 1 1 1 -1 -1 -1\n"
    )
    return str(tmp_path / "p.json"), str(tmp_path / "w.swf")


@pytest.mark.parametrize(
    "option,word",
    [
        (["--slot-seconds", "0"], "--slot-seconds"),
        (["--slot-seconds", "inf"], "--slot-seconds"),
        (["--procs-per-node", "-1"], "--procs-per-node"),
        (["--procs-per-node", "0"], "--procs-per-node"),
        (["--max-wait", "nan"], "--max-wait"),
        (["--limit", "-1"], "--limit"),
        (["--limit", "1_0"], "--limit"),
    ],
)
def test_simulate_refuses_bad_options_in_one_line(capsys, sim_files, option, word):
    err = _one_line_exit_2(capsys, ["collective", "simulate", *sim_files, *option])
    assert word in err


def test_limit_zero_and_positive_still_work(capsys, sim_files, tmp_path):
    for limit, jobs in (("0", 2), ("1", 1)):
        out = tmp_path / f"rec{limit}.jsonl"
        assert main(["collective", "simulate", *sim_files, "--limit", limit, "--records",
                     str(out)]) == 0  # fmt: skip
        assert len(out.read_text().splitlines()) == jobs


@pytest.mark.parametrize("token", ["1_0", "\u0661\u0660", "\uff11", "0x10", "1e5_0"])
def test_swf_reads_ascii_decimal_numbers_only(capsys, tmp_path, sim_files, token):
    path = tmp_path / "u.swf"
    path.write_text(f"1 0 5 100 {token} -1 -1 4 120 -1 1 1 1 1 1 -1 -1 -1\n", encoding="utf-8")
    err = _one_line_exit_2(capsys, ["collective", "simulate", sim_files[0], str(path)])
    assert "u.swf:1: SWF field 5" in err


@pytest.mark.parametrize("token", ["1_0", "\u0664", "nan"])
def test_csv_pool_reads_ascii_decimal_numbers_only(tmp_path, token):
    from coalloc._shared.jsonio import InstanceError

    (tmp_path / "p.csv").write_text(f"node,cores\nn0,{token}\n", encoding="utf-8")
    with pytest.raises(InstanceError, match="p.csv:2: capacities must be numbers"):
        io.read_pool_csv(tmp_path / "p.csv")
    (tmp_path / "u.csv").write_text(f"node,property,slot,reserved\nn0,cores,{token},1\n")
    (tmp_path / "p.csv").write_text("node,cores\nn0,4\n")
    with pytest.raises(InstanceError, match="u.csv: bad usage row"):
        io.read_pool_csv(tmp_path / "p.csv", tmp_path / "u.csv")


def test_swf_requests_validates_its_arguments():
    jobs = io.read_swf(__import__("io").StringIO("1 0 5 100 4 -1 -1 4 120 -1 1 1 1 1 1 -1 -1 -1\n"))
    for kw in ({"procs_per_node": -1.0}, {"procs_per_node": math.inf}, {"max_wait": -1.0},
               {"max_wait": math.nan}, {"time_offset": math.inf}):  # fmt: skip
        with pytest.raises(ValueError, match=next(iter(kw))):
            io.swf_requests(jobs, **kw)
    with pytest.raises(TypeError, match="procs_per_node"):
        io.swf_requests(jobs, procs_per_node="2")


def test_result_file_with_a_400_digit_start(capsys, tmp_path):
    pool = ResourcePool([[4.0], [2.0]], ["cores"])
    req = CollectiveRequest(60, 2, minimum={"cores": 1})
    io.write_instance(tmp_path / "i.json", pool, req)
    res = coallocate(pool, req)
    io.write_result(tmp_path / "r.json", res)
    data = json.loads((tmp_path / "r.json").read_text())
    text = json.dumps(data).replace('"start": 0.0', '"start": ' + "9" * 400)
    assert "9" * 400 in text
    (tmp_path / "bad.json").write_text(text)
    inst = str(tmp_path / "i.json")
    err = _one_line_exit_2(capsys, ["collective", "verify", inst, inst, str(tmp_path / "bad.json")])
    assert "start must be a finite number" in err
    assert main(["collective", "verify", inst, inst, str(tmp_path / "r.json")]) == 0


def test_simulate_validates_in_the_model_layer():
    from coalloc.collective.simulate import simulate

    pool = ResourcePool([[4.0]], ["cores"])
    reqs = [(0.0, CollectiveRequest(60, 1, minimum={"cores": 1}))]
    with pytest.raises(ValueError, match="slot_seconds"):
        simulate(pool, reqs, slot_seconds=0)
    with pytest.raises(ValueError, match="horizon"):
        simulate(pool, reqs, horizon=math.inf)
    with pytest.raises(ValueError, match="arrival"):
        simulate(pool, [(math.nan, reqs[0][1])])
    # a property the pool has none of: usage 0, not NaN
    sim = simulate(ResourcePool([[4.0, 0.0]], ["cores", "gpus"]),
                   [(0.0, CollectiveRequest(60, 1, minimum={"cores": 1, "gpus": 0}))])  # fmt: skip
    assert np.all(np.isfinite(sim.usage))


@pytest.mark.parametrize(
    "method,param",
    [
        ("cankar", {"l2": 10**30}),
        ("cankar", {"l1": 10**7}),
        ("cankar", {"max_retries": 10**30}),
        ("scan", {"max_rounds": 10**30}),
        ("scan", {"enumerate_limit": 10**30}),
        ("scan", {"block": 10**30}),
        ("exact", {"enumerate_limit": 10**30}),
        ("brute_force", {"max_combinations": 10**30}),
    ],
)
def test_unbounded_parameters_are_refused(method, param):
    pool = ResourcePool([[4.0], [2.0]], ["cores"])
    req = CollectiveRequest(60, 2, minimum={"cores": 1})
    with pytest.raises(ValueError, match=next(iter(param))):
        coallocate(pool, req, method, **param)


def test_unbounded_parameter_on_the_cli_is_one_line(capsys, tmp_path):
    pool = ResourcePool([[4.0], [2.0]], ["cores"])
    io.write_instance(tmp_path / "i.json", pool, CollectiveRequest(60, 2, minimum={"cores": 1}))
    inst = str(tmp_path / "i.json")
    err = _one_line_exit_2(capsys, ["collective", "solve", inst, inst, "--method", "cankar",
                                    "-p", "l2=10**30"])  # fmt: skip
    assert "l2" in err


def test_generate_refuses_a_pool_beyond_memory_in_one_line(capsys, tmp_path):
    """A MemoryError traceback (exit 1) before: 10**10 nodes of one day of slots."""
    err = _one_line_exit_2(
        capsys,
        [
            "collective",
            "generate",
            "pool",
            "--nodes",
            "10000000000",
            "-o",
            str(tmp_path / "p.json"),
        ],  # fmt: skip
    )
    assert "10000000000 nodes" in err and not (tmp_path / "p.json").exists()
