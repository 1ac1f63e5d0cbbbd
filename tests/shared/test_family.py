"""The family protocol (issue 23): a toy sixth family, the GAP as a batch kind, one report shape.

The toy family below is what docs/architecture.md's "Adding a sixth family" asks for, in
one test module: a model, two methods, an independent verify, a file format, and the one
registration line (``register_family``); solve, verify, solve_many (threads, processes,
serial, files) and its ``coalloc knapsack`` command group then work without touching the
batch layer or the CLI.
"""

from __future__ import annotations

import importlib
import itertools
import json
from dataclasses import dataclass
from numbers import Integral
from typing import Any, List, NamedTuple, Optional

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coalloc
from coalloc import FamilyInstance, Report, Result, solve_many
from coalloc._shared.constraints import Interval, checked
from coalloc._shared.family import (
    FamilySpec,
    FileFormat,
    NoSolutionReport,
    coerce_problem,
    families,
    kind_of_format,
    register_family,
    unregister_family,
)
from coalloc._shared.family_generate import Generated
from coalloc._shared.jsonio import InstanceError, check_envelope
from coalloc._shared.params import check_method
from coalloc._shared.params import time_limit as check_time_limit
from coalloc._shared.schema import AnyValue, ListOf, Num, Obj, check
from coalloc._shared.seeding import check_seed
from coalloc.batch import BatchError, instance_seed
from coalloc.cli import main

# ------------------------------------------------------------------ a toy sixth family


class Items:
    """Values and weights of the items (validated once, read-only)."""

    def __init__(self, values, weights):
        self.values = np.array(values, dtype=float)
        self.weights = np.array(weights, dtype=float)
        if self.values.shape != self.weights.shape or self.values.ndim != 1:
            raise ValueError("values and weights must be 1-D of one length")
        if (self.weights < 0).any():
            raise ValueError("weights must be non-negative")
        self.values.flags.writeable = self.weights.flags.writeable = False


class Sack:
    """The knapsack's capacity."""

    def __init__(self, capacity):
        self.capacity = float(capacity)
        if not self.capacity >= 0:
            raise ValueError("capacity must be non-negative")


@dataclass(kw_only=True, eq=False)
class PackResult(Result):
    chosen: Optional[List[int]] = None

    def _payload(self) -> dict:
        return {"chosen": self.chosen}


@dataclass
class PackReport(Report):
    fits: bool
    value: float
    matches: bool

    @property
    def ok(self) -> bool:
        return self.fits and self.matches

    def to_dict(self) -> dict:
        return {"ok": self.ok, "fits": self.fits, "value": self.value, "matches": self.matches}


def greedy(items, sack, *, seed=0, shuffle=False, time_limit=None):
    """Best value per weight first; ``shuffle`` breaks ties at random (uses the seed).
    Instant, so ``time_limit`` (checked) never stops it."""
    check_seed(seed)
    check_time_limit(time_limit)
    order = list(range(len(items.values)))
    if shuffle:
        np.random.default_rng(seed).shuffle(order)
    order.sort(key=lambda i: -items.values[i] / max(items.weights[i], 1e-12))
    chosen, load = [], 0.0
    for i in order:
        if load + items.weights[i] <= sack.capacity:
            chosen.append(i)
            load += items.weights[i]
    value = float(sum(items.values[chosen]))
    return PackResult(status="feasible", message="greedy", method="greedy", chosen=sorted(chosen),
                      objective=value, seed=seed)


def brute_force(items, sack, *, seed=0, fail=False, time_limit=None):
    """Every subset; ``fail`` reports no solution (a result without one, for verify). The
    toy's instances are small: ``time_limit`` (checked) never stops it."""
    check_seed(seed)
    check_time_limit(time_limit)
    if fail:
        return PackResult(status="infeasible", message="asked to fail", method="exact", seed=seed)
    n = len(items.values)
    best, best_set = -1.0, []
    for r in range(n + 1):
        for subset in itertools.combinations(range(n), r):
            if sum(items.weights[list(subset)]) <= sack.capacity:
                value = float(sum(items.values[list(subset)]))
                if value > best:
                    best, best_set = value, list(subset)
    return PackResult(status="optimal", message="all subsets", method="exact", chosen=best_set,
                      objective=best, bound=best, gap=0.0, seed=seed)


