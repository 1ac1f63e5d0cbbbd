"""The shared layer on its own: seeding, the JSON envelope, result helpers, the MILP runner."""

import io
import itertools
import json
import types

import numpy as np
import pytest
import scipy.sparse as sp

from coalloc._shared import milp
from coalloc._shared.jsonio import InstanceError, brief, check_envelope, dump_json, load_json
from coalloc._shared.result import jsonable, relative_gap
from coalloc._shared.seeding import (
    MASK64,
    check_seed,
    instance_seed,
    kernel_seed,
    stream_seed,
    streams,
)
from tests._optional import skip_unless_ci

# --------------------------------------------------------------------------------- seeding


@pytest.mark.parametrize("seed", [0, 7, 2**40 + 3])
def test_streams_are_the_spawned_children_in_order(seed):
    names = ["alpha", "beta", "gamma", "delta"]
    got = streams(seed, names)
    assert list(got) == names
    children = np.random.SeedSequence(seed).spawn(len(names))
    for name, child in zip(names, children):
        np.testing.assert_array_equal(got[name].generate_state(4), child.generate_state(4))
        assert stream_seed(got[name]) == int(child.generate_state(1)[0])
    states = {tuple(s.generate_state(2)) for s in got.values()}
    assert len(states) == len(names)


def test_streams_of_a_seed_sequence_and_a_prefix():
    ss = np.random.SeedSequence(11)
    got = streams(ss, ["a", "b"])
    again = np.random.SeedSequence(11).spawn(2)
    assert stream_seed(got["b"]) == stream_seed(again[1])
    # Appending a stream keeps the old ones (the rule the families follow).
    longer = streams(11, ["a", "b", "c"])
    assert stream_seed(longer["a"]) == stream_seed(streams(11, ["a"])["a"])
    assert stream_seed(longer["b"]) == stream_seed(got["b"])


def test_kernel_seed_of_every_kind():
    assert kernel_seed(5) == 5
    assert kernel_seed(np.int64(9)) == 9
    assert kernel_seed(-1) == MASK64
    assert kernel_seed(2**64 + 3) == 3
    ss = np.random.SeedSequence(42)
    expected = int(np.random.SeedSequence(42).generate_state(1, dtype=np.uint64)[0])
    assert kernel_seed(ss) == expected
    assert expected > 2**32  # a 64-bit word, not a 32-bit one
    gen = np.random.default_rng(3)
    expected = int(np.random.default_rng(3).integers(0, 2**64, dtype=np.uint64))
    assert kernel_seed(gen) == expected
    assert kernel_seed(gen) != expected  # the generator advanced
    fresh = {kernel_seed(None) for _ in range(4)}
    assert len(fresh) == 4 and all(0 <= s <= MASK64 for s in fresh)
    for bad in (True, np.bool_(False), 1.5, "3", [1]):
        with pytest.raises(TypeError, match="seed must be"):
            kernel_seed(bad)


def test_check_seed():
    assert check_seed(None) is None
    assert check_seed(3) == 3
    value = check_seed(np.uint32(7))
    assert value == 7 and type(value) is int
    for bad in (True, False, np.bool_(True), 1.0, 2.5, "1", np.float64(3)):
        with pytest.raises(TypeError, match="myseed must be an int or None"):
            check_seed(bad, "myseed")


def test_instance_seed():
    child = np.random.SeedSequence(7).spawn(3)[2]
    assert instance_seed(7, 2) == int(child.generate_state(1, np.uint32)[0])
    assert instance_seed(7, 2) != instance_seed(7, 1) != instance_seed(8, 1)
    for seed, index in ((-1, 0), (0, -1), (True, 0), (1.0, 0)):
        with pytest.raises(ValueError, match="non-negative integer"):
            instance_seed(seed, index)


# ---------------------------------------------------------------------------------- jsonio


