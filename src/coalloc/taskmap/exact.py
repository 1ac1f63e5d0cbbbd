"""Exact min-max-occupancy mapping for small instances, as a mixed-integer program.

Variables: ``x[t, p]`` binary (task ``t`` on processor ``p``), ``z`` continuous (the maximum
occupancy, minimised). Rows:

* assignment: ``sum_p x[t, p] = 1`` for every task;
* nodes: ``sum_t w_t x[t, p] <= cap_p z`` for every processor;
* links: the load of each link ``l`` is at most ``bw_l z``. The load is linearised in one of
  two ways:

``"cut"`` (used whenever it is exact, e.g. for every tree network such as the Internet-like
    graphs of section 5.1)
    If the fixed routes that use ``l`` are exactly those between the two sides ``A_l`` /
    ``B_l`` of a bipartition of the processors, a pair ``e = {s, t}`` crosses ``l`` iff
    ``X_s(A_l) != X_t(A_l)`` with ``X_s(A) = sum_{p in A} x[s, p]``. A continuous
    ``d[e, l] >= |X_s(A_l) - X_t(A_l)|`` (two rows) then bounds the crossing, and the link
    row is ``sum_e vol_e d[e, l] <= bw_l z``. ``E_tasks x E_links`` extra variables.
``"pairs"`` (always exact)
    ``y[e, a, b] = x[s, a] x[t, b]`` linearised by the transportation rows
    ``sum_b y[e, a, b] = x[s, a]`` and ``sum_a y[e, a, b] = x[t, b]`` (with ``x`` integral,
    ``y`` is forced to the product); the load of ``l`` is the sum of ``vol_e y[e, a, b]``
    over processor pairs whose route uses ``l``. ``E_tasks x P^2`` extra variables: small
    instances only.

Solvers (``solver=``): HiGHS through highspy (default) and CBC through PuLP, on the shared
runner, which rescales a model whose weights, volumes, capacities or bandwidths leave its sane
range; and CP-SAT (OR-Tools), on the shared :func:`~coalloc._shared.milp.run_cpsat`, which
takes integers. For CP-SAT the same rows are given integer coefficients that make a
*relaxation* (each row's loads rounded down, its capacity rounded up, in units of
``2**-24`` of the row's largest coefficient) and the occupancy an integer ``Z`` in units
``u`` of about ``2**-20`` times an upper bound (every task on the fastest processor): every
mapping keeps a value at most ``ceil(occupancy / u)``, so CP-SAT's bound ``B`` proves that no
mapping is below ``(B - 1) u``; the mapping's occupancy ``v`` is recomputed from scratch.
Then decision models ask for a mapping below ``w = v (1 - 5e-10)`` (loads in units of
``2**-40`` of each row's largest, rounded down; capacities ``c w`` rounded up: again a
relaxation): infeasible proves ``w`` a lower bound (``"optimal"``: a gap of 5e-10); a
feasible answer is a better mapping, and the question is asked again below it (at most 20
times); an answer no better than ``v`` (the rounding's slack) ends the proof attempt with
the first bound, within about ``2**-20`` of the optimum (``"feasible"``). The
solution is checked there by :func:`coalloc.taskmap.verify_mapping` on the original graphs
(the runner's ``check``): a solution it refuses, or a bound the solver's tolerances cannot
reconcile with the recomputed occupancy, gives status ``"error"``, never ``"optimal"``. The
returned mapping's occupancy is recomputed from scratch; the status is ``"optimal"`` only when
the solver proved it, and the bound is given in the data's units.
"""

from __future__ import annotations

import time
from typing import Optional

import numpy as np
import scipy.sparse as sp

from .._shared import milp
from .._shared.constraints import checked
from .._shared.family import renamed_keyword
from .._shared.result import relative_gap
from .model import ResourceGraph, TaskGraph
from .occupancy import max_occupancy as _max_occupancy
from .result import ExactMappingResult
from .verify import verify_mapping

__all__ = ["ExactMappingResult", "solve_exact_mapping", "SOLVERS", "FORMULATIONS"]

#: The integer-programming solvers of the exact method (``solver=``).
SOLVERS = ("highs", "cbc", "cpsat")
#: The older name of :data:`SOLVERS` (kept for readers of the module; not exported).
BACKENDS = SOLVERS
FORMULATIONS = ("auto", "cut", "pairs")


