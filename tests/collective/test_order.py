"""Demand before supply (issue 23): ``solve(request, pool)``, ``Instance(request, pool)`` and
``coalloc collective solve|verify REQUEST POOL``, with the old order still working.

The referee of every answer is the old call: ``coallocate(pool, request)`` (the paper's
order, unchanged) with the same method and seed must give the same result field by field,
and ``verify`` must accept it.
"""

from __future__ import annotations

import json
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coalloc
import coalloc.collective as co
from coalloc._shared.family import coerce_problem
from coalloc.batch.worker import read_problem
from coalloc.cli import main
from coalloc.collective import io as cio
from tests._plots import mpl, png_is_picture  # noqa: F401
from tests.strategies import collective_instances

FAST = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
METHODS = ("scan", "cankar", "brute_force")


def _same(a: co.CoallocationResult, b: co.CoallocationResult) -> None:
    assert (a.status, a.start, a.method, a.seed) == (b.status, b.start, b.method, b.seed)
    if a.start is None:
        assert b.start is None and a.message == b.message
        return
    np.testing.assert_array_equal(a.resources, b.resources)
    np.testing.assert_array_equal(a.amounts, b.amounts)
    assert a.utilisation == b.utilisation


def _no_deprecation():
    """A context in which a DeprecationWarning of coalloc.collective is an error."""
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.filterwarnings("error", message="coalloc.collective", category=DeprecationWarning)
    return ctx


@FAST
@given(collective_instances(), st.sampled_from(METHODS), st.integers(0, 3))
def test_new_order_gives_the_old_answers(problem, method, seed):
    pool, request = problem
    old = co.coallocate(pool, request, method, seed=seed)
    ctx = _no_deprecation()
    try:
        new = co.solve(request, pool, method, seed=seed)
        inst = co.Instance(request, pool)
        by_instance = inst.solve(method, seed=seed)
        report = co.verify(request, pool, new)
    finally:
        ctx.__exit__(None, None, None)
    _same(new, old)
    _same(by_instance, old)
    if new.start is not None:
        assert report.ok, str(report)
    with pytest.warns(DeprecationWarning, match=r"solve\(request, pool\)"):
        swapped = co.solve(pool, request, method, seed=seed)
    _same(swapped, old)


@pytest.mark.parametrize("seed", range(4))
def test_random_instances_same_seed_same_answer_in_both_orders(seed):
    pool, request = co.generators.random_instance(12, 3, seed=seed, load=0.5, n_slots=16)
    for method in METHODS:
        if method == "brute_force" and pool.n_nodes > 10:
            continue  # C(12, 3) subsets per breakpoint: fine, but cankar/scan suffice here
        old = co.coallocate(pool, request, method, seed=seed)
        new = co.solve(request, pool, method, seed=seed)
        _same(new, old)
        assert new.start is None or co.verify(request, pool, new).ok


def test_default_method_and_none():
    pool, request = co.generators.random_instance(8, 2, seed=1, load=0.3)
    _same(co.solve(request, pool), co.coallocate(pool, request))
    _same(co.solve(request, pool, None), co.coallocate(pool, request, co.DEFAULT_METHOD))


def test_old_order_warns_with_the_new_order_and_points_at_the_caller():
    pool, request = co.generators.random_instance(8, 2, seed=2, load=0.3)
    with pytest.warns(DeprecationWarning) as rec:
        result = co.solve(pool, request)
    assert len(rec) == 1 and "solve(request, pool)" in str(rec[0].message)
    assert rec[0].filename == __file__  # stacklevel: the caller's line, not the library's
    with pytest.warns(DeprecationWarning, match=r"verify\(request, pool, result\)") as rec:
        assert co.verify(pool, request, result).ok
    assert rec[0].filename == __file__
    ctx = _no_deprecation()
    try:  # the domain name keeps the paper's order without a warning
        co.coallocate(pool, request)
        co.Instance(pool, request)
        co.Instance.coerce((pool, request))
    finally:
        ctx.__exit__(None, None, None)


@pytest.mark.parametrize("seed", range(3))
def test_method_functions_take_the_demand_first(seed):
    pool, request = co.generators.random_instance(7, 2, seed=seed, load=0.5, n_slots=10)
    funcs = {"scan": co.scan, "cankar": co.cankar, "brute_force": co.brute_force}
    from coalloc._shared import milp

    if not callable(milp.import_solver("highs")):  # highspy itself, not SciPy's fallback
        funcs["exact"] = co.exact
    for name, func in funcs.items():
        ref = co.coallocate(pool, request, name, seed=seed)
        ctx = _no_deprecation()
        try:
            new = func(request, pool, seed=seed)
        finally:
            ctx.__exit__(None, None, None)
        _same(new, ref)
        with pytest.warns(DeprecationWarning, match=rf"{name}\(request, pool, \.\.\.\)"):
            old = func(pool, request, seed=seed)
        _same(old, ref)


