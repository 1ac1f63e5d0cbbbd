"""Issue 37, named steps and generator tables: CPU time before/after, alternating.

The long functions split into named steps (``cankar``, ``dmcf_gga``, ``solve_exact``,
``cluster_set_bound``, ``lp_bound``, the testbed's ``build_problem``) and the generators
now checked by their tables are timed against their modules as they were at ``--rev``
(read with ``git show`` and loaded beside the current ones, on the same compiled kernels),
old and new alternating, CPU time (:func:`time.process_time`), the median of ``--repeats``
pairs. Each pair's answers must be
equal (the same assignment, placement, bound or instance; every array of a testbed
problem), so a split that changed an answer fails here as well as in the digests.

``build_problem`` is timed against ``--rev-build`` (its deadline polling and collector
deferral came after 735ba82), warm (the testbed's tables and memos kept, as a replay
builds) and cold (the candidate, pclass and additive memos dropped before each build, so
every filter runs; the testbed's own tables, code the split did not touch, are kept).

The third session's changes (``--rev-house``, default 72a0cd9; the case names start with
``house:``): the generators and functions now checked by their tables (``generate_gap``,
``lp_bound``, ``cluster_set_bound``, ``initial_coalitions``, ``processor_order`` through
``map_tasks``, ``communication_cost``) and the functions split into named steps
(``solve_ctaap``, ``run_cpsat``; the plots are no benchmark: their SVGs are compared
instead, ``bench/shared/ISSUE37.md``).

Run (about a minute)::

    PYTHONPATH=src:. python -m bench.shared.issue37_steps --repeats 11
    PYTHONPATH=src:. python -m bench.shared.issue37_steps --repeats 21 --only build_problem
    PYTHONPATH=src:. python -m bench.shared.issue37_steps --repeats 21 --only house:

The cleanup, local-search and step-1 kernels now take the request's links as one record
(``KernelLinks``, ``RankedLinks``); their case needs the compiled modules as they were
(``--old-kernels``: a folder holding ``_cleanup``, ``_localsearch`` and ``_softassign``
built from 72a0cd9, for example main's ``src/coalloc/ctaap`` before the change)::

    PYTHONPATH=src:. python -m bench.shared.issue37_steps --repeats 21 --only kernels
        --old-kernels /work/main/src/coalloc/ctaap     (one command line)
"""

from __future__ import annotations

import argparse
import gc
import importlib
import importlib.util
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Optional

import numpy as np

from bench.shared._progress import add_quiet, bar
from coalloc.cli._common import count

#: Module -> the file it was at the base revision.
MODULES = {
    "coalloc.collective.cankar": "src/coalloc/collective/cankar.py",
    "coalloc.loadshare.dmcf": "src/coalloc/loadshare/dmcf.py",
    "coalloc.ctaap.exact": "src/coalloc/ctaap/exact.py",
    "coalloc.ctaap.bounds": "src/coalloc/ctaap/bounds.py",
    **{f"coalloc.{f}.generators": f"src/coalloc/{f}/generators.py"
       for f in ("ctaap", "collective", "loadshare", "taskmap", "testbed")},
    "coalloc.testbed.problem": "src/coalloc/testbed/problem.py",
    **{f"house:{m}": f"src/{m.replace('.', '/')}.py" for m in (
        "coalloc.loadshare.gap.generators", "coalloc.ctaap.bounds.clique_lp",
        "coalloc.ctaap.bounds.cluster_sets", "coalloc.loadshare.dmcf", "coalloc.taskmap.mapper",
        "coalloc.taskmap.verify", "coalloc.ctaap.solver", "coalloc._shared.milp.cpsat",
        "coalloc.ctaap.anytime")},
}  # fmt: skip
#: Modules timed against another revision than ``--rev`` (then ``--rev-build``).
AT_BUILD_REV = ("coalloc.testbed.problem",)
#: The third session's modules (``house:<module>``), timed against ``--rev-house``.
AT_HOUSE_REV = tuple(m for m in MODULES if m.startswith("house:"))