def _poll(deadline: Optional[float]) -> None:
    """Raise :class:`_OutOfTime` once ``deadline`` (a ``time.perf_counter`` value) passed."""
    if deadline is not None and time.perf_counter() >= deadline:
        raise _OutOfTime()


def _route_usage(resources: ResourceGraph, deadline: Optional[float] = None) -> np.ndarray:
    """uses[l, i, j]: the fixed route between processors i and j (row order) uses link l."""
    procs = resources.processors
    k = procs.shape[0]
    uses = np.zeros((resources.n_links, k, k), dtype=bool)
    for i, a in enumerate(procs):
        if not i & 15:
            _poll(deadline)
        table = resources.routes_from(int(a))[procs]
        jj, pos = np.nonzero(table >= 0)
        uses[table[jj, pos], i, jj] = True
    return uses


def _cut_sides(uses: np.ndarray, deadline: Optional[float] = None):
    """Per link, a processor bipartition whose crossing pairs are exactly the route users.

    Returns (links, sides) for links that carry any route, or None if some link is not a
    cut.
    """
    links, sides = [], []
    for l in range(uses.shape[0]):
        if not l & 15:
            _poll(deadline)
        u = uses[l]
        if not u.any():
            continue
        side = u[0].copy()  # processors whose route from processor 0 uses l
        expect = side[:, None] != side[None, :]
        if not np.array_equal(expect, u):
            return None
        links.append(l)
        sides.append(side)
    return links, sides


class _Builder:
    """Rows of a sparse matrix, added one at a time or as blocks of rows of equal width
    (entries kept in the order given: the model is the same whichever way it was built)."""

    def __init__(self, deadline: Optional[float] = None):
        self.counts, self.cols, self.vals, self.lb, self.ub = [], [], [], [], []
        self.n_rows = 0
        self.deadline = deadline

    def add(self, cols, vals, lb, ub):
        cols = np.asarray(cols, dtype=np.int64)
        self.add_block(cols[None, :], np.asarray(vals, dtype=np.float64)[None, :], lb, ub)

    def add_block(self, cols: np.ndarray, vals: np.ndarray, lb: float, ub: float) -> None:
        """``cols.shape[0]`` rows: row ``r`` has columns ``cols[r]`` and values ``vals[r]``
        (``vals`` broadcast to the shape of ``cols``)."""
        m, w = cols.shape
        _poll(self.deadline)
        self.counts.append(np.full(m, w, dtype=np.int64))
        self.cols.append(np.ascontiguousarray(cols, dtype=np.int64).reshape(-1))
        self.vals.append(np.broadcast_to(np.asarray(vals, dtype=np.float64), (m, w)).reshape(-1))
        self.lb.append(np.full(m, lb, dtype=float))
        self.ub.append(np.full(m, ub, dtype=float))
        self.n_rows += m

    @property
    def nnz(self) -> int:
        """Entries added so far (duplicates counted)."""
        return int(sum(c.shape[0] for c in self.cols))

    def matrix(self, n_vars):
        """The rows as a CSR matrix, built directly from the rows' lengths (the rows come in
        order): the same arrays as the triplet form's conversion (each row's entries in the
        order given, then sorted and duplicates summed) in about half its time (0.06 vs
        0.10-0.13 s on Table 1's pipelines of 2.2 million entries), polled between its steps
        (:class:`_OutOfTime` past the deadline)."""
        if not self.cols:
            return sp.csr_matrix((0, n_vars)), np.zeros(0), np.zeros(0)
        indptr = np.zeros(self.n_rows + 1, dtype=np.int64)
        np.cumsum(np.concatenate(self.counts), out=indptr[1:])
        vals = np.concatenate(self.vals)
        _poll(self.deadline)
        cols = np.concatenate(self.cols)
        _poll(self.deadline)
        a = sp.csr_matrix((vals, cols, indptr), shape=(self.n_rows, n_vars))
        _poll(self.deadline)
        a.sum_duplicates()
        return a, np.concatenate(self.lb), np.concatenate(self.ub)


class _OutOfTime(Exception):
    """The time limit passed while the model was being built."""