def test_check_envelope():
    check_envelope({"format": "coalloc.x", "version": 1}, "coalloc.x", 1, "f.json")
    check_envelope({}, "coalloc.x", 1, "f.json")  # format optional unless required
    with pytest.raises(InstanceError, match=r"f\.json: format is None, expected 'coalloc\.x'"):
        check_envelope({}, "coalloc.x", 1, "f.json", required=True)
    with pytest.raises(InstanceError, match=r"f\.json: format is 'coalloc\.y'"):
        check_envelope({"format": "coalloc.y"}, "coalloc.x", 1, "f.json")
    with pytest.raises(InstanceError, match=r"f\.json: unsupported version 2"):
        check_envelope({"format": "coalloc.x", "version": 2}, "coalloc.x", 1, "f.json")
    with pytest.raises(InstanceError, match=r"f\.json: expected a JSON object, got list"):
        check_envelope([], "coalloc.x", 1, "f.json")
    assert issubclass(InstanceError, ValueError)
    # a value read from the file is echoed cut short: the message stays one short line
    # (the fuzzing campaign's "formats" finding: a 3,000-character "format" string)
    for doc in ({"format": "coalloc.load" + "F" * 3000 + "\n[[1, 2]]"},
                {"format": "coalloc.x", "version": list(range(5000))}):  # fmt: skip
        with pytest.raises(InstanceError) as err:
            check_envelope(doc, "coalloc.x", 1, "f.json")
        text = str(err.value)
        assert text.startswith("f.json: ") and "\n" not in text and len(text) < 200, text
        assert "..." in text


def test_a_family_reader_echoes_a_long_format_cut_short(tmp_path):
    """``solve-batch``'s reader names an unknown format cut short (the fuzzing campaign's
    "instances" target on the same 3,000-character string)."""
    from coalloc.batch.worker import read_problem

    path = tmp_path / "long.json"
    path.write_text('{"format": "coalloc.load' + "F" * 3000 + '", "cost": [[1]]}')
    with pytest.raises(InstanceError) as err:
        read_problem(str(path))
    text = str(err.value)
    assert "long.json" in text and "not an instance file" in text and len(text) < 600, text


def test_brief():
    assert brief("abc") == "'abc'"
    assert brief("x" * 500, 20) == "'" + "x" * 16 + "..."
    assert len(brief(list(range(10**4)))) == 80


def test_load_json_errors_name_the_file(tmp_path):
    missing = tmp_path / "nope.json"
    with pytest.raises(InstanceError, match=r"nope\.json: cannot read"):
        load_json(missing)
    bad = tmp_path / "bad.json"
    bad.write_text('{"a": 1,\n oops}')
    with pytest.raises(InstanceError, match=r"bad\.json: not valid JSON: .* at line 2"):
        load_json(bad)
    with pytest.raises(InstanceError, match=r"<stream>: not valid JSON"):
        load_json(io.StringIO("[1,"))
    good = tmp_path / "good.json"
    dump_json({"x": [1, 2.5]}, good)
    data, name = load_json(good)
    assert data == {"x": [1, 2.5]} and name == str(good)
    buf = io.StringIO()
    dump_json({"y": 1}, buf)
    assert json.loads(buf.getvalue()) == {"y": 1} and buf.getvalue().endswith("\n")


# ---------------------------------------------------------------------------------- result


def test_jsonable():
    value = {
        1: np.int64(3),
        "a": np.array([[1.5, 2.0]]),
        "t": (np.float32(0.5), [np.bool_(True)]),
        "f": 2.0,
    }
    out = jsonable(value)
    assert out == {"1": 3, "a": [[1.5, 2.0]], "t": [0.5, [True]], "f": 2.0}
    assert type(out["1"]) is int and type(out["t"][1][0]) is bool
    assert type(out["f"]) is float
    json.dumps(out)
    compact = jsonable(value, compact=True)
    assert type(compact["f"]) is int and compact["a"] == [[1.5, 2]]
    assert type(compact["a"][0][1]) is int


def test_relative_gap():
    assert relative_gap(10, 12, sense="max") == pytest.approx(2 / 12)
    # unit-free: relative to the larger of the two, no floor at 1
    assert relative_gap(0, 0.5, sense="max") == pytest.approx(1.0)
    assert relative_gap(0.2, 0.5, sense="max") == relative_gap(2e6, 5e6, sense="max")
    assert relative_gap(4.0, 3.0, sense="min") == pytest.approx(0.25)
    assert relative_gap(0.0, 0.0, sense="min") == 0.0
    assert relative_gap(None, 3.0, sense="min") is None
    assert relative_gap(3.0, None, sense="max") is None