def _old(module: str, rev: str, folder: pathlib.Path, modules: Optional[dict] = None):
    """``module`` as it was at ``rev``, loaded as ``<module>_old`` (relative imports work);
    its file is ``modules[module]`` (default :data:`MODULES`)."""
    where = (MODULES if modules is None else modules)[module]
    got = subprocess.run(["git", "show", f"{rev}:{where}"], capture_output=True,
                         text=True)  # fmt: skip
    if got.returncode:  # not a module at rev (ctaap/bounds.py is a package since 1d9abf8)
        return None
    text = got.stdout
    name = module.removeprefix("house:")
    path = folder / (module.replace(".", "_").replace(":", "_") + ".py")
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name + "_old", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _problem_fields(problems) -> list:
    """Every field of each testbed problem in ``problems``, as text (comparable)."""
    out = []
    for pr in problems:
        fields = {k: v for k, v in vars(pr).items() if k not in ("top", "ptop")}
        out.append(repr(sorted((k, v.tolist() if isinstance(v, np.ndarray) else
                                [m.tolist() for m in v] if k == "members" else v)
                               for k, v in fields.items())))  # fmt: skip
    return out


def _build_cases():
    """``build_problem`` on a 2,000-PC DeterLab-like testbed (20 random experiments of about
    200 nodes; cold: each on a random two thirds of the PCs) and Emulab's ``test_big`` on
    the Utah testbed of 2000, warm and cold."""
    from coalloc import testbed as tb
    from coalloc._shared.caches import cache_of

    data = pathlib.Path(__file__).resolve().parents[1] / "testbed" / "data"
    big = tb.generators.deterlab(2000, 10, seed=1)
    tops = [tb.generators.random_topology(200, seed=s) for s in range(20)]
    pcs = [n for n, node in big.nodes.items() if not node.is_switch]
    rng = np.random.default_rng(3)
    free = [set(rng.choice(pcs, size=2 * len(pcs) // 3, replace=False).tolist()) for _ in tops]
    utah, test_big = tb.read_ptop(data / "utah2000.ptop"), tb.read_top(data / "test_big.top")

    def cold(m, top, ptop, available=None):
        tables = cache_of(ptop).get("tables")
        if tables is not None:
            tables["cand_memo"].clear()
            tables["pclasses"].clear()
            tables.pop("padd", None)
        return m.build_problem(top, ptop, available)

    mod = "coalloc.testbed.problem"
    yield ("build_problem deterlab(2000) x20 warm", mod,
           lambda m: [m.build_problem(t, big) for t in tops], _problem_fields)
    yield ("build_problem deterlab(2000) x20 cold, 2/3 free", mod,
           lambda m: [cold(m, t, big, f) for t, f in zip(tops, free)], _problem_fields)
    yield ("build_problem test_big/utah2000 x50 warm", mod,
           lambda m: [m.build_problem(test_big, utah) for _ in range(50)], _problem_fields)
    yield ("build_problem test_big/utah2000 x50 cold", mod,
           lambda m: [cold(m, test_big, utah) for _ in range(50)], _problem_fields)


def _cases():
    """``(name, module, run(mod) -> answer[, comparable(answer)])`` of every timed case."""
    from coalloc import ctaap
    from coalloc.collective import generators as cg
    from coalloc.loadshare import generators as lg

    pool = cg.table1_pool(606, seed=1)
    reqs = [q for pair in cg.section42_requests(pool, 8, n_cases=6, seed=2) for q in pair]
    prob = lg.paper_setup(n_nodes=500, seed=1)
    small = ctaap.generators.fig2(1, n_tasks=12, n_clusters=4, seed=1)
    dense = [ctaap.generators.fig3(60, seed=s) for s in range(3)]
    sparse = [ctaap.generators.random_instance(300, 6, edge_probability=0.03, seed=s)
              for s in range(3)]  # fmt: skip
    yield ("cankar x12", "coalloc.collective.cankar",
           lambda m: [(r.start, None if r.resources is None else r.resources.tolist())
                      for r in (m.cankar(q, pool, seed=0) for q in reqs)])  # fmt: skip
    yield ("dmcf_gga 500 nodes, 2000 gen.", "coalloc.loadshare.dmcf",
           lambda m: m.dmcf_gga(prob, seed=0, max_generations=2000,
                                patience=2000).placement.tolist())  # fmt: skip
    yield ("solve_exact fig2(12) x5", "coalloc.ctaap.exact",
           lambda m: [m.solve_exact(*small).assignment.tolist() for _ in range(5)])
    yield ("cluster_set_bound fig3(60) x3", "coalloc.ctaap.bounds",
           lambda m: [m.cluster_set_bound(r, o)["bound"] for r, o in dense])
    yield ("lp_bound sparse 300 x3", "coalloc.ctaap.bounds",
           lambda m: [m.lp_bound(r, o)["bound"] for r, o in sparse])
    yield ("ctaap fig2(2, 20 tasks) x20", "coalloc.ctaap.generators",
           lambda m: [m.fig2(2, n_tasks=20, seed=s)[1].capacity.tolist() for s in range(20)])
    yield ("collective random_instance x20", "coalloc.collective.generators",
           lambda m: [m.random_instance(10, 3, seed=s)[0].capacity.sum() for s in range(20)])
    yield ("loadshare paper_setup(40) x5", "coalloc.loadshare.generators",
           lambda m: [m.paper_setup(40, seed=s).job_size.sum() for s in range(5)])
    yield ("taskmap stencil (6, 6) x20", "coalloc.taskmap.generators",
           lambda m: [m.stencil_task_graph((6, 6), seed=s).total_weight for s in range(20)])
    yield ("testbed ring(4) x2000", "coalloc.testbed.generators",
           lambda m: len([m.ring(4) for _ in range(2000)]))
    yield from _build_cases()
    yield from _house_cases()


def _house_cases():
    """The third session's cases (``house:``), against ``--rev-house``."""
    from coalloc import ctaap, taskmap
    from coalloc.loadshare import generators as lg

    h = "house:coalloc."
    prob = lg.paper_setup(n_nodes=500, seed=1)
    dense = [ctaap.generators.fig3(60, seed=s) for s in range(3)]
    sparse = [ctaap.generators.random_instance(300, 6, edge_probability=0.03, seed=s)
              for s in range(3)]  # fmt: skip
    fig2 = [ctaap.generators.fig2(2, seed=s) for s in range(5)]
    tasks, res = taskmap.generators.table1_instance(seed=1)
    mapping = taskmap.map_tasks(tasks, res, seed=0).mapping
    yield ("house: generate_gap d 5x100 x50", h + "loadshare.gap.generators",
           lambda m: [int(m.generate_gap("d", 5, 100, seed=s).cost.sum()) for s in range(50)])
    yield ("house: lp_bound sparse 300 x3", h + "ctaap.bounds.clique_lp",
           lambda m: [m.lp_bound(r, o)["bound"] for r, o in sparse])
    yield ("house: cluster_set_bound fig3(60) x3", h + "ctaap.bounds.cluster_sets",
           lambda m: [m.cluster_set_bound(r, o)["bound"] for r, o in dense])
    yield ("house: initial_coalitions 500 nodes x200", h + "loadshare.dmcf",
           lambda m: [int(m.initial_coalitions(prob, 23, "arrival")[-1]) for _ in range(200)])
    yield ("house: dmcf_gga 500 nodes, 500 gen.", h + "loadshare.dmcf",
           lambda m: m.dmcf_gga(prob, seed=0, max_generations=500,
                                patience=500).placement.tolist())  # fmt: skip
    yield ("house: map_tasks table1 x20", h + "taskmap.mapper",
           lambda m: [m.map_tasks(tasks, res, seed=s).mapping.tolist() for s in range(20)])
    yield ("house: communication_cost table1 x20", h + "taskmap.verify",
           lambda m: [m.communication_cost(tasks, res, mapping) for _ in range(20)])
    yield ("house: solve_ctaap fig2(2) x5", h + "ctaap.solver",
           lambda m: [m.solve_ctaap(r, o, seed=0).assignment.tolist() for r, o in fig2])
    yield ("house: run_cpsat knapsack x20", h + "_shared.milp.cpsat",
           lambda m: [_knapsack(m, s) for s in range(20)])
    # the paper's default first (no fill, no local search): rounds that improve it, the
    # neighbourhoods' sub-solves, the LP bound at round 2 that proves one of them
    hard = [ctaap.generators.fig2(f, n_tasks=n, seed=s) for f, n, s in ((3, 60, 1),
                                                                       (2, 100, 2), (5, 80, 0))]
    yield ("house: solve_anytime 20 rounds, local search, fig2 x3", h + "ctaap.anytime",
           lambda m: [_anytime(m, r, o, "none") for r, o in hard])
    yield ("house: solve_anytime 12 rounds, CP-SAT regions, fig2 x3", h + "ctaap.anytime",
           lambda m: [_anytime(m, r, o, "cpsat") for r, o in hard])


def _anytime(module, request, offer, sub_solver: str) -> tuple:
    """``module.solve_anytime`` by rounds (no clock): its answer, bound and counters, and
    the allocations and bounds of its trajectory (not their times)."""
    rounds = 20 if sub_solver == "none" else 12
    res = module.solve_anytime(request, offer, rounds=rounds, sub_solver=sub_solver, seed=1,
                               lp_bound_share=0.5, paper=True)  # fmt: skip
    steps = np.asarray(res.trajectory)[:, 1:].tolist()
    return (res.assignment.tolist(), res.bound, res.status, sorted(res.iterations.items()),
            steps)  # fmt: skip


def _extension(folder: str, stem: str, package: str = "coalloc.ctaap"):
    """The compiled module ``stem`` of ``folder`` (``_cleanup.cpython-*.so``), loaded under
    its bare name beside the current ``package.stem`` (imported first: a Cython module
    enters itself in ``sys.modules`` under its full name when that name is free)."""
    import importlib.machinery

    importlib.import_module(f"{package}.{stem}")
    (path,) = pathlib.Path(folder).glob(f"{stem}.*.so")
    loader = importlib.machinery.ExtensionFileLoader(stem, str(path))
    spec = importlib.util.spec_from_loader(stem, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


#: Modules whose compiled kernels changed signature with them: timed against ``--rev-house``
#: only with ``--old-kernels`` (:func:`_old_ctaap`).
WITH_OLD_KERNELS = ("house:coalloc.ctaap.solver", "house:coalloc.ctaap.anytime")


def _old_ctaap(rev: str, folder: str, tmp: pathlib.Path) -> dict:
    """CTAAP's ``solver`` and ``anytime`` as they were at ``rev``, in a package of their own
    (``coalloc.ctaap_old``) whose compiled ``_cleanup``, ``_localsearch`` and
    ``_softassign`` are those of ``folder`` (the kernels they were written for); every other
    module they import is the current one."""
    import types

    pkg = types.ModuleType("coalloc.ctaap_old")
    pkg.__path__ = []
    sys.modules[pkg.__name__] = pkg
    for name in ("model", "result", "verify", "bounds"):
        sys.modules[f"{pkg.__name__}.{name}"] = importlib.import_module(f"coalloc.ctaap.{name}")
    for name in ("_cleanup", "_localsearch", "_softassign"):
        sys.modules[f"{pkg.__name__}.{name}"] = _extension(folder, name)
    out = {}
    for stem in ("solver", "anytime"):  # solver first: anytime imports it
        text = subprocess.run(["git", "show", f"{rev}:src/coalloc/ctaap/{stem}.py"],
                              capture_output=True, text=True, check=True).stdout  # fmt: skip
        path = tmp / f"ctaap_old_{stem}.py"
        path.write_text(text)
        spec = importlib.util.spec_from_file_location(f"{pkg.__name__}.{stem}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        out[f"house:coalloc.ctaap.{stem}"] = module
    return out


def _kernels_case(folder: str):
    """``match_and_clean``, ``fill_free`` then ``improve`` (300 rounds) on 20 Fig. 2 and 3
    Fig. 3 requests (seeded weights): the compiled modules of ``folder`` (six arrays)
    against the current ones (one ``KernelLinks``). Returns ``(name, run(old: bool))``."""
    from coalloc import ctaap
    from coalloc.ctaap import _cleanup, _localsearch
    from coalloc.ctaap.model import KernelLinks, compatibility

    before = _extension(folder, "_cleanup")
    search_before = _extension(folder, "_localsearch")
    cases = [ctaap.generators.fig2(1 + s % 5, seed=s) for s in range(20)]
    cases += [ctaap.generators.fig3(100, seed=s) for s in range(3)]
    rows = []
    for s, (r, o) in enumerate(cases):
        rng = np.random.default_rng(s)
        w = rng.random((r.n, o.m))
        order = np.argsort(-w.max(axis=1), kind="stable").astype(np.int64)
        rows.append((KernelLinks.of(r), o.bandwidth, w, compatibility(r, o).view(np.uint8),
                     o.capacity, order, np.argsort(-w, axis=1, kind="stable")))  # fmt: skip

    def run(old: bool) -> list:
        out = []
        for links, bhat, w, compat, cap, order, corder in rows:
            assign = np.empty(w.shape[0], dtype=np.int64)
            head = tuple(links) if old else (links,)
            kernel = before if old else _cleanup
            removals = kernel.match_and_clean(*head, bhat, w, compat, cap, True, assign)[0]
            added = kernel.fill_free(*head, bhat, compat, cap, order, corder, assign)
            search = (search_before if old else _localsearch).improve(
                *head, bhat, compat, cap, assign, 300, 7, w)  # fmt: skip
            out.append((removals, added, sorted(search.items()), assign.tolist()))
        return out

    return "house: kernels match_and_clean + fill_free + improve x23", run


def _knapsack(module, seed: int) -> tuple:
    """A 30-item knapsack on CP-SAT through ``module.run_cpsat`` (one worker, seeded)."""
    from ortools.sat.python import cp_model

    rng = np.random.default_rng(seed)
    w, v = rng.integers(1, 40, 30), rng.integers(1, 60, 30)
    model = cp_model.CpModel()
    x = [model.NewBoolVar(f"x{i}") for i in range(30)]
    model.Add(sum(int(a) * b for a, b in zip(w, x)) <= int(w.sum()) // 3)
    model.Maximize(sum(int(a) * b for a, b in zip(v, x)))
    out = module.run_cpsat(cp_model, model, x, rows=1, threads=1, seed=0)
    return out.status, None if out.x is None else out.x.tolist()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default="735ba82", help="the revision before (default 735ba82)")
    ap.add_argument("--rev-build", default="bbe21cf",
                    help="the revision before for build_problem (default bbe21cf)")
    ap.add_argument("--rev-house", default="72a0cd9",
                    help="the revision before for the 'house:' cases (default 72a0cd9)")
    ap.add_argument("--repeats", type=count(), default=11, help="alternating pairs per case")
    ap.add_argument("--old-kernels", default=None, metavar="DIR",
                    help="a folder with the compiled coalloc.ctaap _cleanup and _localsearch "
                         "before KernelLinks (their case is timed only when given)")
    ap.add_argument("--only", default="", help="time only the cases whose name has this")
    ap.add_argument("--no-gc", action="store_true",
                    help="pause the cyclic collector while timing (a collection lands in one "
                         "version's run or the other's by chance: this shows the code's cost)")
    add_quiet(ap)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        revs = {m: args.rev_build if m in AT_BUILD_REV else args.rev_house
                if m in AT_HOUSE_REV else args.rev for m in MODULES}  # fmt: skip
        cases = [c for c in _cases() if args.only in c[0]]
        wanted = {c[1] for c in cases}
        old = {m: _old(m, revs[m], pathlib.Path(tmp)) for m in MODULES
               if m in wanted and m not in WITH_OLD_KERNELS}  # fmt: skip
        if args.old_kernels and wanted & set(WITH_OLD_KERNELS):
            old.update(_old_ctaap(args.rev_house, args.old_kernels, pathlib.Path(tmp)))
        cases = [c for c in cases if c[1] not in WITH_OLD_KERNELS or c[1] in old]
        if len(cases) < len([c for c in _cases() if args.only in c[0]]):
            print("solve_ctaap and solve_anytime are timed only with --old-kernels (their "
                  "kernels changed signature)")
        new = {m: importlib.import_module(m.removeprefix("house:")) for m in wanted}
        if args.old_kernels and args.only in "house: kernels":
            name, run = _kernels_case(args.old_kernels)
            cases.append((name, "house:kernels", run))
            old["house:kernels"], new["house:kernels"] = True, False
        for name, module, run, *comparable in bar(cases, desc="cases", unit="case"):
            a, b = old[module], new[module]
            if a is None:
                print(f"{name}: {MODULES[module]} is no module at {revs[module]}: not timed")
                continue
            same = comparable[0] if comparable else (lambda x: x)
            if not np.array_equal(np.asarray(same(run(a)), dtype=object),
                                  np.asarray(same(run(b)), dtype=object)):  # fmt: skip
                print(f"{name}: ANSWERS DIFFER")
                return 1
            t_old, t_new = [], []
            if args.no_gc:
                gc.collect()
                gc.disable()
            for _ in range(args.repeats):
                for mod, acc in ((a, t_old), (b, t_new)):
                    c = time.process_time()
                    run(mod)
                    acc.append(time.process_time() - c)
            gc.enable()
            mo, mn = statistics.median(t_old), statistics.median(t_new)
            print(f"{name}: before {mo * 1e3:.1f} ms, after {mn * 1e3:.1f} ms CPU "
                  f"(medians of {args.repeats}), after/before {mn / mo:.3f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