def _occupancy_unit(tasks: TaskGraph, resources: ResourceGraph) -> float:
    """The unit ``s`` of the model's ``z`` (the maximum occupancy is ``s z``): 1, unless the
    optimum is so small that the solvers' absolute optimality gap (1e-6) would swallow it.

    Every task on the fastest processor is a mapping without link load, so ``U = sum(w) /
    max(cap)`` bounds the optimum from above, and spreading the work bounds it from below by
    ``U / k``. When ``U`` is below ``2**-6`` the unit is the power of two ``2**-10`` below
    ``U``, so that ``z`` is at least about ``2**10 / k`` and the gap is relative to 1e-9 or
    so; a power of two, so that the model is the same one, exactly, in other units. Larger
    optima keep the unit 1 and the model as it always was.
    """
    w = float(np.sum(tasks.node_weight))
    cap = resources.capacity[resources.processors]
    top = float(cap.max()) if cap.size else 0.0
    if not (w > 0 and top > 0):
        return 1.0
    upper = w / top
    if not np.isfinite(upper) or upper >= 2.0**-6:
        return 1.0
    return float(np.exp2(np.floor(np.log2(upper)) - 10))


def _build(
    tasks: TaskGraph,
    resources: ResourceGraph,
    formulation: str,
    unit: float = 1.0,
    deadline: Optional[float] = None,
):
    n, procs = tasks.n, resources.processors
    k = procs.shape[0]
    s, t, vol = tasks.edges()
    ne = s.shape[0]
    z = n * k  # x[task, i] is column task * k + i
    nv = z + 1
    b = _Builder(deadline)
    grid = np.arange(n * k, dtype=np.int64).reshape(n, k)
    b.add_block(grid, np.ones(k), 1.0, 1.0)  # each task on one processor
    for i, p in enumerate(procs):
        b.add(np.r_[grid[:, i], z], np.r_[tasks.node_weight, -resources.capacity[p] * unit],
              -np.inf, 0.0)  # fmt: skip
    uses = (
        _route_usage(resources, deadline) if ne else np.zeros((resources.n_links, k, k), dtype=bool)
    )
    cut = _cut_sides(uses, deadline) if formulation in ("auto", "cut") else None
    if formulation == "cut" and cut is None:
        raise ValueError("formulation='cut' needs routes that are cuts (e.g. a tree network)")
    form = "cut" if cut is not None else "pairs"
    if ne == 0:
        return b, nv, form
    if form == "cut":
        links, sides = cut
        d0 = nv
        nv += ne * len(links)
        for li, (l, side) in enumerate(zip(links, sides)):
            a_idx = np.flatnonzero(side)
            na = a_idx.shape[0]
            d = d0 + li * ne + np.arange(ne, dtype=np.int64)
            # per stream e, two rows d >= X_s(A) - X_t(A) and d >= X_t(A) - X_s(A)
            one = np.concatenate([grid[s][:, a_idx], grid[t][:, a_idx], d[:, None]], axis=1)
            cols = np.repeat(one, 2, axis=0)
            ones = np.ones(na)
            vals = np.tile(np.stack([np.r_[ones, -ones, -1.0], np.r_[-ones, ones, -1.0]]),
                           (ne, 1))  # fmt: skip
            b.add_block(cols, vals, -np.inf, 0.0)
            b.add(np.r_[d, z], np.r_[vol, -resources.bandwidth[l] * unit], -np.inf, 0.0)
    else:
        y0 = nv
        nv += ne * k * k
        ys = y0 + np.arange(ne * k * k, dtype=np.int64).reshape(ne, k, k)  # y[e, a, b]
        # per stream e and processor i: sum_j y[e, i, j] = x[s, i], sum_j y[e, j, i] = x[t, i]
        row_a = np.concatenate([ys, grid[s][:, :, None]], axis=2)
        row_b = np.concatenate([ys.transpose(0, 2, 1), grid[t][:, :, None]], axis=2)
        cols = np.stack([row_a, row_b], axis=2).reshape(ne * k * 2, k + 1)
        b.add_block(cols, np.r_[np.ones(k), -1.0], 0.0, 0.0)
        for l in range(resources.n_links):
            ii, jj = np.nonzero(uses[l])
            if ii.shape[0] == 0:
                continue
            cols = ys[:, ii, jj].reshape(-1)
            vals = np.repeat(vol, ii.shape[0])
            b.add(np.r_[cols, z], np.r_[vals, -resources.bandwidth[l] * unit], -np.inf, 0.0)
    return b, nv, form