# ------------------------------------------------------------------------------- MILP runner

VALUES = np.array([10.0, 13.0, 7.0, 8.0, 4.0, 9.0])
WEIGHTS = np.array([5.0, 7.0, 4.0, 3.0, 1.0, 6.0])
CAPACITY = 13.0
COST = np.array([[4.0, 1.0, 3.0], [2.0, 0.0, 5.0], [3.0, 2.0, 2.0]])


def knapsack():
    A = sp.csr_matrix(WEIGHTS.reshape(1, -1))
    return VALUES, A, np.array([-np.inf]), np.array([CAPACITY])


def knapsack_optimum():
    best = 0.0
    for pick in itertools.product((0, 1), repeat=len(VALUES)):
        x = np.array(pick)
        if WEIGHTS @ x <= CAPACITY:
            best = max(best, float(VALUES @ x))
    return best


def assignment():
    """x[i, j] (row-major); every row and every column sums to one; minimise the cost."""
    k = COST.shape[0]
    rows = []
    for i in range(k):
        rows.append([1.0 if v // k == i else 0.0 for v in range(k * k)])
    for j in range(k):
        rows.append([1.0 if v % k == j else 0.0 for v in range(k * k)])
    A = sp.csr_matrix(np.array(rows))
    return COST.reshape(-1), A, np.ones(2 * k), np.ones(2 * k)


def assignment_optimum():
    k = COST.shape[0]
    return min(sum(COST[i, p[i]] for i in range(k)) for p in itertools.permutations(range(k)))


def backend_pkg(solver):
    try:
        return milp.import_solver(solver)
    except ImportError as exc:
        skip_unless_ci(f"{solver}: {exc} (optional extra; CI installs coalloc[exact])")


@pytest.mark.parametrize("backend", ["highs", "cbc"])
def test_run_milp_knapsack_and_assignment(backend):
    pkg = backend_pkg(backend)
    c, A, lo, hi = knapsack()
    out = milp.run_milp(backend, pkg, c, A, lo, hi, integrality=np.ones(6), sense="max", seed=1)
    assert out.status == "optimal", out.message
    assert out.solver == backend  # the outcome names the solver that ran
    assert out.x is not None and np.all(np.isin(np.round(out.x), (0, 1)))
    x = np.round(out.x)
    assert WEIGHTS @ x <= CAPACITY
    assert VALUES @ x == knapsack_optimum()
    assert out.bound is None or out.bound == pytest.approx(knapsack_optimum())
    assert out.rows == 1 and not out.infeasible and not out.time_limit_hit
    assert out.message.startswith({"highs": "HiGHS", "cbc": "CBC"}[backend])

    c, A, lo, hi = assignment()
    out = milp.run_milp(backend, pkg, c, A, lo, hi, integrality=np.ones(9), sense="min")
    assert out.status == "optimal", out.message
    x = np.round(out.x).reshape(3, 3)
    assert (x.sum(0) == 1).all() and (x.sum(1) == 1).all()
    assert float((COST * x).sum()) == assignment_optimum()


@pytest.mark.parametrize("backend", ["highs", "cbc"])
def test_run_milp_infeasible(backend):
    pkg = backend_pkg(backend)
    A = sp.csr_matrix(np.ones((1, 2)))
    out = milp.run_milp(
        backend, pkg, np.ones(2), A, np.array([3.0]), np.array([np.inf]), integrality=np.ones(2)
    )
    assert out.status == "infeasible" and out.infeasible and out.x is None


@pytest.mark.parametrize("backend", ["highs", "cbc"])
def test_run_milp_with_a_gap_and_a_time_limit(backend):
    pkg = backend_pkg(backend)
    c, A, lo, hi = knapsack()
    opt = knapsack_optimum()
    out = milp.run_milp(
        backend, pkg, c, A, lo, hi, integrality=np.ones(6), sense="max", mip_gap=0.5,
        time_limit=30.0,
    )  # fmt: skip
    assert out.x is not None and WEIGHTS @ np.round(out.x) <= CAPACITY
    value = float(VALUES @ np.round(out.x))
    assert value >= 0.5 * opt
    if backend == "cbc":
        assert out.status == "feasible"  # a positive gap never proves optimality in CBC
    else:  # HiGHS: optimal only when its bound meets the value
        assert out.status in ("optimal", "feasible")
        if out.status == "optimal":
            assert value == opt
        else:
            assert out.bound is not None and out.bound > value
    # A generous time limit and no gap: proven optimal, and not stopped on time.
    out = milp.run_milp(
        backend, pkg, c, A, lo, hi, integrality=np.ones(6), sense="max", time_limit=30.0
    )
    assert out.status == "optimal" and not out.time_limit_hit
    assert out.time_limit == 30.0


def fake_highs(status, x=None, fun=None, dual=None):
    def run(**kwargs):
        return types.SimpleNamespace(
            status=status, x=x, fun=fun, mip_dual_bound=dual, mip_node_count=3,
            message=f"fake {status}",
        )  # fmt: skip

    return run


@pytest.mark.parametrize(
    "status, has_x, fun, dual, gap, sense, expected",
    [
        (0, True, -5.0, -5.0, 0.0, "max", "optimal"),
        (0, True, -5.0, -7.0, 0.1, "max", "feasible"),  # bound 7 > value 5: gap left
        (0, True, -5.0, -5.0, 0.1, "max", "optimal"),  # the gap closed
        (0, True, 5.0, 4.0, 0.1, "min", "feasible"),
        (0, True, 5.0, 5.0, 0.1, "min", "optimal"),
        (1, True, 5.0, 4.0, 0.0, "min", "time_limit"),  # time limit with a solution
        (1, True, 5.0, 5.0, 0.0, "min", "optimal"),  # stopped, but the bound meets it
        (1, False, None, None, 0.0, "min", "time_limit"),  # time limit without one
        (2, False, None, None, 0.0, "min", "infeasible"),
        (4, False, None, None, 0.0, "min", "error"),
    ],
)
def test_highs_status_table(status, has_x, fun, dual, gap, sense, expected):
    x = np.array([5.0, 0.0]) if has_x else None  # c @ x is the fake's value, 5
    A = sp.csr_matrix(np.ones((1, 2)))
    out = milp.run_milp(
        "highs", fake_highs(status, x, fun, dual), np.ones(2), A, np.zeros(1), np.ones(1),
        integrality=np.ones(2), sense=sense, mip_gap=gap, time_limit=1.0,
    )  # fmt: skip
    assert out.status == expected
    assert (out.x is not None) == has_x  # time_limit keeps the incumbent (SciPy's way)
    assert out.time_limit_hit == (status == 1)
    assert out.infeasible == (status == 2)
    if dual is not None:
        assert out.bound == (-dual if sense == "max" else dual)


def test_run_cpsat_tiny_model():
    try:
        cp_model = milp.import_solver("cpsat")
    except ImportError as exc:
        skip_unless_ci(f"cpsat: {exc} (optional extra; CI installs coalloc[exact])")
    model = cp_model.CpModel()
    xs = [model.NewBoolVar(f"x{i}") for i in range(len(VALUES))]
    model.Add(sum(int(w) * x for w, x in zip(WEIGHTS, xs)) <= int(CAPACITY))
    model.Maximize(sum(int(v) * x for v, x in zip(VALUES, xs)))
    out = milp.run_cpsat(cp_model, model, xs, rows=1, seed=3, time_limit=30.0)
    assert out.status == "optimal", out.message
    assert float(VALUES @ out.x) == knapsack_optimum() == out.bound
    assert out.message == "CP-SAT: OPTIMAL" and out.rows == 1 and out.solver == "cpsat"
    model.Add(sum(xs) >= 7)  # more items than there are
    out = milp.run_cpsat(cp_model, model, xs, rows=2)
    assert out.status == "infeasible" and out.x is None and out.infeasible


def test_cpsat_status_table():
    """UNKNOWN (a limit and no solution) is time_limit; FEASIBLE is time_limit with the
    incumbent when a time limit was given, feasible without one."""
    codes = types.SimpleNamespace(OPTIMAL=4, FEASIBLE=2, INFEASIBLE=3, UNKNOWN=0, MODEL_INVALID=1)

    def fake(code):
        class Solver:
            parameters = types.SimpleNamespace()

            def Solve(self, model):
                return code

            def Value(self, v):
                return 1

            def BestObjectiveBound(self):
                return 9.0

            def StatusName(self, c):
                return f"S{c}"

            def NumBranches(self):
                return 0

        return types.SimpleNamespace(**vars(codes), CpSolver=Solver)

    model = types.SimpleNamespace(Validate=lambda: "bad model")
    table = {4: "optimal", 2: "time_limit", 0: "time_limit", 3: "infeasible", 1: "error"}
    for code, expected in table.items():
        out = milp.run_cpsat(fake(code), model, ["v"], rows=1, time_limit=0.5)
        assert out.status == expected
        assert (out.x is not None) == (code in (4, 2))
        assert out.bound == (9.0 if code in (4, 2) else None)
        if code == 2:
            assert "incumbent" in out.message, out.message
    assert milp.run_cpsat(fake(2), model, ["v"], rows=1).status == "feasible"  # no limit
    assert "bad model" in milp.run_cpsat(fake(1), model, [], rows=0).message


def test_unknown_solvers_and_senses():
    with pytest.raises(ValueError, match="^solver must be one of .*'gurobi'"):
        milp.import_solver("gurobi")
    c, A, lo, hi = knapsack()
    with pytest.raises(ValueError, match="sense"):
        milp.run_milp("highs", None, c, A, lo, hi, integrality=np.ones(6), sense="maximise")
    with pytest.raises(ValueError, match="takes solver 'highs' or 'cbc', got 'cpsat'"):
        milp.run_milp("cpsat", None, c, A, lo, hi, integrality=np.ones(6))
    assert milp.remaining(None) is None
    assert milp.remaining(0.0) == pytest.approx(0.01)


def test_progress_counts_and_closes(capsys):
    from coalloc._shared.progress import progress

    with progress(total=5, desc="work", disable=False) as bar:
        for _ in range(5):
            bar.update(1)
    assert bar.n == 5
    err = capsys.readouterr().err
    assert "work" in err and "5/5" in err
    assert list(progress(range(4), disable=True)) == [0, 1, 2, 3]


def test_dump_json_is_atomic_and_keeps_old_content_on_failure(tmp_path):
    from coalloc._shared.jsonio import dump_json, load_json

    path = tmp_path / "out.json"
    dump_json({"a": 1}, path)
    with pytest.raises(TypeError):
        dump_json({"a": object()}, path)  # fails while serialising: the old file survives
    assert load_json(path)[0] == {"a": 1}

    class Boom(Exception):
        pass

    import coalloc._shared.jsonio as jsonio

    real = jsonio.os.replace

    def exploding_replace(src, dst):
        raise Boom

    jsonio.os.replace = exploding_replace
    try:
        with pytest.raises(Boom):
            dump_json({"a": 2}, path)
    finally:
        jsonio.os.replace = real
    assert load_json(path)[0] == {"a": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]  # no temporary left


@pytest.mark.parametrize(
    "text, match",
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"a": ' + "9" * 5000 + "}", "not valid JSON"),
        ('{"a": NaN}', "NaN is not a number"),
        ('{"a": -Infinity}', "Infinity is not a number"),
    ],
)
def test_load_json_hostile_text_is_an_instance_error(tmp_path, text, match):
    from coalloc._shared.jsonio import InstanceError, load_json

    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(InstanceError, match=match):
        load_json(path)


def test_same_file(tmp_path):
    from coalloc._shared.jsonio import same_file

    a = tmp_path / "a.json"
    a.write_text("{}")
    assert same_file(a, str(tmp_path / "." / "a.json"))
    assert not same_file(a, tmp_path / "b.json")