def test_verify_coallocation_and_plot_timetable_take_the_demand_first():
    pool, request = co.generators.random_instance(7, 2, seed=1, load=0.3)
    res = co.coallocate(pool, request)
    args = (res.start, res.resources, res.amounts)
    new = co.verify_coallocation(request, pool, *args, claimed_utilisation=res.utilisation)
    assert new.ok
    with pytest.warns(DeprecationWarning, match=r"verify_coallocation\(request, pool, "):
        old = co.verify_coallocation(pool, request, *args, claimed_utilisation=res.utilisation)
    assert old.to_dict() == new.to_dict()
    bad = co.verify_coallocation(request, pool, res.start, res.resources, 0 * res.amounts)
    assert not bad.ok  # the referee judges, in the new order too


@pytest.mark.usefixtures("mpl")
def test_plot_timetable_in_both_orders():
    pool, request = co.generators.random_instance(7, 2, seed=1, load=0.3)
    res = co.solve(request, pool)
    new = co.plot_timetable(request, pool, res)
    with pytest.warns(DeprecationWarning, match=r"plot_timetable\(request, pool, "):
        old = co.plot_timetable(pool, request, res)
    assert [a.get_title() for a in new.axes] == [a.get_title() for a in old.axes]
    boxes = [len(a.patches) for a in new.axes]
    assert boxes == [len(a.patches) for a in old.axes] and sum(boxes) > 0


def test_a_stopped_result_reads_either_order():
    from coalloc.collective.result import stopped_result

    pool, request = co.generators.random_instance(5, 2, seed=0, load=0.3)
    stop = {"method": "scan", "method_params": {}, "time_limit": 1.0, "elapsed": 1.0}
    a, b = stopped_result(request, pool, **stop), stopped_result(pool, request, **stop)
    assert a.status == b.status == "time_limit" and a.start is None
    assert a.duration == b.duration == request.duration and a.names == b.names == pool.names


def test_wrong_types_are_not_swapped():
    pool, request = co.generators.random_instance(6, 2, seed=3, load=0.3)
    with pytest.raises(TypeError):
        co.solve(request, request)
    with pytest.raises(TypeError):
        co.Instance.coerce((pool, pool))
    with pytest.raises(TypeError):
        co.Instance.coerce((request, pool, request))


def test_instance_fields_coerce_and_old_pickles():
    pool, request = co.generators.random_instance(8, 2, seed=4, load=0.3)
    inst = co.Instance(request, pool)
    assert co.Instance._fields == ("request", "pool")
    assert inst.request is request and inst.pool is pool
    assert tuple(co.Instance(pool, request)) == (request, pool)
    assert tuple(co.Instance(pool=pool, request=request)) == (request, pool)
    for pair in ((request, pool), (pool, request), [pool, request]):
        got = co.Instance.coerce(pair)
        assert got.request is request and got.pool is pool
        assert coerce_problem(pair) == inst
    # an instance pickled before the change holds (pool, request) in its tuple
    old = pickle.loads(pickle.dumps(tuple.__new__(co.Instance, (pool, request))))
    assert isinstance(old.request, co.CollectiveRequest)
    assert isinstance(old.pool, co.ResourcePool)
    _same(old.solve(seed=0), co.coallocate(pool, request))
    new = pickle.loads(pickle.dumps(inst))
    assert isinstance(new.request, co.CollectiveRequest) and isinstance(new.pool, co.ResourcePool)


def test_instance_file_and_batch_in_either_order(tmp_path):
    pool, request = co.generators.random_instance(8, 2, seed=5, load=0.3)
    path = tmp_path / "i.json"
    co.write_instance(path, pool, request)
    data = json.loads(path.read_text())
    assert set(data) >= {"pool", "request"}  # keyed by name: the format is unchanged
    inst = co.Instance.from_dict(data)
    assert isinstance(inst.request, co.CollectiveRequest)
    assert isinstance(inst.pool, co.ResourcePool)
    read = read_problem(path)  # what solve-batch reads: the file's "format" names the family
    assert isinstance(read, co.Instance) and isinstance(read.request, co.CollectiveRequest)
    ref = co.coallocate(pool, request, "cankar", seed=7)
    results = coalloc.solve_many([(request, pool), (pool, request), inst], "cankar", seed=[7, 7, 7],
                                 n_jobs=1)  # fmt: skip
    for res in results:
        _same(res, ref)


# ------------------------------------------------------------------------------- the CLI