def _checker(tasks: TaskGraph, resources: ResourceGraph, unit: float = 1.0):
    """The runner's check (``check=`` of :func:`~coalloc._shared.milp.run_milp`): one processor
    per task (its ``x[t, p]`` near 1, the others near 0), and the mapping's maximum occupancy
    recomputed from scratch by :func:`coalloc.taskmap.verify_mapping` on the original graphs,
    not the solver's ``z`` (which its tolerances may leave below the true occupancy in a badly
    scaled model). Anything else raises :class:`~coalloc._shared.milp.Rejected`."""
    n, k = tasks.n, resources.n_processors

    def check(x: np.ndarray) -> float:
        xs = np.asarray(x, dtype=np.float64)[: n * k].reshape(n, k)
        if not np.all(np.isfinite(xs)) or np.abs(xs - np.rint(xs)).max(initial=0.0) > 1e-4:
            raise milp.Rejected("an assignment variable is not binary")
        on = (xs > 0.5).sum(axis=1)
        if np.any(on != 1):
            t = int(np.flatnonzero(on != 1)[0])
            raise milp.Rejected(f"task {t} is on {int(on[t])} processors")
        mapping = resources.processors[np.argmax(xs, axis=1)]
        report = verify_mapping(tasks, resources, mapping)
        if not report.valid:
            raise milp.Rejected("; ".join(report.problems))
        return float(report.max_occupancy) / unit  # in the model's unit of z (exact)

    return check


def _cp_model(cp_model, csr, lb, ub, nv, zcol, unit, capacity_row, deadline=None):
    """The rows of :func:`_build` on CP-SAT: the 0/1/-1 rows as they are, each capacity row
    ``sum(a_j v_j) <= c z`` through ``capacity_row(model, xs, cols, values, c)`` (``c`` the
    capacity or bandwidth in the data's units); every variable but ``z`` Boolean."""
    model = cp_model.CpModel()
    xs = []
    for start in range(0, nv, 2048):
        _poll(deadline)
        xs.extend(model.NewBoolVar("") for _ in range(start, min(nv, start + 2048)))
    for r in range(csr.shape[0]):
        if not r & 255:  # CP-SAT's model is built row by row: poll the limit
            _poll(deadline)
        cols = csr.indices[csr.indptr[r] : csr.indptr[r + 1]]
        vals = csr.data[csr.indptr[r] : csr.indptr[r + 1]]
        on_z = cols == zcol
        if not on_z.any():  # assignment, cut and pairs rows: coefficients 0, 1 or -1
            expr = sum(int(v) * xs[c] for c, v in zip(cols.tolist(), vals.tolist()))
            lo = None if not np.isfinite(lb[r]) else int(round(lb[r]))
            hi = None if not np.isfinite(ub[r]) else int(round(ub[r]))
            if lo is not None and lo == hi:
                model.Add(expr == lo)
            else:
                if lo is not None:
                    model.Add(expr >= lo)
                if hi is not None:
                    model.Add(expr <= hi)
            continue
        load_c, load_v = cols[~on_z], vals[~on_z]
        keep = load_v > 0
        if keep.any():
            c = -float(vals[on_z][0]) / unit
            capacity_row(model, xs, load_c[keep].tolist(), load_v[keep], c)
    return model, xs


