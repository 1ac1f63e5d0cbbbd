"""Issue 37, fourth session ("h42house"): CPU time before/after, alternating.

The functions split into named steps (the collective ``scan`` and ``simulate``,
``solve_ctaap``, assign+'s portfolio), the CTAAP exact module without its flow bound, and
the compiled kernels whose arguments became records (the collective screens: ``Demand``,
``ScreenOut``; CTAAP's cleanup kernels: one ``KernelLinks`` unpacking, ``_links_of``) are
timed against ``--rev`` (default 6181307, the session's base): a module as it was there is
read with ``git show`` and loaded beside the current one (on the current compiled kernels,
whose Python callers the modules do not see); a kernel as it was is a compiled module of
``--old-kernels`` (a folder holding ``_search``, ``_cleanup`` built at ``--rev``; main's
``src/coalloc/collective`` and ``src/coalloc/ctaap`` when their sources did not change).
Old and new alternate, CPU time (:func:`time.process_time`), the median of ``--repeats``
pairs; each pair's answers must be equal first.

Run::

    PYTHONPATH=src:. python -m bench.shared.issue37_h42 --repeats 15 --old-kernels DIR
"""

from __future__ import annotations

import argparse
import functools
import importlib
import pathlib
import statistics
import sys
import tempfile
import time
from typing import Optional

import numpy as np

from bench.shared._progress import add_quiet, bar
from bench.shared.issue37_steps import _extension, _old
from coalloc.cli._common import count

#: Module -> its file at ``--rev``.
MODULES = {m: f"src/{m.replace('.', '/')}.py" for m in (
    "coalloc.collective.scan", "coalloc.collective.simulate", "coalloc.ctaap.solver",
    "coalloc.ctaap.exact", "coalloc.testbed.methods.assign_plus")}  # fmt: skip


def _cases():
    """``(name, module, run(mod) -> answer)`` of every module case."""
    from coalloc import ctaap
    from coalloc import testbed as tb
    from coalloc.collective import generators as cg

    pool = cg.table1_pool(606, seed=1)
    reqs = [q for pair in cg.section42_requests(pool, 8, n_cases=6, seed=2) for q in pair]
    stream = [(60.0 * i, q) for i, q in enumerate(reqs * 3)]
    fig2 = [ctaap.generators.fig2(2, seed=s) for s in range(5)]
    small = ctaap.generators.fig2(1, n_tasks=12, n_clusters=4, seed=1)
    data = pathlib.Path(__file__).resolve().parents[1] / "testbed" / "data"
    utah, test_big = tb.read_ptop(data / "utah2000.ptop"), tb.read_top(data / "test_big.top")
    tops = [tb.generators.random_topology(40, seed=s) for s in range(3)]
    big = tb.generators.deterlab(300, 6, seed=1)

    def scanned(m, portfolio):
        out = []
        for q in reqs[:4] if portfolio else reqs:
            r = m.scan(q, pool, portfolio=portfolio)
            out.append((r.start, None if r.resources is None else r.resources.tolist()))
        return out

    def assigned(m):
        # the default (fallback=True: the portfolio), without its CP-SAT member
        runs = [m.assign_plus_method(test_big, utah, seed=0, fallback=True, exact_nodes=0)]
        runs += [m.assign_plus_method(t, big, seed=s, fallback=True, exact_nodes=0)
                 for s, t in enumerate(tops)]
        return [sorted(r.mapping.items()) if r.mapping else None for r in runs]

    yield ("scan x12 (table1 pool, section 4.2 N = 8)", "coalloc.collective.scan",
           lambda m: scanned(m, False))
    yield ("scan portfolio x4", "coalloc.collective.scan", lambda m: scanned(m, True))
    yield ("simulate 36 requests", "coalloc.collective.simulate",
           lambda m: [(r["start"], r["utilisation"]) for r in m.simulate(pool, stream).records])
    yield ("solve_ctaap fig2(2) x5", "coalloc.ctaap.solver",
           lambda m: [m.solve_ctaap(r, o, seed=0).assignment.tolist() for r, o in fig2])
    yield ("solve_exact fig2(12) x5", "coalloc.ctaap.exact",
           lambda m: [m.solve_exact(*small).assignment.tolist() for _ in range(5)])
    yield ("assign+ default test_big/utah2000, 3 x 40 nodes/deterlab(300)",
           "coalloc.testbed.methods.assign_plus", assigned)