TOY_METHODS = {"greedy": greedy, "exact": brute_force}


def pack(items, sack, method="greedy", *, seed=0, **params):
    return TOY_METHODS[check_method(method, TOY_METHODS)](items, sack, seed=seed, **params)


def verify_pack(items, sack, chosen, claimed=None) -> PackReport:
    """Independent of the solvers: recompute weight and value from the chosen indices."""
    weight = sum(float(items.weights[i]) for i in set(chosen))
    value = sum(float(items.values[i]) for i in set(chosen))
    fits = len(set(chosen)) == len(chosen) and weight <= sack.capacity
    return PackReport(fits, value, claimed is None or abs(value - claimed) <= 1e-9)


class _Parts(NamedTuple):
    items: Items
    sack: Sack


#: The toy's file format, as its reader checks it (the published schema is made from it).
TOY_SCHEMA = Obj({"format": (AnyValue(), False), "version": (AnyValue(), False),
                  "values": (ListOf(Num()), True), "weights": (ListOf(Num(0)), True),
                  "capacity": (Num(0), True)})  # fmt: skip


class KnapsackInstance(FamilyInstance, _Parts):
    __slots__ = ()
    family = "knapsack"
    format = "toy.knapsack.instance"
    METHODS = TOY_METHODS
    DEFAULT_METHOD = "greedy"
    SOLUTION_FIELD = "chosen"
    _solve_function = staticmethod(pack)

    def _verify_solution(self, result):
        return verify_pack(self.items, self.sack, result.chosen, claimed=result.objective)

    @staticmethod
    def _fields_from_dict(data, *, source):
        check(data, TOY_SCHEMA, source)
        check_envelope(data, "toy.knapsack.instance", 1, source)
        try:
            return Items(data["values"], data["weights"]), Sack(data["capacity"])
        except (KeyError, TypeError, ValueError) as exc:
            raise InstanceError(f"{source}: {exc}") from None


def to_dict(inst: KnapsackInstance) -> dict:
    return {"format": "toy.knapsack.instance", "version": 1,
            "values": inst.items.values.tolist(), "weights": inst.items.weights.tolist(),
            "capacity": inst.sack.capacity}  # fmt: skip


def add_plot(fams) -> None:
    """``coalloc plot knapsack FILE -o PIC``: the items' values, the chosen ones marked."""
    from coalloc.cli.plot import picture_done, picture_options, picture_params

    def run(args) -> int:
        import matplotlib.pyplot as plt

        from coalloc.batch import read_problem

        inst = read_problem(args.file)
        result = inst.solve(args.method, seed=args.seed, **picture_params(args))
        fig, ax = plt.subplots()
        ax.bar(range(len(inst.items.values)), inst.items.values,
               color=["C1" if i in result.chosen else "C0"
                      for i in range(len(inst.items.values))])  # fmt: skip
        return picture_done(fig, args)

    p = fams.add_parser("knapsack", help="the items, the chosen ones in orange")
    p.add_argument("file", help="toy knapsack instance file (JSON)")
    picture_options(p, "shuffle=true")
    p.set_defaults(func=run)


#: The toy generator's parameters, declared once (as every family's ``GENERATORS``).
GENERATORS = {"toy_knapsack": {"n_items": [Interval(Integral, 1, 50)]}}


@checked(__name__, "toy_knapsack", tables="GENERATORS")
def toy_knapsack(n_items: int = 8, *, seed: int = 0) -> KnapsackInstance:
    """A random toy knapsack.

    Parameters
    ----------
    n_items : int
        Items to choose from.
    seed : int
        Seed of the values and weights.
    """
    return random_instance(seed, n_items)


def _write_toy(path: str, kw: dict, args) -> str:
    inst = toy_knapsack(**kw["toy_knapsack"])
    with open(path, "w") as fh:
        json.dump(to_dict(inst), fh)
    return f"wrote a toy knapsack ({len(inst.items.values)} items) to {path}"