def _run_cpsat(tasks, resources, problem: milp.MilpProblem, unit: float,
               options: milp.MilpOptions, check) -> tuple:  # fmt: skip
    """The model of :func:`_build` (``problem``: rows ``A``, ``row_lb <= A v <= row_ub``,
    ``z`` at column ``n k``) on CP-SAT (module docstring) with ``options`` (``started``
    set): the integer relaxation minimising ``Z``, then decision solves "a mapping below
    the incumbent's occupancy?" until one is infeasible (the proof) or the limit; returns
    ``(outcome, bound)``, the bound in the user's units."""
    a, lb, ub, nv = problem.A, problem.row_lb, problem.row_ub, int(len(problem.c))
    time_limit, mip_gap, verbose = options.time_limit, options.mip_gap, options.verbose
    t0 = float(options.started)
    deadline = None if time_limit is None else t0 + time_limit
    # OR-Tools' first import (0.3-0.7 s, 4.7 s under a load of 15) is given up at the
    # deadline, and goes on in the background for the next call
    cp_model = milp.import_solver_until("cpsat", deadline)
    if cp_model is None:
        raise _OutOfTime()
    _poll(deadline)
    n, k = tasks.n, resources.n_processors
    zcol = n * k
    cap = resources.capacity[resources.processors]
    top = float(cap.max()) if cap.size else 0.0
    upper = float(np.sum(tasks.node_weight)) / top if top > 0 else 0.0  # all on the fastest
    # the integer Z is the occupancy in units u = upper / 2**20
    u = upper / 2.0**20 if upper > 0 else 1.0
    csr = a.tocsr()
    big_z = []

    def relaxed(model, xs, cols, values, c):  # loads rounded down, capacity rounded up
        if not big_z:
            big_z.append(model.NewIntVar(0, 2**20 + 1, "Z"))
            xs[zcol] = big_z[0]
        scale = float(values.max()) / 2.0**24
        coef = np.floor(values / scale).astype(np.int64).tolist()
        model.Add(sum(q * xs[j] for j, q in zip(cols, coef))
                  <= int(np.ceil(c * u / scale)) * big_z[0])  # fmt: skip

    deadline = None if time_limit is None else t0 + time_limit
    model, xs = _cp_model(cp_model, csr, lb, ub, nv, zcol, unit, relaxed, deadline)
    if big_z:
        model.Minimize(big_z[0])
    outcome = milp.run_cpsat(
        cp_model, model, xs, rows=int(csr.shape[0]), time_limit=time_limit, mip_gap=mip_gap,
        verbose=verbose, started=t0, objective_scale=u,
    )  # fmt: skip
    bound = None
    if outcome.bound is not None and outcome.x is not None:
        bound = max(0.0, float(outcome.bound) - u)  # (B - 1) u: the rounding's margin
    value = None
    if outcome.x is not None:
        try:
            value = check(outcome.x) * unit  # the mapping on the original graphs
        except milp.Rejected as exc:
            outcome.status, outcome.x = "error", None
            outcome.message += f"; not trusted: {exc}"
            return outcome, None
    if outcome.status == "optimal":
        outcome.status = "feasible"  # optimal in CP-SAT's rounding; settle() judges the gap
    if outcome.x is None or outcome.time_limit_hit:  # no mapping, or no time left for more
        return outcome, bound
    # The proof: is there a mapping whose occupancy is below w = value (1 - 5e-10)? Rows
    # in units of 2**-40 of their largest load, rounded down, capacities c w rounded up: a
    # relaxation, so "infeasible" proves that none is; a feasible answer is a new mapping.
    for _ in range(20):
        if not value > 0:
            break
        w = value * (1 - 5e-10)

        def below(model, xs, cols, values, c, w=w):
            scale = float(values.max()) / 2.0**40
            coef = np.floor(values / scale).astype(np.int64).tolist()
            model.Add(sum(q * xs[j] for j, q in zip(cols, coef))
                      <= int(np.floor(c * w * (1 + 1e-12) / scale)))  # fmt: skip

        try:
            dmodel, dxs = _cp_model(cp_model, csr, lb, ub, nv, zcol, unit, below, deadline)
        except _OutOfTime:
            outcome.status = "time_limit"  # the incumbent stays, unproven
            break
        dxs[zcol] = dmodel.NewConstant(0)
        left = None if time_limit is None else time_limit - (time.perf_counter() - t0)
        if left is not None and left <= 0:
            break
        step = milp.run_cpsat(cp_model, dmodel, dxs, rows=int(csr.shape[0]), time_limit=left,
                              verbose=verbose)  # fmt: skip
        if step.status == "infeasible":  # proven: no mapping below w
            bound = max(bound or 0.0, w)
            outcome.message += "; optimality proven by an infeasible decision model"
            break
        if step.x is None:  # stopped, or failed: keep what we have
            if step.status == "time_limit":
                outcome.status = "time_limit"
            break
        try:
            new = check(step.x) * unit
        except milp.Rejected:
            break
        if not new < value:  # the rounding's slack let an equal mapping through: no proof
            break
        value, outcome.x = new, step.x
    return outcome, bound


#: The model's build takes about 2 us per variable (1.9-2.1 us measured on the Table 1
#: pipelines' 69,000-86,000 variables, 0.13-0.17 s, load 1); a timed call whose time
#: left is under half that for its variables does not start building (the build's polls
#: came 0.06-0.12 s late there when the process was large, in the contract audit)
BUILD_SECONDS_PER_VARIABLE = 1e-6


#: The matrix's assembly (:meth:`_Builder.matrix`, one step that no poll cuts) takes at most
#: this many times the rows' build that came before it, measured in the same call: 0.4-0.9
#: on Table 1's pipelines (2.2-3.7 million entries) beside two busy loops, up to 2-3 in
#: bursts (1.3-2.3 with the triplet form's conversion, which ran a timed exact call at
#: T = 0.5 s to 0.7-1.05 s there); its steps are polled too, so a burst costs one step
MATRIX_PER_BUILD = 1.5


