"""CBC's model file: the package's hand-written MPS writer against HiGHS's own (issue 23 item 8).

CBC reads its model from an MPS file that the MILP runner writes. Issue 23 asks for a solver
library's own model writer unless it is slower on the package's largest models. This script
times both writers, in the same process, on the models the package's exact methods hand to
CBC (captured at the runner's call of the writer, after its rescaling):

- **ctaap**: ``solve_exact`` on ``fig3(500)`` (the largest instance of the paper's Fig. 3);
- **gap**: ``solve_gap(generate_gap("D", 80, 1600), "exact")`` (the OR-Library's largest
  type-D size);
- **loadshare**: ``share_exact`` on ``paper_setup(160)``, the largest paper grid whose
  program stays under ``share_exact``'s default ``max_variables`` (492,640 variables; the
  500-node grid would have 4.8 million and is refused).

Each writer writes each model ``--repeats`` times (median reported; the writers alternate,
so that a change of the machine's load hits both); the files go to a temporary folder that
is removed. ``highspy`` here is HiGHS's ``passModel`` + ``writeModel``, the candidate
replacement (:func:`write_mps_highs`), ``pulp`` PuLP's ``writeMPS`` after building its model
from the arrays (``--pulp``: :func:`write_mps_pulp`); ``ours`` is the byte-array writer of
``coalloc._shared.milp.cbc``. ``--check`` has CBC solve small models from each writer's
file and prints the objectives (they must agree).

Run (about 30 s on two cores)::

    python -m bench.shared.mps_writer --repeats 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np

from bench.shared._progress import add_quiet, bar, say


class _Captured(Exception):
    pass


def capture(builders: dict) -> dict:
    """Name -> the arguments the MILP runner gives CBC's MPS writer when ``builders[name]()``
    solves with CBC (the solve stops there)."""
    from coalloc._shared.milp import cbc

    got: dict = {}

    def grab(path, c, A, row_lb, row_ub, integrality, lb, ub, nv):
        got["model"] = (c, A, row_lb, row_ub, integrality, lb, ub, nv)
        raise _Captured

    models = {}
    saved = cbc._write_mps
    cbc._write_mps = grab
    try:
        for name, build in builders.items():
            got.clear()
            try:
                build()  # the runner reports the writer's exception as a failed solve
            except _Captured:
                pass
            if "model" not in got:
                raise RuntimeError(f"{name}: the runner did not call the MPS writer")
            models[name] = got["model"]
    finally:
        cbc._write_mps = saved
    return models


def largest_models() -> dict:
    """The three largest models the package hands CBC (see the module's docstring)."""
    from coalloc import ctaap, loadshare
    from coalloc.loadshare.gap import generate_gap, solve_gap

    return capture({
        "ctaap fig3(500)": lambda: ctaap.solve_exact(*ctaap.generators.fig3(500, seed=0),
                                                     solver="cbc"),
        "gap D 80x1600": lambda: solve_gap(generate_gap("D", 80, 1600, seed=0), "exact",
                                           solver="cbc", hint=False, with_bound=False),
        "loadshare paper_setup(160)": lambda: loadshare.share_exact(
            loadshare.generators.paper_setup(160, seed=0), solver="cbc"),
    })  # fmt: skip


def small_models() -> dict:
    """Small models of the same three builders, which CBC solves to optimality in seconds."""
    from coalloc import ctaap, loadshare
    from coalloc.loadshare.gap import generate_gap, solve_gap

    return capture({
        "ctaap fig3(20)": lambda: ctaap.solve_exact(*ctaap.generators.fig3(20, seed=1),
                                                    solver="cbc"),
        "gap C 5x30": lambda: solve_gap(generate_gap("C", 5, 30, seed=2), "exact",
                                        solver="cbc", hint=False, with_bound=False),
        # best fit decreasing misses the bound here (5 and 4 share a node), so the solver runs
        "loadshare 2 nodes x 6 jobs": lambda: loadshare.share_exact(
            loadshare.LoadSharingProblem([10, 10], [5, 4, 3, 3, 3, 2], [0] * 6), solver="cbc"),
    })  # fmt: skip


def cbc_objective(path: str, folder: str) -> str:
    """The first line of CBC's solution of the model file ``path`` (status and objective)."""
    import subprocess

    import pulp

    from coalloc._shared.milp.cbc import cbc_command

    solver = cbc_command(pulp)
    if solver is None:
        raise RuntimeError("no CBC executable found (pip install 'coalloc[cbc]')")
    sol = os.path.join(folder, "check.sol")
    subprocess.run([solver.path, path, "-solve", "-solution", sol], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)  # fmt: skip
    with open(sol) as fh:
        return fh.readline().strip()


def write_mps_highs(path, c, A, row_lb, row_ub, integrality, lb, ub, nv) -> None:
    """HiGHS's writer (``passModel`` + ``writeModel``), the candidate replacement: the same
    minimisation model as the runner's writer, in MPS.

    HiGHS names the columns ``c0, c1, ...`` and the rows ``r0, r1, ...`` (in order) and
    writes every value with 17 significant digits, so that CBC reads the arrays exactly (CBC's
    solution file then names the columns c0.., which the runner's reader would have to map by
    column number).
    """
    import highspy as hs
    import scipy.sparse as sp

    from coalloc._shared.milp.highs import _new_highs

    A = sp.csc_matrix(A, dtype=np.float64)
    A.sort_indices()
    lp = hs.HighsLp()
    lp.num_col_ = nv
    lp.num_row_ = int(A.shape[0])
    lp.col_cost_ = np.ascontiguousarray(c, dtype=np.float64)
    lp.col_lower_ = np.broadcast_to(np.asarray(lb, dtype=np.float64), (nv,)).copy()
    lp.col_upper_ = np.broadcast_to(np.asarray(ub, dtype=np.float64), (nv,)).copy()
    lp.row_lower_ = np.ascontiguousarray(row_lb, dtype=np.float64)
    lp.row_upper_ = np.ascontiguousarray(row_ub, dtype=np.float64)
    lp.a_matrix_.format_ = hs.MatrixFormat.kColwise
    lp.a_matrix_.num_col_ = nv
    lp.a_matrix_.num_row_ = int(A.shape[0])
    lp.a_matrix_.start_ = A.indptr.astype(np.int32)
    lp.a_matrix_.index_ = A.indices.astype(np.int32)
    lp.a_matrix_.value_ = A.data
    integer = np.asarray(integrality).astype(bool).reshape(-1)
    if integer.any():
        kinds = np.array([hs.HighsVarType.kContinuous, hs.HighsVarType.kInteger], dtype=object)
        lp.integrality_ = kinds[integer.astype(np.intp)].tolist()
    h = _new_highs(hs, False)
    h.setOptionValue("output_flag", False)
    if h.passModel(lp) == hs.HighsStatus.kError:
        raise ValueError("HiGHS refused the model handed to CBC")
    # a warning says that HiGHS made up the names c0.. / r0..; an error is a failed write
    if h.writeModel(path) == hs.HighsStatus.kError:
        raise OSError(f"HiGHS could not write CBC's model file {path}")


def write_mps_pulp(path, c, A, row_lb, row_ub, integrality, lb, ub, nv) -> None:
    """PuLP's writer (``LpProblem.writeMPS``), the model built from the arrays first (PuLP
    writes only its own model objects)."""
    import pulp
    import scipy.sparse as sp

    A = sp.csr_matrix(A)
    lo = np.broadcast_to(np.asarray(lb, dtype=np.float64), (nv,))
    hi = np.broadcast_to(np.asarray(ub, dtype=np.float64), (nv,))
    integ = np.asarray(integrality).astype(bool)
    x = [
        pulp.LpVariable(f"X{j:07d}", None if not np.isfinite(lo[j]) else float(lo[j]),
                        None if not np.isfinite(hi[j]) else float(hi[j]),
                        pulp.LpInteger if integ[j] else pulp.LpContinuous)
        for j in range(nv)
    ]  # fmt: skip
    prob = pulp.LpProblem("COALLOC", pulp.LpMinimize)
    prob += pulp.LpAffineExpression([(x[j], float(v)) for j, v in enumerate(c) if v != 0])
    for r in range(A.shape[0]):
        lo_r, hi_r = float(row_lb[r]), float(row_ub[r])
        cols = A.indices[A.indptr[r] : A.indptr[r + 1]]
        vals = A.data[A.indptr[r] : A.indptr[r + 1]]
        expr = pulp.LpAffineExpression([(x[j], float(v)) for j, v in zip(cols, vals)])
        if lo_r == hi_r:
            prob += pulp.LpConstraint(expr, pulp.LpConstraintEQ, f"R{r:07d}", hi_r)
            continue
        if np.isfinite(hi_r):
            prob += pulp.LpConstraint(expr, pulp.LpConstraintLE, f"R{r:07d}", hi_r)
        if np.isfinite(lo_r):
            prob += pulp.LpConstraint(expr, pulp.LpConstraintGE, f"G{r:07d}", lo_r)
    prob.writeMPS(path)


def writers(with_pulp: bool = False) -> dict:
    """Name -> writer(path, c, A, row_lb, row_ub, integrality, lb, ub, nv)."""
    from coalloc._shared.milp import cbc

    out = {"highspy": write_mps_highs, "ours": cbc._write_mps}
    if with_pulp:
        out["pulp"] = write_mps_pulp
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--pulp", action="store_true",
                    help="time PuLP's writer too (about a minute more)")  # fmt: skip
    ap.add_argument("--check", action="store_true",
                    help="CBC solves small models from each writer's file first")  # fmt: skip
    add_quiet(ap)
    args = ap.parse_args(argv)
    funcs = writers(args.pulp)
    with tempfile.TemporaryDirectory(prefix="coalloc_mps_bench_") as folder:
        if args.check:
            for name, m in small_models().items():
                seen = {}
                for w, f in funcs.items():
                    path = os.path.join(folder, f"{w}.mps")
                    f(path, *m)
                    seen[w] = cbc_objective(path, folder)
                same = "same" if len(set(seen.values())) == 1 else "DIFFERENT"
                print(
                    f"check {name}: CBC {same}: " + "; ".join(f"{w}: {t}" for w, t in seen.items())
                )
        models = largest_models()
        others = [w for w in funcs if w != "ours"]
        print(f"{'model':28s} {'cols':>8s} {'rows':>6s} {'nnz':>8s}  "
              + "  ".join(f"{w:>9s}" for w in funcs) + "  "
              + "  ".join(f"{w}/ours" for w in others))  # fmt: skip
        for name, m in models.items():
            times: dict = {w: [] for w in funcs}
            sizes = {}
            runs = [(r, w) for r in range(args.repeats) for w in funcs]
            with bar(runs, desc=name, unit="write") as progress:
                for _, w in progress:
                    f = funcs[w]
                    path = os.path.join(folder, f"{w}.mps")
                    t0 = time.perf_counter()
                    f(path, *m)
                    times[w].append(time.perf_counter() - t0)
                    sizes[w] = os.path.getsize(path)
                    os.remove(path)
            med = {w: statistics.median(t) for w, t in times.items()}
            A = m[1]
            say(f"{name:28s} {m[7]:8d} {A.shape[0]:6d} {A.nnz:8d}  "
                  + "  ".join(f"{med[w]:8.3f}s" for w in funcs) + "  "
                  + "  ".join(f"{med[w] / med['ours']:11.2f}" for w in others)
                  + "   (MB " + ", ".join(f"{w} {sizes[w] / 1e6:.1f}" for w in funcs)
                  + ")")  # fmt: skip
    print("load average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