@pytest.fixture
def files(tmp_path):
    pool, request = co.generators.random_instance(10, 2, seed=6, load=0.4, n_slots=12)
    pp, rp, ip = tmp_path / "p.json", tmp_path / "r.json", tmp_path / "i.json"
    cio.write_pool(pp, pool)
    cio.write_request(rp, request)
    cio.write_instance(ip, pool, request)
    return pool, request, str(pp), str(rp), str(ip)


def _solve_json(capsys, argv):
    code = main(["collective", "solve", *argv, "--method", "cankar", "--seed", "3", "--json"])
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    doc.pop("timings")
    return code, doc, cap.err


def test_cli_both_orders_give_the_same_answer(files, capsys):
    pool, request, pp, rp, ip = files
    code, new, err = _solve_json(capsys, [rp, pp])
    assert code == 0 and err == "" and new["request"] == rp
    ref = co.coallocate(pool, request, "cankar", seed=3)
    assert new["start"] == ref.start and new["resources"] == ref.resources.tolist()
    assert new["verify"]["ok"] and co.verify(request, pool, ref).ok
    code_old, old, err = _solve_json(capsys, [pp, rp])
    assert code_old == 0 and old == new  # the request file is still named as the request
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "deprecated" in lines[0] and "REQUEST POOL" in lines[0]
    for argv in ([ip, ip], [rp, ip], [ip, pp]):  # an instance file stands for either part
        code, doc, err = _solve_json(capsys, argv)
        assert code == 0 and err == "", argv
        assert {k: doc[k] for k in ("start", "resources", "amounts")} == \
            {k: new[k] for k in ("start", "resources", "amounts")}  # fmt: skip
    for argv in ([pp, ip], [ip, rp]):  # the old order with an instance file: swapped too
        code, doc, err = _solve_json(capsys, argv)
        assert code == 0 and "deprecated" in err, argv
        assert doc["start"] == new["start"] and doc["resources"] == new["resources"]


def test_cli_verify_both_orders(files, tmp_path, capsys):
    pool, request, pp, rp, ip = files
    out = str(tmp_path / "o.json")
    assert main(["collective", "solve", rp, pp, "-o", out]) == 0
    capsys.readouterr()
    assert main(["collective", "verify", rp, pp, out]) == 0
    cap = capsys.readouterr()
    assert cap.out.startswith("admissible") and cap.err == ""
    assert main(["collective", "verify", pp, rp, out]) == 0
    cap = capsys.readouterr()
    assert cap.out.startswith("admissible") and "deprecated" in cap.err
    # a result the referee rejects is rejected in both orders (the check is not skipped)
    doc = json.loads(open(out).read())
    doc["amounts"] = [[0.0] * pool.n_properties for _ in doc["resources"]]
    with open(out, "w") as fh:
        json.dump(doc, fh)
    assert main(["collective", "verify", rp, pp, out]) == 1
    assert main(["collective", "verify", pp, rp, out]) == 1
    capsys.readouterr()


def test_cli_csv_pool_is_a_pool_in_either_position(files, tmp_path, capsys):
    pool, request, pp, rp, ip = files
    csv = tmp_path / "pool.csv"
    # one row per node: its name and capacities (no timetable: an empty pool)
    csv.write_text("node," + ",".join(pool.names) + "\n" + "\n".join(
        f"n{j}," + ",".join(f"{v:g}" for v in pool.capacity[j]) for j in range(pool.n_nodes)
    ) + "\n")  # fmt: skip
    code, new, err = _solve_json(capsys, [rp, str(csv)])
    assert code == 0 and err == ""
    code, old, err = _solve_json(capsys, [str(csv), rp])
    assert code == 0 and "deprecated" in err and old == new


def test_cli_two_requests_are_refused_naming_the_file(files, capsys):
    pool, request, pp, rp, ip = files
    assert main(["collective", "solve", rp, rp]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and rp in err[0] and "coalloc.collective.pool" in err[0]


@pytest.mark.usefixtures("mpl")
def test_cli_plot_takes_the_request_first_and_the_old_order(files, tmp_path, capsys):
    pool, request, pp, rp, ip = files
    res = str(tmp_path / "res.json")
    assert main(["collective", "solve", rp, pp, "-o", res]) == 0
    capsys.readouterr()
    for argv, note in (([rp, pp, res], False), ([pp, rp, res], True), ([rp, pp], False)):
        out = tmp_path / f"tt{len(argv)}{int(note)}.png"
        assert main(["plot", "collective", *argv, "-o", str(out)]) == 0
        cap = capsys.readouterr()
        assert ("deprecated" in cap.err) == note, cap.err
        png_is_picture(out)