def _assembly_fits(t_build: float, deadline: Optional[float]) -> None:
    """Raise :class:`_OutOfTime` when the matrix's assembly is predicted to end past
    ``deadline``: :data:`MATRIX_PER_BUILD` times the build's seconds since ``t_build``."""
    if deadline is None:
        return
    now = time.perf_counter()
    if now + MATRIX_PER_BUILD * (now - t_build) >= deadline:
        raise _OutOfTime()


def _stopped_building(solver, formulation, time_limit, mip_gap, t0,
                      predicted=None) -> ExactMappingResult:  # fmt: skip
    """The result of a call whose time limit passed while its model was being built (or,
    with ``predicted``, before: the build's predicted seconds were more than the limit)."""
    elapsed = time.perf_counter() - t0
    message = (f"stopped at the time limit ({time_limit:g} s) while building the model, "
               "before a solution")  # fmt: skip
    if predicted is not None:
        message = (f"not started: the model's build (about {predicted:.2g} s predicted) "
                   f"does not fit the time limit ({time_limit:g} s)")  # fmt: skip
    return ExactMappingResult(
        mapping=None, max_occupancy=None, bottleneck=None, method="exact",
        params={"solver": solver, "formulation": formulation, "time_limit": time_limit,
                "mip_gap": float(mip_gap)},
        status="time_limit", solver=solver, formulation=formulation,
        timings={"build": elapsed, "total": elapsed},
        message=message,
    )  # fmt: skip


def _model_size(tasks: TaskGraph, resources: ResourceGraph) -> int:
    """Variables plus nonzeros of the ``"auto"`` model (what decides whether the shared
    runner solves it in a child process)."""
    builder, nv, _form = _build(tasks, resources, "auto")
    return int(nv) + int(builder.matrix(nv)[0].nnz)


#: HiGHS's options in a node-capped solve besides the cap (the shared runner's
#: ``MilpOptions.highs_options``, with ``node_limit``): the solve starts from the
#: heuristic's mapping, so the primal heuristics that look for a first incumbent (RINS,
#: RENS, feasibility jump: a third of the LP iterations and half the time at the root on
#: 120 pairs) are left out; the time goes to the bound (measured: 1.4 -> 0.5 s and 9.9 ->
#: 5.7 s on 96 and 120 pairs, answers equal or better).
_CAPPED_OPTIONS = {"mip_heuristic_run_rins": False, "mip_heuristic_run_rens": False,
                   "mip_heuristic_run_feasibility_jump": False}  # fmt: skip


def _start_vector(tasks: TaskGraph, resources: ResourceGraph, mapping: np.ndarray,
                  form: str, nv: int, unit: float) -> np.ndarray:  # fmt: skip
    """The model's variables (:func:`_build`'s columns) for ``mapping``: ``x`` its 0/1
    assignment, ``d`` (``"cut"``) or ``y`` (``"pairs"``) the crossings it makes, ``z`` its
    maximum occupancy in the model's unit: a feasible start for the solver."""
    procs = resources.processors
    n, k = tasks.n, procs.shape[0]
    where = {int(p): i for i, p in enumerate(procs)}
    col = np.array([where[int(p)] for p in mapping], dtype=np.int64)
    x = np.zeros((n, k))
    x[np.arange(n), col] = 1.0
    out = np.zeros(nv)
    out[: n * k] = x.reshape(-1)
    occupancy, _ = _max_occupancy(tasks, resources, np.asarray(mapping, dtype=np.int64))
    out[n * k] = float(occupancy) / unit
    s, t, _vol = tasks.edges()
    ne = s.shape[0]
    if ne == 0:
        return out
    d0 = n * k + 1
    if form == "cut":
        links, sides = _cut_sides(_route_usage(resources))
        for li, side in enumerate(sides):
            out[d0 + li * ne : d0 + (li + 1) * ne] = (side[col[s]] != side[col[t]])
    else:
        y = np.zeros((ne, k, k))
        y[np.arange(ne), col[s], col[t]] = 1.0
        out[d0 : d0 + ne * k * k] = y.reshape(-1)
    return out