def write_toy_text(path: str, inst: KnapsackInstance) -> None:
    """The toy's line format: ``capacity C``, then one ``value weight`` line per item."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"capacity {inst.sack.capacity!r}\n")
        for v, w in zip(inst.items.values.tolist(), inst.items.weights.tolist()):
            fh.write(f"{v!r} {w!r}\n")


def read_toy_text(path: str) -> KnapsackInstance:
    """Read :func:`write_toy_text`'s file; anything else is refused naming the file."""
    try:
        with open(path, encoding="utf-8") as fh:
            head, *rows = [line.split() for line in fh if line.strip()]
        if len(head) != 2 or head[0] != "capacity" or any(len(r) != 2 for r in rows):
            raise ValueError("expected 'capacity C' and then 'value weight' lines")
        return KnapsackInstance(Items([float(r[0]) for r in rows], [float(r[1]) for r in rows]),
                                Sack(float(head[1])))  # fmt: skip
    except (ValueError, OSError, UnicodeDecodeError) as exc:
        raise InstanceError(f"{path}: not a toy knapsack text file: {exc}") from None


def toy_spec() -> FamilySpec:
    """The toy family's whole spec: kinds, a file format and a line format, an example, a
    plot command, what ``generate`` writes."""
    from coalloc._shared.formats_line import LineFormat

    fmt = FileFormat("toy.knapsack.instance", "a toy 0/1 knapsack: values, weights, capacity",
                     TOY_SCHEMA, examples=lambda: [to_dict(random_instance(1))],
                     dump=to_dict, option="json", holds=("instance",))  # fmt: skip
    text = LineFormat("toy.knapsack.text", "a toy knapsack as text", option="toytext",
                      detect=("text",), read=read_toy_text, write=write_toy_text,
                      holds=("instance",), sample=lambda: random_instance(2, 5))  # fmt: skip
    return FamilySpec("knapsack", "Toy knapsack", "a toy 0/1 knapsack", (KnapsackInstance,),
                      formats=(fmt,), plot=__name__,
                      example=lambda seed=0: random_instance(seed),
                      generate=(Generated("random", (toy_knapsack,), _write_toy),),
                      line_formats=(text,))  # fmt: skip


@pytest.fixture
def toy_family():
    # The one line a sixth family needs outside its folder (here: outside its module).
    register_family(toy_spec())
    try:
        yield KnapsackInstance
    finally:
        unregister_family("knapsack")


def random_instance(seed: int, n: int = 8) -> KnapsackInstance:
    rng = np.random.default_rng(seed)
    values, weights = rng.integers(1, 20, n), rng.integers(1, 10, n)
    return KnapsackInstance(Items(values, weights), Sack(float(weights.sum()) / 2))


# ------------------------------------------------------------------ the toy family works


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 9))
def test_toy_solve_and_verify_against_brute_force(seed, n):
    inst = random_instance(seed, n)
    exact, heuristic = inst.solve("exact"), inst.solve(seed=seed)
    assert inst.verify(exact).ok and inst.verify(heuristic).ok
    assert heuristic.objective <= exact.objective + 1e-9  # the referee bounds the heuristic
    bad = PackResult(status="feasible", method="greedy", chosen=list(range(n)),
                     objective=float(sum(inst.items.values)))
    assert inst.verify(bad).ok == (inst.items.weights.sum() <= inst.sack.capacity)


def test_toy_family_is_registered_and_batched(toy_family, tmp_path):
    assert "knapsack" in families() and "knapsack" in coalloc.cli.GROUPS
    assert kind_of_format("toy.knapsack.instance") is KnapsackInstance
    batch = [random_instance(s) for s in range(5)]
    pairs = [tuple(inst) for inst in batch]  # the bare (Items, Sack) pairs are coerced
    assert coerce_problem(pairs[0]) == batch[0]
    files = []
    for k, inst in enumerate(batch):
        path = tmp_path / f"k{k}.json"
        path.write_text(json.dumps(to_dict(inst)))
        files.append(str(path))
    runs = {
        "serial": solve_many(batch, "greedy", executor="serial", seed=3, shuffle=True),
        "threads": solve_many(pairs, "greedy", n_jobs=2, seed=3, shuffle=True),
        "files": solve_many(files, "greedy", family="knapsack", seed=3, shuffle=True),
        "processes": solve_many(batch, "greedy", executor="processes", n_jobs=2, seed=3,
                                shuffle=True),
    }  # fmt: skip
    for i, inst in enumerate(batch):
        alone = inst.solve("greedy", seed=instance_seed(3, i), shuffle=True)
        for name, results in runs.items():
            assert results[i].chosen == alone.chosen, name
            assert inst.verify(results[i]).ok, name
    # the family's parameters are checked before any work, by its own METHODS
    with pytest.raises(TypeError, match="speed"):
        solve_many(batch, "greedy", family="knapsack", speed=3)
    # a problem of another family in a batch for this family is recorded, not solved
    ctaap_inst = coalloc.ctaap.Instance(*coalloc.ctaap.generators.fig2(1, n_tasks=5, seed=1))
    mixed = solve_many([batch[0], ctaap_inst], family="knapsack", executor="serial")
    assert isinstance(mixed[1], BatchError) and "ctaap problem" in mixed[1].message