def _kernel_cases(folder: str):
    """The collective screens (old: ten arguments; new: the records) and CTAAP's cleanup
    kernels (the same ``KernelLinks``; old: six memoryviews unpacked in each entry point)."""
    from coalloc import ctaap
    from coalloc.collective import _search
    from coalloc.collective.core import Demand, ScreenOut
    from coalloc.ctaap import _cleanup
    from coalloc.ctaap.model import KernelLinks, compatibility

    old_search = _extension(folder, "_search", "coalloc.collective")
    old_cleanup = _extension(folder, "_cleanup")
    rng = np.random.default_rng(5)
    blocks = []
    for s in range(400):
        S, n, m = (1, 8, 64)[s % 3], 60, 2
        cap = np.round(rng.uniform(1, 8, (n, m)))
        tm = np.ascontiguousarray(np.floor(cap[None] * rng.random((S, n, m))))
        e, d = np.ones(m), np.full(m, 4.0 * (1 + s % 5))
        blocks.append((tm, cap, e, d, 4 + s % 3, np.zeros(m)))

    def screens(old: bool) -> list:
        out = []
        for tm, cap, e, d, cnt, tol in blocks:
            S = tm.shape[0]
            res = ScreenOut(np.empty(S, np.int64), np.empty(S, np.int64), np.empty(S, np.int64),
                            np.empty(S))  # fmt: skip
            if old:
                old_search.block_screen(tm, cap, e, d, cnt, tol, *res)
            else:
                _search.block_screen(tm, cap, Demand(e, d, cnt, tol), res)
            out.append([x.tolist() for x in res])
        return out

    cases = [ctaap.generators.fig2(1 + s % 5, seed=s) for s in range(20)]
    cases += [ctaap.generators.fig3(100, seed=s) for s in range(3)]
    rows = []
    for s, (r, o) in enumerate(cases):
        w = np.random.default_rng(s).random((r.n, o.m))
        order = np.argsort(-w.max(axis=1), kind="stable").astype(np.int64)
        rows.append((KernelLinks.of(r), o.bandwidth, w, compatibility(r, o).view(np.uint8),
                     o.capacity, order, np.argsort(-w, axis=1, kind="stable")))  # fmt: skip

    def cleanup(old: bool) -> list:
        kernel = old_cleanup if old else _cleanup
        out = []
        for links, bhat, w, compat, cap, order, corder in rows:
            assign = np.empty(w.shape[0], dtype=np.int64)
            removals = kernel.match_and_clean(links, bhat, w, compat, cap, True, assign)[0]
            added = kernel.fill_free(links, bhat, compat, cap, order, corder, assign)
            out.append((removals, added, assign.tolist()))
        return out

    yield "kernel: collective block_screen x400 blocks (1-64 starts, 60 nodes)", screens
    yield "kernel: ctaap match_and_clean + fill_free x23", cleanup


def _time(name: str, run_old, run_new, repeats: int) -> bool:
    """Check the answers, then time old/new alternating; print the medians and the ratio."""
    if not np.array_equal(np.asarray(run_old(), dtype=object),
                          np.asarray(run_new(), dtype=object)):  # fmt: skip
        print(f"{name}: ANSWERS DIFFER")
        return False
    t_old, t_new = [], []
    for _ in range(repeats):
        for run, acc in ((run_old, t_old), (run_new, t_new)):
            c = time.process_time()
            run()
            acc.append(time.process_time() - c)
    mo, mn = statistics.median(t_old), statistics.median(t_new)
    print(f"{name}: before {mo * 1e3:.1f} ms, after {mn * 1e3:.1f} ms CPU "
          f"(medians of {repeats}), after/before {mn / mo:.3f}", flush=True)  # fmt: skip
    return True


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default="6181307", help="the revision before (default 6181307)")
    ap.add_argument("--repeats", type=count(), default=11, help="alternating pairs per case")
    ap.add_argument("--old-kernels", default=None, metavar="DIR",
                    help="a folder with the compiled _search and _cleanup of --rev (their "
                         "cases are timed only when given)")  # fmt: skip
    ap.add_argument("--only", default="", help="time only the cases whose name has this")
    add_quiet(ap)
    args = ap.parse_args(argv)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        cases = [c for c in _cases() if args.only in c[0]]
        wanted = {c[1] for c in cases}
        old = {m: _old(m, args.rev, pathlib.Path(tmp), MODULES) for m in wanted}
        new = {m: importlib.import_module(m) for m in wanted}
        for name, module, run in bar(cases, desc="cases", unit="case"):
            a, b = old[module], new[module]
            ok &= _time(name, functools.partial(run, a), functools.partial(run, b),
                        args.repeats)  # fmt: skip
        if args.old_kernels:
            for name, run in _kernel_cases(args.old_kernels):
                if args.only in name:
                    ok &= _time(name, functools.partial(run, True),
                                functools.partial(run, False), args.repeats)  # fmt: skip
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