@checked("coalloc.taskmap.constraints", "exact")
def solve_exact_mapping(
    task_graph: TaskGraph,
    resource_graph: ResourceGraph,
    *,
    solver: str = "highs",
    formulation: str = "auto",
    time_limit: Optional[float] = None,
    mip_gap: float = 0.0,
    max_variables: int = 200_000,
    verbose: bool = False,
) -> ExactMappingResult:
    """Minimise the maximum occupancy exactly (small instances).

    Parameters
    ----------
    task_graph, resource_graph : TaskGraph, ResourceGraph
        The graphs.
    solver : {"highs", "cbc", "cpsat"}
        HiGHS via highspy (a core dependency), CBC via PuLP (``coalloc[cbc]``) or CP-SAT
        via OR-Tools (``coalloc[cpsat]``; an integer relaxation within about ``2**-20`` of
        the optimum, module docstring). ``backend=`` is its deprecated name.
    formulation : {"auto", "cut", "pairs"}
        Linearisation of the link loads (module docstring); ``"auto"`` picks ``"cut"``
        when it is exact for the routes, else ``"pairs"``.
    time_limit : float, optional
        Seconds for the call, building the model included.
    mip_gap : float
        Relative gap at which the solver may stop (status stays ``"feasible"`` unless the gap
        closes).
    max_variables : int
        Refuse (``ValueError``) to build a larger model.
    verbose : bool
        Print the solver log.

    Returns
    -------
    ExactMappingResult
        The best mapping found, its proven lower bound and gap.

    Raises
    ------
    TypeError
        ``task_graph`` or ``resource_graph`` of the wrong type.
    ValueError
        Bad options, or a model larger than ``max_variables``.
    ImportError
        ``solver="cbc"`` without PuLP, ``solver="cpsat"`` without OR-Tools.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> result = tm.solve_exact_mapping(tasks, res, time_limit=10)
    >>> result.status, result.max_occupancy, result.gap
    ('optimal', 0.6, 0.0)
    """
    if not isinstance(task_graph, TaskGraph) or not isinstance(resource_graph, ResourceGraph):
        raise TypeError("solve_exact_mapping needs a TaskGraph and a ResourceGraph")
    return _solve_exact(task_graph, resource_graph, solver=solver, formulation=formulation,
                        time_limit=time_limit, mip_gap=mip_gap, max_variables=max_variables,
                        verbose=verbose)  # fmt: skip


