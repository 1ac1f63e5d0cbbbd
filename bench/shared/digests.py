"""Answer digests of every family and method on seeded instances: "no answer may change".

A refactor of the house (issue 37) must not change any answer. This script solves a few
hundred seeded instances, from more than one generator per family, with every method of
the family (no time limit, seed 0) and records a digest of each answer: the status, the
objective (to 12 significant digits) and the solution itself (the array or mapping the
family's ``SOLUTION_FIELD`` names). Run it before and after a change and compare::

    python -m bench.shared.digests --out /tmp/after.json
    python -m bench.shared.digests --compare bench/shared/digests_baseline.json

``--family F`` (repeatable) restricts the run; ``--compare`` exits 1 and lists every
instance/method whose digest differs (or is missing) from the file's. The baseline in
``bench/shared/digests_baseline.json`` was written on main before issue 37's refactors.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from typing import Any, Callable, Dict, Iterator, List, Tuple

import numpy as np

from bench.shared._progress import add_quiet, bar

#: Methods whose answers are left out of the digests, and why (none today).
SKIP: Dict[Tuple[str, str], str] = {}

#: Methods that prove optimality: run only on instances small enough to end in a second.
EXACT = frozenset({"exact", "brute_force"})


def _small(inst: Any) -> bool:
    """Whether an instance is small enough for the exact methods (at most 8 tasks)."""
    sizes = {"ctaap": lambda i: i.request.n // 2, "taskmap": lambda i: i.task_graph.n,
             "collective": lambda i: 0, "testbed": lambda i: 0 if len(i.ptop.nodes) <= 24 else 99,
             "loadshare": lambda i: 0}  # fmt: skip
    return sizes[inst.family](inst) <= 8


def _canon(obj: Any) -> Any:
    """A JSON-able, order-stable image of a solution object."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(f"{float(obj):.12g}")
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "fc":
            return [_canon(x) for x in obj.ravel().tolist()] + [list(obj.shape)]
        return [str(obj.dtype.kind), obj.tolist()]
    if isinstance(obj, dict):
        return {str(k): _canon(v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, (list, tuple)):
        return [_canon(x) for x in obj]
    if hasattr(obj, "_asdict"):
        return _canon(obj._asdict())
    if hasattr(obj, "__dict__"):
        return _canon({k: v for k, v in vars(obj).items() if not k.startswith("_")})
    if hasattr(obj, "__slots__"):
        return _canon({k: getattr(obj, k, None) for k in obj.__slots__})
    return repr(obj)


def digest(inst: Any, result: Any) -> str:
    """The digest of one answer: status, objective and solution."""
    sol = getattr(result, inst.SOLUTION_FIELD, None)
    obj = result.objective
    doc = {"status": str(result.status),
           "objective": None if obj is None else float(f"{float(obj):.12g}"),
           "solution": _canon(sol)}  # fmt: skip
    text = json.dumps(doc, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# ---------------------------------------------------------------- instances, per family


def _ctaap(n: int) -> Iterator[Tuple[str, Any]]:
    from coalloc import ctaap

    g = ctaap.generators
    for s in range(n):
        if s % 3 == 0:
            yield f"fig2-{s}", ctaap.Instance(*g.fig2(1 + s % 4, n_tasks=10 + s % 7, seed=s))
        elif s % 3 == 1:
            yield f"fig3-{s}", ctaap.Instance(*g.fig3(6 + s % 5, n_clusters=3, seed=s))
        else:
            yield f"random-{s}", ctaap.Instance(*g.random_instance(8 + s % 5, 3, seed=s))


def _taskmap(n: int) -> Iterator[Tuple[str, Any]]:
    from coalloc import taskmap

    g = taskmap.generators
    for s in range(n):
        if s % 3 == 0:
            yield f"table1-{s}", taskmap.Instance(*g.table1_instance(1.0 + 0.25 * (s % 4), seed=s))
        elif s % 3 == 1:
            tg = g.stencil_task_graph((2, 2 + s % 3))
            yield f"stencil-{s}", taskmap.Instance(tg, g.hierarchical_cluster(nodes_per_rack=2))
        else:
            tg = g.geometric_task_graph(12 + s % 9, seed=s)
            yield f"geometric-{s}", taskmap.Instance(tg, g.hierarchical_cluster(n_racks=2,
                                                                               nodes_per_rack=3))


def _collective(n: int) -> Iterator[Tuple[str, Any]]:
    from coalloc import collective

    g = collective.generators
    for s in range(n):
        pool, req = g.random_instance(6 + s % 6, 2 + s % 3, collective=bool(s % 2),
                                      load=0.3 + 0.1 * (s % 5), seed=s)  # fmt: skip
        yield f"random-{s}", collective.Instance(req, pool)


def _testbed(n: int) -> Iterator[Tuple[str, Any]]:
    from coalloc import testbed

    g = testbed.generators
    for s in range(n):
        ptop = g.deterlab(12 + s % 8, 2 + s % 2, seed=s) if s % 2 else g.utah2000()
        kind = s % 4
        if kind == 0:
            top = g.random_topology(4 + s % 6, seed=s)
        elif kind == 1:
            top = g.lan(3 + s % 5)
        elif kind == 2:
            top = g.ring(3 + s % 4)
        else:
            top = g.random_sparse(4 + s % 5, seed=s)
        yield f"t{kind}-{s}", testbed.Instance(top, ptop)


def _loadshare(n: int) -> Iterator[Tuple[str, Any]]:
    from coalloc import loadshare

    for s in range(n):
        if s % 2 == 0:
            yield f"paper-{s}", loadshare.Instance(loadshare.generators.paper_setup(
                6 + s % 5, seed=s))
        else:
            rng = np.random.default_rng(s)
            k = 4 + s % 4
            cap = rng.integers(5, 30, k).astype(float)
            size = rng.integers(1, 12, 3 * k).astype(float)
            origin = rng.integers(0, k, 3 * k)
            yield f"uniform-{s}", loadshare.Instance(loadshare.LoadSharingProblem(cap, size,
                                                                                  origin))


def _gap(n: int) -> Iterator[Tuple[str, Any]]:
    from coalloc import loadshare

    kinds = "abcd"
    for s in range(n):
        gi = loadshare.generate_gap(kinds[s % 4], 2 + s % 3, 6 + s % 5, seed=s)
        yield f"gap{kinds[s % 4]}-{s}", loadshare.GapProblem(gi)


FAMILIES: Dict[str, Callable[[int], Iterator[Tuple[str, Any]]]] = {
    "ctaap": _ctaap, "taskmap": _taskmap, "collective": _collective, "testbed": _testbed,
    "loadshare": _loadshare, "gap": _gap,
}  # fmt: skip


def run(families: List[str], n: int, quiet: bool = False) -> Dict[str, str]:
    """Digest every (family, instance, method): ``"family/instance/method" -> digest``."""
    out: Dict[str, str] = {}
    for fam in families:
        t0 = time.perf_counter()
        for label, inst in bar(FAMILIES[fam](n), desc=fam, total=n):
            for method in inst.methods:
                if (fam, method) in SKIP or (method in EXACT and not _small(inst)):
                    continue
                key = f"{fam}/{label}/{method}"
                try:
                    res = inst.solve(method, seed=0)
                    out[key] = digest(inst, res)
                except Exception as exc:  # an error is an answer too: record its kind
                    out[key] = f"error:{type(exc).__name__}"
        if not quiet:
            print(f"{fam}: {sum(k.startswith(fam + '/') for k in out)} answers in "
                  f"{time.perf_counter() - t0:.1f} s", file=sys.stderr)  # fmt: skip
    return out


def main(argv: Any = None) -> int:
    """Command line: see the module docstring."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", action="append", choices=sorted(FAMILIES))
    ap.add_argument("-n", type=int, default=48, help="instances per family (default 48)")
    ap.add_argument("--out", help="write the digests to this JSON file")
    ap.add_argument("--compare", help="compare with the digests in this JSON file")
    add_quiet(ap)
    args = ap.parse_args(argv)
    fams = args.family or list(FAMILIES)
    got = run(fams, args.n, bool(getattr(args, "quiet", False)))
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(got, fh, indent=0, sort_keys=True)
    print(f"{len(got)} answers over {len(fams)} families")
    if args.compare:
        with open(args.compare) as fh:
            want = json.load(fh)
        want = {k: v for k, v in want.items() if k.split("/")[0] in fams}
        diff = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
        for k in diff[:50]:
            print(f"DIFF {k}: {want.get(k)} -> {got.get(k)}")
        print(f"{len(diff)} of {len(want)} answers differ from {args.compare}")
        return 1 if diff else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