def test_toy_family_command_group(toy_family, tmp_path, capsys):
    inst = random_instance(7)
    path = tmp_path / "k.json"
    path.write_text(json.dumps(to_dict(inst)))
    assert main(["knapsack", "solve", str(path), "--method", "exact"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["ok"] and line["verify"]["fits"]
    assert line["objective"] == inst.solve("exact").objective
    out = tmp_path / "out.jsonl"
    assert main(["knapsack", "solve-batch", str(path), str(path), "--no-progress",
                 "-p", "fail=true", "--method", "exact", "-o", str(out)]) == 1  # fmt: skip
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["status"] for x in lines] == ["infeasible", "infeasible"]
    assert lines[0]["verify"]["solution"] is False and not lines[0]["ok"]
    assert main(["knapsack", "solve-batch", str(path), "--no-progress", "-o", str(out)]) == 0
    # generate: from the spec's declaration alone (no CLI module), the API's instance
    made = tmp_path / "made.json"
    assert main(["knapsack", "generate", "--n-items", "5", "--seed", "3", "-o", str(made)]) == 0
    assert json.loads(made.read_text()) == to_dict(random_instance(3, 5))
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(["knapsack", "generate", "--n-items", "0", "-o", str(tmp_path / "no.json")])
    assert exc.value.code == 2 and "n_items must be" in capsys.readouterr().err
    assert not (tmp_path / "no.json").exists()
    # once unregistered, the group is gone
    unregister_family("knapsack")
    with pytest.raises(SystemExit):
        main(["knapsack", "solve", str(path)])


def test_a_spec_is_checked():
    with pytest.raises(ValueError, match="already belong"):
        register_family(FamilySpec("clash", "t", "s", (_clash_kind(),)))
    assert "clash" not in families()
    with pytest.raises(TypeError, match="not a FamilyInstance"):
        FamilySpec("bad", "t", "s", (int,))
    with pytest.raises(ValueError, match="family is"):
        FamilySpec("other", "t", "s", (KnapsackInstance,))


def _clash_kind():
    class Clash(FamilyInstance, _Parts):
        __slots__ = ()
        family = "clash"
        format = "coalloc.instance"  # CTAAP's
        METHODS = TOY_METHODS
        DEFAULT_METHOD = "greedy"

    return Clash


# ------------------------------------------------------------------ the five families and the GAP


def test_every_family_is_registered_once_with_its_cli_and_format():
    specs = families()
    assert list(specs)[:5] == list(coalloc.FAMILIES)
    formats = [kind.format for spec in specs.values() for kind in spec.kinds]
    assert len(formats) == len(set(formats))
    for name in coalloc.FAMILIES:
        main_kind = specs[name].kinds[0]
        assert main_kind is getattr(coalloc, name).Instance
        assert main_kind.methods == tuple(getattr(coalloc, name).METHODS)
        assert specs[name].cli == specs[name].plot == f"coalloc.{name}.cli"  # in its folder
        old = importlib.import_module(f"coalloc.cli.{name}")  # the old name: the same module
        assert old is importlib.import_module(specs[name].cli)


def test_the_gap_is_a_batch_kind(tmp_path):
    ls = coalloc.loadshare
    gaps = [ls.generate_gap("c", 4, 12, seed=s) for s in range(3)]
    problem = ls.generators.paper_setup(n_nodes=40, seed=1)
    path = tmp_path / "g.json"
    path.write_text(json.dumps(ls.gap_to_dict(gaps[2])))
    batch = [gaps[0], ls.GapProblem(gaps[1]), str(path), problem, ls.Instance(problem)]
    results = solve_many(batch, family="loadshare", executor="serial", seed=4)
    assert [r.method for r in results] == ["portfolio"] * 3 + [ls.DEFAULT_METHOD] * 2
    for i, (item, result) in enumerate(zip(batch, results)):
        inst = coerce_problem(item) if not isinstance(item, str) else ls.GapProblem(gaps[2])
        assert inst.verify(result).ok
        # the same answer as the family's own functions, with the batch's seed
        if inst.kind == "gap":
            alone = ls.solve_gap(inst.instance, seed=instance_seed(4, i))
            assert result.assignment.tolist() == alone.assignment.tolist()
            report = ls.verify_gap(inst.instance, alone.assignment, claimed=alone.objective)
            assert report.ok
        else:
            alone = ls.share(problem, seed=instance_seed(4, i))
            assert result.placement.tolist() == alone.placement.tolist()
    exact = solve_many(gaps, "exact", executor="serial", sense="max")
    for g, result in zip(gaps, exact):
        assert result.status == "optimal" and ls.GapProblem(g).verify(result).ok
        assert result.objective == ls.solve_gap(g, "exact", sense="max").objective
    with pytest.raises(TypeError, match="speed"):
        solve_many(gaps, "heuristic", family="loadshare", speed=1)
    # a GAP result claiming a wrong objective is caught by the verify the kind wires
    wrong = exact[0]
    wrong.objective += 1
    assert not ls.GapProblem(gaps[0]).verify(wrong).ok


def test_gap_json_round_trip_and_strict_reading():
    ls = coalloc.loadshare
    g = ls.generate_gap("d", 3, 5, seed=2)
    same = ls.GapProblem.from_dict(ls.gap_to_dict(g)).instance
    assert (same.cost == g.cost).all() and (same.weight == g.weight).all()
    bad = ls.gap_to_dict(g)
    bad["weight"][0][0] = -1
    with pytest.raises(InstanceError, match=r"^g\.json: weight"):
        ls.GapProblem.from_dict(bad, source="g.json")
    bad = ls.gap_to_dict(g)
    bad["capacity"] = bad["capacity"][:-1]
    with pytest.raises(InstanceError, match=r"^g\.json: "):
        ls.GapProblem.from_dict(bad, source="g.json")


def _no_solution_cases() -> List[Any]:
    ls, tb, tm, co, ct = (coalloc.loadshare, coalloc.testbed, coalloc.taskmap,
                          coalloc.collective, coalloc.ctaap)  # fmt: skip
    ptop = tb.parse_ptop("node sw switch:1\nnode a pc:1\nlink la a sw 100 0 0")
    top = tb.parse_top("node x pc\nnode y pc\nlink l x y 100 0 0")  # two nodes, one pc
    tasks = tm.TaskGraph([1.0, 2.0], [[0, 1], [1, 0]])
    res = tm.ResourceGraph.from_edges([0, 3.0], [[0, 1]], [50.0])
    pool = co.ResourcePool([[1.0, 1.0]], ["cores", "ram"])
    req = co.CollectiveRequest(3600, 2, minimum={"cores": 1, "ram": 1})  # two nodes, one pool
    gap = ls.GapInstance([[1, 1]], [[2, 2]], [1])  # no item fits
    return [
        (tb.Instance(top, ptop), "assign+"),
        (co.Instance(req, pool), "scan"),
        (ls.GapProblem(gap), "exact"),
        (tm.Instance(tasks, res), None),
        (ct.Instance(*ct.generators.fig2(1, n_tasks=5, seed=1)), None),
        (ls.Instance(ls.LoadSharingProblem([1.0], [1.0], [0])), None),
    ]


@pytest.mark.parametrize("case", range(6))
def test_verify_has_one_shape_for_a_result_without_a_solution(case):
    inst, method = _no_solution_cases()[case]
    result = inst.solve(method) if method else None
    if result is None:  # the family's solvers always solve these: strip the solution
        result = inst.solve()
        setattr(result, inst.SOLUTION_FIELD, None)
        result.status = "error"
    assert not result.has_solution
    report = inst.verify(result)
    assert isinstance(report, NoSolutionReport) and not report.ok
    assert report.status == result.status and result.status in report.violations[0]
    assert report.to_dict()["solution"] is False and report.to_dict()["ok"] is False


# ------------------------------------------------------------------ solver= in every family


def _exact_cases():
    ls, tb, tm, co, ct = (coalloc.loadshare, coalloc.testbed, coalloc.taskmap,
                          coalloc.collective, coalloc.ctaap)  # fmt: skip
    ptop = tb.parse_ptop("node sw switch:1\nnode a pc:1\nnode b pc:1\n"
                         "link la a sw 1000 0 0\nlink lb b sw 1000 0 0")  # fmt: skip
    top = tb.parse_top("node x pc\nnode y pc\nlink l x y 100 0 0")
    tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    pool = co.ResourcePool([[4.0, 8.0], [2.0, 2.0], [1.0, 4.0]], ["cores", "ram"])
    req = co.CollectiveRequest(3600, 2, minimum={"cores": 1, "ram": 1}, total={"ram": 6})
    return [
        (ct.Instance(*ct.generators.fig2(1, n_tasks=8, seed=1)), ("highs", "cbc", "cpsat")),
        (tm.Instance(tasks, res), ("highs", "cbc")),
        (co.Instance(req, pool), ("highs", "cpsat")),
        (
            ls.Instance(ls.LoadSharingProblem([10, 10, 10], [8, 7, 6, 3], [0, 0, 0, 1])),
            ("highs", "cbc"),
        ),
        (
            ls.GapProblem(ls.GapInstance([[1, 9, 4], [9, 1, 4]], [[1, 1, 1], [1, 1, 1]], [2, 2])),
            ("cpsat", "highs"),
        ),
        (tb.Instance(top, ptop), ("cpsat",)),
    ]


@pytest.mark.slow
@pytest.mark.parametrize("case", range(6))
def test_solver_chooses_the_ip_solver_in_every_family(case):
    inst, solvers = _exact_cases()[case]
    assert "solver" in __import__("inspect").signature(inst.METHODS["exact"]).parameters
    inst.check_params("exact", {"solver": solvers[0], "time_limit": 30}
                      if inst.family != "testbed" else {"solver": "cpsat"})  # fmt: skip
    for solver in solvers:
        new = inst.solve("exact", solver=solver)
        assert new.status == "optimal" and inst.verify(new).ok
        if inst.family == "testbed":
            continue
        with pytest.warns(DeprecationWarning, match="solver="):
            old = inst.solve("exact", backend=solver)
        assert old.objective == new.objective and old.params == new.params
        if solver != solvers[0]:
            with pytest.raises(TypeError, match="disagree"):
                inst.solve("exact", solver=solvers[0], backend=solver)
    # through a batch, as a keyword (no options= detour)
    batch = solve_many([inst, inst], "exact", executor="serial", solver=solvers[-1])
    assert [r.objective for r in batch] == [new.objective] * 2


def test_the_command_line_says_solver(tmp_path, capsys):
    ls = coalloc.loadshare
    path = tmp_path / "p.json"
    ls.write_problem(path, ls.LoadSharingProblem([10, 10, 10], [8, 7, 6, 3], [0, 0, 0, 1]))
    base = ["loadshare", "share", str(path), "--method", "exact", "--quiet", "--json"]
    assert main([*base, "--solver", "cbc"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["params"]["solver"] == "cbc" and "deprecated" not in err
    assert main([*base, "--backend", "highs"]) == 0  # the former name still works, with a note
    out, err = capsys.readouterr()
    assert json.loads(out)["params"]["solver"] == "highs"
    assert err == "coalloc: note: --backend is deprecated: use --solver\n"
    assert main([*base, "--solver", "cbc", "-p", "backend=highs"]) == 2  # checked by the method
    assert "disagree" in capsys.readouterr().err
    assert main([*base, "--solver", "cbc", "-p", "solver=highs"]) == 2
    assert "--solver and -p solver=... disagree" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*base, "--help"])
    shown = capsys.readouterr().out
    assert "--solver" in shown and "--backend" not in shown  # the old name is not offered
    assert main(["loadshare", "share", str(path), "--solver", "cbc"]) == 2
    assert "--solver applies to --method exact only" in capsys.readouterr().err


def test_a_family_whose_solve_takes_bound_refuses_a_bound_that_is_not_a_bool():
    from coalloc._shared.family import problem_kinds

    taking = [k for k in problem_kinds() if "bound" in k.SOLVE_KEYWORDS]
    assert {k.family for k in taking} >= {"ctaap", "taskmap"}
    for kind in taking:
        kind.check_params(None, {"bound": True})
        with pytest.raises(TypeError, match="bound must be a bool"):
            kind.check_params(None, {"bound": 1})