def _solve_exact(
    task_graph: TaskGraph,
    resource_graph: ResourceGraph,
    *,
    solver: str = "highs",
    formulation: str = "auto",
    time_limit: Optional[float] = None,
    mip_gap: float = 0.0,
    max_variables: int = 200_000,
    verbose: bool = False,
    start: Optional[np.ndarray] = None,
    node_limit: Optional[int] = None,
) -> ExactMappingResult:
    """:func:`solve_exact_mapping` (its arguments checked), and for the family's default
    (:func:`~coalloc.taskmap.portfolio.map_portfolio`): ``start``, a mapping the solver
    starts from (its incumbent at once), and ``node_limit``, the solver's branch-and-bound
    nodes at most (the shared runner's ``MilpOptions.node_limit``: HiGHS's
    ``mip_max_nodes``, CBC's ``-maxNodes``; CP-SAT refuses it), with HiGHS's first-incumbent
    heuristics off (:data:`_CAPPED_OPTIONS`). A node-capped solve ends ``"feasible"`` when
    the cap stops it (``"optimal"`` when its bound meets the mapping), never
    ``"time_limit"``."""
    t0 = time.perf_counter()
    if node_limit is not None and solver == "cpsat":  # as the shared runner's run_cpsat
        raise ValueError(f"node_limit={node_limit}: CP-SAT has no count of branch-and-bound "
                         "nodes; use solver 'highs' or 'cbc'")  # fmt: skip
    k = resource_graph.n_processors
    est = task_graph.n * k + task_graph.n_edges * (
        k * k if formulation == "pairs" else resource_graph.n_links
    )
    if est > max_variables:
        raise ValueError(
            f"model too large (about {est} variables > max_variables={max_variables}); the "
            "exact solver is meant for small instances"
        )
    unit = _occupancy_unit(task_graph, resource_graph)
    deadline = None if time_limit is None else t0 + time_limit
    predicted = est * BUILD_SECONDS_PER_VARIABLE
    if deadline is not None and predicted > deadline - time.perf_counter():
        return _stopped_building(solver, formulation, time_limit, mip_gap, t0, predicted)
    try:
        t_build = time.perf_counter()
        builder, nv, form = _build(task_graph, resource_graph, formulation, unit, deadline)
        _assembly_fits(t_build, deadline)
        a, lb, ub = builder.matrix(nv)
        if deadline is not None and time.perf_counter() >= deadline:
            raise _OutOfTime()  # no time left for the solver: do not start it
    except _OutOfTime:
        return _stopped_building(solver, formulation, time_limit, mip_gap, t0)
    if form == "pairs" and nv > max_variables:
        raise ValueError(f"model too large ({nv} variables > max_variables={max_variables})")
    integrality = np.zeros(nv)
    integrality[: task_graph.n * k] = 1
    cost = np.zeros(nv)
    cost[task_graph.n * k] = 1.0
    t1 = time.perf_counter()
    hi = np.where(integrality == 1, 1.0, np.inf)
    check = _checker(task_graph, resource_graph, unit)
    if solver == "cpsat":
        try:
            problem = milp.MilpProblem(cost, a, lb, ub, integrality)
            options = milp.MilpOptions(time_limit=time_limit, mip_gap=mip_gap, verbose=verbose,
                                       started=t0)  # fmt: skip
            outcome, bound = _run_cpsat(task_graph, resource_graph, problem, unit, options, check)
        except _OutOfTime:
            return _stopped_building(solver, formulation, time_limit, mip_gap, t0)
    else:
        if solver == "cbc":
            # Every variable but z is at most 1 (each d of "cut" and y of "pairs" is a
            # crossing indicator): implied by the rows, but without it CBC's preprocessing
            # can turn a presolved optimum into a wrong one ("Cgl0014I Postprocessing changed
            # objective ... possible tolerance issue": 4.0 reported optimal where 1.6 is, on
            # two tasks). HiGHS keeps the model it always had (same answers).
            hi[task_graph.n * k + 1 :] = 1.0
        # a first import (CBC's PuLP) by the deadline, through the shared mechanism
        pkg = milp.import_solver_until(solver, deadline)
        if pkg is None:
            return _stopped_building(solver, formulation, time_limit, mip_gap, t0)
        x0 = None
        if start is not None:
            x0 = _start_vector(task_graph, resource_graph, start, form, nv, unit)
        outcome = milp.run_milp(
            solver, pkg, cost, a, lb, ub, integrality=integrality,
            lb=0.0, ub=hi, sense="min", time_limit=time_limit, mip_gap=mip_gap,
            verbose=verbose, name="taskmap_exact", started=t0, check=check, start=x0,
            node_limit=node_limit,
            highs_options=None if node_limit is None else _CAPPED_OPTIONS,
        )  # fmt: skip
        bound = outcome.bound
        if bound is not None:
            bound = bound * unit  # the user's units (a power of two: exact)
    xval, message = outcome.x, outcome.message
    # The model always has a solution (any mapping): "infeasible" means the solver failed.
    status = "error" if outcome.status == "infeasible" else outcome.status
    t2 = time.perf_counter()
    mapping = objective = gap = bottleneck = None
    if xval is not None:
        xs = xval[: task_graph.n * k].reshape(task_graph.n, k)
        mapping = resource_graph.processors[np.argmax(xs, axis=1)].astype(np.int64)
        objective, bottleneck = _max_occupancy(task_graph, resource_graph, mapping)
        if bound is not None:
            bound = min(bound, objective)
            gap = relative_gap(objective, bound, sense="min")
        if status == "optimal":  # the solver's proof, within its tolerances (1e-6 absolute
            bound, gap = objective, 0.0  # on z): the bound is the optimum's value
    elif status in ("optimal", "feasible"):
        status = "error"
    return ExactMappingResult(
        mapping=mapping,
        max_occupancy=None if objective is None else float(objective),
        bottleneck=bottleneck,
        method="exact",
        params={
            "solver": solver,
            "formulation": form,
            "time_limit": time_limit,
            "mip_gap": float(mip_gap),
        },
        iterations={} if outcome.nodes is None else {"nodes": int(outcome.nodes)},
        bound=None if bound is None else float(bound),
        status=status,
        gap=gap,
        solver=solver,
        formulation=form,
        timings={"build": t1 - t0, "solve": t2 - t1, "total": time.perf_counter() - t0},
        model={"variables": int(nv), "rows": int(a.shape[0]), "integers": task_graph.n * k},
        message=message,
    )


# ``solver=``'s deprecated spelling ``backend=`` accepted here, at the public boundary.
solve_exact_mapping = renamed_keyword(solve_exact_mapping, "backend", "solver")
