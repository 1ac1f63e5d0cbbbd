"""The ``assign+`` methods: assign+'s strategies and, for the default, the portfolio that
improves their mapping (a quick anneal, best-fit and plentiful-type moves, offered desires
made hard, assign's annealer, the exact method on small experiments) sharing one incumbent."""

from __future__ import annotations

import array
import math
import time
from typing import Any, Callable, Dict, Mapping, Optional

import numpy as np

from ..._shared import interrupt
from ..._shared.constraints import checked
from ..._shared.docs import filled
from ..._shared.params import _TimeLimitReached, backend_name, choice, offer_incumbent
from ..._shared.seeding import kernel_seed
from .. import _anneal
from ..anneal import (
    ANNEAL_DEFAULTS,
    kernel_data,
    kernel_deadline,
    kernel_deadline_struct,
    raise_stop,
    run_anneal,
)
from ..assignplus import (
    ALL_STRATEGIES,
    SCORINGS,
    STRATEGIES,
    RequestMemory,
    _scarce_offers,
    assign_plus,
    packing,
    scarcity,
)
from ..io import top_from_dict, top_to_dict
from ..model import HARD_WEIGHT, PhysicalTopology, VirtualTopology
from ..problem import Problem, build_problem
from ..reasons import reason_text
from ..result import MappingResult
from ..routing import route
from ..verify import verify_mapping
from .exact import _not_exact_for
from .first_feasible import first_feasible
from .outcome import _problem, _Report, _result, policy_breach
from .started import start_thread

__all__ = ["assign_plus_method", "unmet_desires", "QUICK_ANNEAL", "PORTFOLIO_EXACT_NODES",
           "PORTFOLIO_EXACT_SECONDS"]  # fmt: skip

QUICK_ANNEAL: Dict[str, Any] = {
    "t0": 1.0,
    "melt_moves": 0,
    "melt_accept": 0.95,
    "cooling": 0.9,
    "min_moves": 200,
    "t_stop": 0.005,
    "frozen": 0,
    "max_moves": 30_000,
}
#: The default's ``exact_nodes``: it runs the exact method on experiments of at most this
#: many virtual nodes (with :data:`PORTFOLIO_EXACT_SECONDS` of time), after the heuristics
#: and only when their best mapping sends bandwidth across switches. 0 (off) by default:
#: importing CP-SAT takes about 1.5 s and a solve 0.05-0.5 s, a hundred times the
#: milliseconds the heuristics take; ``exact_nodes=8`` asks for it.
PORTFOLIO_EXACT_NODES = 0
PORTFOLIO_EXACT_SECONDS = 0.5


@filled
def unmet_desires(top: VirtualTopology, ptop: PhysicalTopology, mapping: Mapping[str, str]
                  ) -> float:  # fmt: skip
    """The summed weight of the soft desires a mapping leaves unmet.

    A soft desire (weight below 1, not an additive ``?+`` one) is met when the physical
    node hosting its virtual node offers the feature.

    Parameters
    ----------
    %(testbed_topologies)s
    mapping : mapping of str to str
        Virtual node -> physical node.

    Returns
    -------
    float
        The sum of the unmet soft desires' weights (0 when every one is met).

    Examples
    --------
    >>> import coalloc.testbed as tb
    >>> ptop = tb.parse_ptop("node sw switch:1\\nnode a pc:1\\nnode b pc:1 - special:0.2\\n"
    ...                      "link la a sw 100 0 0\\nlink lb b sw 100 0 0")
    >>> top = tb.parse_top("node x pc special:0.5")
    >>> tb.solvers.unmet_desires(top, ptop, {"x": "a"}), tb.solvers.unmet_desires(
    ...     top, ptop, {"x": "b"})
    (0.5, 0.0)
    """
    total = 0.0
    for v, node in top.nodes.items():
        if not node.desires:
            continue
        feats = ptop.nodes[mapping[v]].features
        for k, w in node.desires.items():
            if w < HARD_WEIGHT and not k.startswith("?+") and k not in feats:
                total += w
    return math.fsum([total])


def _scored(pr: Problem, data: dict, where) -> Optional[float]:
    """assign's score (the published weights) of a complete mapping, None when it has
    violations: the annealing kernel placed at ``where`` without making a move."""
    from .._anneal import anneal

    params = dict(ANNEAL_DEFAULTS, melt_moves=0, t0=1.0, t_stop=2.0,
                  start=np.asarray(where, dtype=np.int64))  # fmt: skip
    out = anneal(data, 0, params)
    return float(out["score"]) if out["valid"] else None


def _offered_desires_hard(pr: Problem, available) -> Optional[VirtualTopology]:
    """The experiment with each soft desire that a usable physical node offers made hard
    (weight 1), or None when no such desire exists."""
    offered = set()
    for name, node in pr.ptop.nodes.items():
        if available is None or name in available:
            offered.update(node.features)
    d = top_to_dict(pr.top)
    changed = False
    for nd in d["nodes"]:
        for k, w in list(nd["desires"].items()):
            if w < HARD_WEIGHT and not k.startswith("?+") and k in offered:
                nd["desires"][k] = HARD_WEIGHT
                changed = True
    return top_from_dict(d) if changed else None


def _best_fit_moves(pr: Problem, where: np.ndarray) -> list:
    """The mapping ``where`` moved whole to another switch, for each switch with fewer
    free hosts than the one it uses now (fewest first) that can take it: the best fit of
    bin packing, which keeps the larger blocks of free hosts for the next experiments.

    Applies to a mapping whose hosts hang off one switch, one virtual node a host, no
    node fixed; a virtual node on that switch itself (a LAN) moves to the new switch, each
    other to a free host behind it of one of its candidate pclasses. Returns the moved
    mappings (none where the rule does not apply).
    """
    w = np.asarray(where, dtype=np.int64)
    if pr.nv == 0 or (pr.fixed >= 0).any():
        return []
    on_sw = pr.pis_switch[w]
    hosts = w[~on_sw]
    if len(hosts) == 0 or len(np.unique(hosts)) != len(hosts):
        return []
    home = np.unique(pr.pswitch[w])
    if len(home) != 1 or home[0] < 0:
        return []
    s = int(home[0])
    taken = np.zeros(len(pr.pnames), dtype=bool)
    taken[hosts] = True
    usable = (pr.pclass >= 0) & ~pr.pis_switch
    free = np.bincount(pr.pswitch[usable & ~taken & (pr.pswitch >= 0)],
                       minlength=len(pr.switches))  # fmt: skip
    here = int(free[s]) + len(hosts)  # free behind s before this experiment
    out = []
    vs = np.flatnonzero(~on_sw).tolist()
    for t in sorted(range(len(pr.switches)), key=lambda t: (int(free[t]), t)):
        if t == s or free[t] < len(hosts) or free[t] >= here:
            continue
        tp = pr.pidx[pr.switches[t]]
        moved = w.copy()
        if on_sw.any():  # the nodes on the switch itself must be able to go on t
            if not all(int(pr.pclass[tp]) in pr.cand[v] for v in np.flatnonzero(on_sw)):
                continue
            moved[on_sw] = tp
        busy = set()
        for v in vs:
            free_here = (int(q) for c in pr.cand[v] if pr.cswitch[c] == t
                         for q in pr.members[c] if not taken[q])  # fmt: skip
            p = next((q for q in free_here if q not in busy), -1)
            if p < 0:
                break
            busy.add(p)
            moved[v] = p
        else:
            out.append(moved)
    return out


def _scarce_move(pr: Problem, where: np.ndarray) -> Optional[np.ndarray]:
    """The mapping ``where`` with each virtual node moved to the free host behind the same
    switch whose node types are the most plentiful (None when nothing moves).

    Each virtual node that has a host of its own (one virtual node a host, not fixed) may
    take any free host of one of its candidate pclasses behind the switch of its host,
    with at least as many interfaces and as fast a fastest interface; the hosts are chosen
    greedily, the virtual nodes with the fewest choices first, each taking the host whose
    types leave the most free hosts of every type it offers (the smallest sum of
    ``1 / free`` over its types counted by :func:`.assignplus.scarcity`; on ties the
    current host, else the first). The switches do not change, so neither do the trunks
    crossed.
    """
    w = np.asarray(where, dtype=np.int64)
    if pr.nv == 0:
        return None
    on_sw = pr.pis_switch[w]
    hosts = w[~on_sw]
    if len(hosts) == 0 or len(np.unique(hosts)) != len(hosts):
        return None
    movable = [v for v in np.flatnonzero(~on_sw).tolist() if pr.fixed[v] < 0]
    if not movable:
        return None
    offers = _scarce_offers(pr).astype(float)
    usable = (pr.pclass >= 0) & ~pr.pis_switch
    pool = usable.copy()
    pool[hosts] = False
    pool[[w[v] for v in movable]] = True  # (the movable nodes' hosts are free to take)
    left = offers[pool].sum(axis=0)  # free hosts per type, this experiment's movable out
    options = {}
    for v in movable:
        p = int(w[v])
        ok = np.zeros(pr.nc, dtype=bool)
        ok[pr.cand[v]] = True
        mask = (
            pool
            & (pr.pswitch == pr.pswitch[p])
            & (pr.pifaces >= pr.pifaces[p])
            & (pr.pifbw >= pr.pifbw[p])
        )
        q = np.flatnonzero(mask)
        options[v] = q[ok[pr.pclass[q]]]
    moved = w.copy()
    for v in sorted(movable, key=lambda v: (len(options[v]), v)):
        q = options[v]
        q = q[pool[q]]
        if len(q) == 0:
            return None
        cost = offers[q] @ (1.0 / np.maximum(left, 1.0))
        ties = q[cost <= cost.min() + 1e-12]
        best = int(w[v]) if int(w[v]) in ties.tolist() else int(ties[0])
        moved[v] = best
        pool[best] = False
        left -= offers[best]
    return None if np.array_equal(moved, w) else moved


def _portfolio(pr: Problem, seed, first: dict, params: dict, counters: dict,
               backend: str, available=None, exact_nodes: int = 0,
               offer: Optional[Callable[..., None]] = None,
               annealed: Optional[dict] = None,
               beside: Optional[_BesideAnneal] = None) -> tuple:  # fmt: skip
    """The default's improvement of assign+'s mapping ``first``: a quick anneal seeded
    from it, assign's annealer (the ``"anneal"`` method, same seed), and the exact method
    on small experiments; the best candidate by ``(unmet soft desires, inter-switch
    bandwidth, scarcity, assign's score, -packing)`` (scarcity:
    :func:`.assignplus.scarcity`, the scarce node types taken; packing:
    :func:`.assignplus.packing`, the best fit that keeps free hosts together). The anneals
    run only where a desire is unmet or bandwidth crosses switches.

    ``offer(where, routing, key, label)`` is called with each new best (the time limit's
    incumbent); a kernel stopped by the deadline (or Ctrl-C) raises its stop after its best
    mapping was considered and offered. ``annealed``: assign's annealer's output when it
    already ran (under a time limit, straight after the paper's strategies), considered
    instead of running it again; ``beside``: the annealer running in a thread since before
    the strategies (:class:`_BesideAnneal`), heard where the untimed order runs it.

    Returns ``(where, routing, key, label, exact result or None)``.
    """
    best = _Incumbent(pr, kernel_data(pr), offer, first)
    # Under a time limit assign's annealer runs first: it is a method of its own, and the
    # default must be at least as good as it at the same budget. After the quick anneal and
    # the moves (10-20 ms more, 5x that under a load of 10 on 2 cores) it started so late that
    # at 0.05 s it was cut before its 200 on test_big onto Utah 2000 (the default gave 300 or
    # 400 where "anneal" alone gave 200, issue 36 item 4). assign_plus_method now starts it
    # before all the strategies, in a thread beside them and the steps below (``beside``,
    # heard where the untimed order runs it), or with the NumPy twin straight after the
    # paper's strategies (``annealed``). Untimed, the order (and so every answer) is as before.
    timed = kernel_deadline() is not None
    if annealed is not None:
        _annealed_candidate(best, annealed)
    elif timed and beside is None:
        _full_anneal(best, seed, backend, counters)
    _quick_anneal(best, first, seed, backend, counters)
    _moves(best)
    if best.key[0] > 0:  # a soft desire unmet: the strategies with offered desires made hard
        _offered_desires(best, available, backend)
    if beside is not None:  # running since before the strategies: heard here
        an = beside.hear(pr, counters)
        _annealed_candidate(best, an)
        if an["stopped"]:
            raise_stop(an)
    elif not timed:
        _full_anneal(best, seed, backend, counters)
    exact = None
    if pr.nv <= exact_nodes and best.key[1] > 0 and _not_exact_for(pr) is None:
        exact = _exact_candidate(best, seed)
    return best.where, best.routing, best.key, best.label, exact


def _key(pr: Problem, data: dict, where, rt) -> tuple:
    """``(unmet soft desires, inter-switch bandwidth, scarcity, assign's score, -packing)``
    of a candidate mapping ``where`` routed by ``rt`` (smaller is better); ``data``:
    :func:`..anneal.kernel_data` of ``pr``."""
    mapping = dict(zip(pr.vnames, [pr.pnames[p] for p in np.asarray(where).tolist()]))
    sc = _scored(pr, data, where)
    sc = sc if sc is not None else math.inf
    u, i = unmet_desires(pr.top, pr.ptop, mapping), float(rt.interswitch_bandwidth)
    # (scarcity rounded: sums of floats in another order must not decide)
    return (u, i, round(scarcity(pr, where), 9), sc, -packing(pr, where))


class _Incumbent:
    """The portfolio's best candidate mapping (:func:`_portfolio`): its ``key`` (the order
    of :meth:`score`), ``where``, ``routing`` and ``label``; :meth:`better` keeps a better
    candidate and offers it (``offer``, the time limit's incumbent)."""

    __slots__ = ("pr", "data", "offer", "key", "where", "routing", "label")

    def __init__(self, pr: Problem, data: dict, offer: Optional[Callable[..., None]],
                 first: dict) -> None:  # fmt: skip
        self.pr, self.data, self.offer = pr, data, offer
        rt0 = first["routing"]
        self.key, self.where = self.score(first["where"], rt0), first["where"]
        self.routing, self.label = rt0, "assign+"
        if offer is not None:
            offer(self.where, rt0, self.key, "assign+")

    def score(self, where, rt) -> tuple:
        """``(unmet soft desires, inter-switch bandwidth, scarcity, assign's score,
        -packing)`` of a candidate (smaller is better): :func:`_key`."""
        return _key(self.pr, self.data, where, rt)

    def better(self, where, rt, label: str, check: bool = False) -> bool:
        """Keep the candidate (``where``, routed ``rt``) when it routes and scores better
        (and, with ``check``, passes the checker); whether it was kept."""
        if rt.failure is not None:
            return False
        k = self.score(where, rt)
        if k >= self.key:
            return False
        if check:  # (the checker too: a move changes pclasses, which type limits count)
            pr = self.pr
            mapping = dict(zip(pr.vnames, [pr.pnames[p] for p in np.asarray(where).tolist()]))
            if not verify_mapping(pr.top, pr.ptop, mapping, rt.routes).ok:
                return False
        self.key, self.where = k, np.asarray(where, dtype=np.int64)
        self.routing, self.label = rt, label
        if self.offer is not None:
            self.offer(self.where, rt, k, label)
        return True


def _full_anneal(best: _Incumbent, seed, backend: str, counters: dict) -> None:
    """assign's annealer, as the ``"anneal"`` method runs it (same seed, same schedule),
    where a desire is unmet or bandwidth crosses switches."""
    if best.key[0] > 0 or best.key[1] > 0:
        pr = best.pr
        an = run_anneal(pr, kernel_seed(seed), dict(ANNEAL_DEFAULTS), backend)
        counters["anneal_moves"] = int(an["moves"])
        if an["valid"]:
            best.better(an["where"], route(pr, an["where"]), "anneal")
        if an["stopped"]:
            raise_stop(an)


def _annealed_candidate(best: _Incumbent, an: dict) -> None:
    """assign's annealer's output ``an`` (already run) considered as a candidate."""
    if an["valid"]:
        rt = an.get("routing") or route(best.pr, an["where"])
        best.better(an["where"], rt, "anneal")


def _quick_anneal(best: _Incumbent, first: dict, seed, backend: str, counters: dict) -> None:
    """A quick anneal seeded from assign+'s mapping ``first``, where a desire is unmet or
    bandwidth crosses switches (nothing to gain where both are already 0)."""
    pr = best.pr
    out = {"valid": False}
    if best.key[0] > 0 or best.key[1] > 0:
        qa = dict(QUICK_ANNEAL, start=np.asarray(first["where"], dtype=np.int64),
                  deadline=kernel_deadline_struct(pr))  # fmt: skip
        if backend != "compiled":
            from .._reference.anneal import anneal as kernel
        else:
            from .._anneal import anneal as kernel
        out = kernel(best.data, kernel_seed(seed) & ((1 << 64) - 1), qa)
        counters["quick_moves"] = int(out["moves"])
    if out["valid"]:
        where = np.asarray(out["where"], dtype=np.int64)
        if not np.array_equal(where, first["where"]):
            best.better(where, route(pr, where), "quick anneal")
    if out.get("stopped"):
        raise_stop(out)


def _moves(best: _Incumbent) -> None:
    """The best candidate moved: on one switch, behind a fuller switch (best fit); on the
    same switches, onto the plentiful node types."""
    pr = best.pr
    if best.key[1] == 0:  # on one switch: the same experiment behind a fuller switch
        for where in _best_fit_moves(pr, best.where):
            if best.better(where, route(pr, where), best.label + " (best fit)", check=True):
                break
    where = _scarce_move(pr, best.where)  # the same switches, the plentiful types
    if where is not None:
        best.better(where, route(pr, where), best.label + " (plentiful types)", check=True)


def _offered_desires(best: _Incumbent, available, backend: str) -> None:
    """assign+'s strategies on the experiment with its offered desires made hard (a soft
    desire is unmet)."""
    pr = best.pr
    top2 = _offered_desires_hard(pr, available)
    if top2 is not None:
        pr2 = build_problem(top2, pr.ptop, available, pr.trunk_used or None)
        out2 = assign_plus(pr2, scoring="1m", use_exchange=True, backend=backend,
                           trunk_aware=True)  # fmt: skip
        if out2["where"] is not None:
            where = np.asarray(out2["where"], dtype=np.int64)
            best.better(where, route(pr, where), "assign+ (offered desires)")
        if out2.get("stopped"):
            raise_stop(out2)


def _exact_candidate(best: _Incumbent, seed):
    """The exact method's mapping on a small experiment (CP-SAT, at most
    :data:`PORTFOLIO_EXACT_SECONDS` and the time left), considered as a candidate; its
    result."""
    from ..._shared.milp.run import import_solver
    from ..exact import exact_mapping

    pr = best.pr
    import_solver("cpsat")  # imported before the clock starts (about 1 s the first time)
    left = kernel_deadline()
    limit = PORTFOLIO_EXACT_SECONDS if left is None else min(PORTFOLIO_EXACT_SECONDS, left)
    where, out, trunks = exact_mapping(pr, time_limit=max(limit, 1e-3), threads=1,
                                       seed=seed if seed is not None else 0,
                                       started=time.perf_counter())  # fmt: skip
    if where is not None:
        best.better(where, route(pr, where, trunks=trunks), "exact")
    return out


def _early_answer(pr, scoring: str, exchange: bool, backend: str, offer) -> dict:
    """Under a time limit, a first answer soon: the paper's strategies (no trunk-aware
    exchange: 0.3-0.9 s on an 800-node ring onto 2,000 PCs where the default's strategies
    take about 7 s), offered (``offer``) before the default's own. A stop (``stopped``) is
    left to the caller to raise, after the annealer beside them was heard."""
    early = assign_plus(pr, scoring=scoring, use_exchange=exchange, backend=backend)
    if early["where"] is not None:
        offer(early["where"], early["routing"], label="assign+ (paper's strategies)",
              score=early["score"])  # fmt: skip
    return early


class _BesideAnneal:
    """assign's annealer (the ``"anneal"`` method's kernel call: same seed, same schedule,
    same deadline) run in a thread of its own under a time limit, with the compiled kernel
    (which runs without the GIL), beside the strategies and the portfolio's other steps
    (which the calling thread runs meanwhile, as before: the default's own strategies gave
    400 on test_big where the paper's gave 600).

    Started before the strategies, it anneals from the same instant as the ``"anneal"``
    method alone would, so that its answer at the deadline is that method's, whatever the
    strategies cost first (their routing alone took 8-10 ms on a first call on Emulab's
    test_big, a fifth of a 0.05 s budget, and at a load of 10 on 2 cores the default, the
    annealer started after them, ended with 400 where ``anneal`` alone found 200). Its
    deadline and data are made here, in the calling thread (the time limit's scopes are
    the thread's); its cancel flag is its own, set on :meth:`cancel`, on Ctrl-C while
    waiting, or when the calling thread's scope is cancelled. Nothing is offered from the
    thread: :meth:`result` hands the output to the caller.
    """

    __slots__ = ("thread", "flag", "scope_flag", "box", "heard")

    def __init__(self, pr: Problem, seed) -> None:
        data = kernel_data(pr)
        mine = kernel_deadline_struct(pr)
        self.scope_flag = mine.flag
        self.flag = array.array("i", [0])
        params = dict(ANNEAL_DEFAULTS, deadline=interrupt.KernelDeadline(mine.ns, self.flag))
        self.box: Dict[str, Any] = {}
        self.heard = False
        seed64 = int(kernel_seed(seed)) & ((1 << 64) - 1)

        def work() -> None:
            try:
                self.box["out"] = _anneal.anneal(data, seed64, params)
            except BaseException as exc:  # noqa: BLE001 - raised in the calling thread
                self.box["error"] = exc

        self.thread = start_thread(work, "coalloc-testbed-anneal")  # (no wait: started.py)

    def cancel(self) -> None:
        """Stop the annealer now (its flag) and wait for the thread; nothing to hear."""
        self.flag[0] = 1
        self.heard = True
        self.thread.join()

    def hear(self, pr: Problem, counters: dict,
             offer: Optional[Callable[..., None]] = None) -> dict:  # fmt: skip
        """:meth:`result`, its mapping routed (``routing``; ``valid`` false when it does
        not route) and, with ``offer``, offered; ``counters["anneal_moves"]`` set."""
        an = self.result()
        self.heard = True
        return _routed(pr, an, counters, offer)

    def result(self) -> dict:
        """Wait for the annealer (it stops by itself at the deadline); its output, as
        :func:`..anneal.run_anneal` returns it."""
        try:
            while self.thread.is_alive():
                self.thread.join(0.002)
                if self.scope_flag is not None and self.scope_flag[0]:
                    self.flag[0] = 1
        except BaseException:  # Ctrl-C while waiting: the annealer stops too
            self.cancel()
            raise
        if "error" in self.box:
            raise self.box["error"]
        out = self.box["out"]
        out["where"] = np.asarray(out["where"], dtype=np.int64)
        if not math.isfinite(out["score"]):
            out["score"] = None
        return out


#: Seconds left under which the annealer is not started in a thread beside the strategies
#: (it runs after them, in the caller's thread): a thread's first turn took 30-45 ms under
#: a load of 5-8 (assign+ on ring(800) / 2,000 PCs, its set-up ending near a 1 s deadline).
#: Small: at T = 0.05 s the annealer beside is the default's answer where the strategies
#: find none in time (0.1 s here lost the audit's emulab-ugly at 0.05 s to "anneal").
BESIDE_MIN_LEFT = 0.02


def _beside(pr: Problem, seed, backend: str) -> Optional[_BesideAnneal]:
    """:class:`_BesideAnneal` started, where it applies (the compiled kernel, every
    virtual node with candidates, a time limit in force with at least
    :data:`BESIDE_MIN_LEFT` left); None elsewhere."""
    if backend != "compiled" or any(not c for c in pr.cand):
        return None
    left = kernel_deadline()
    if left is None or left < BESIDE_MIN_LEFT:
        return None
    return _BesideAnneal(pr, seed)


def _gains(pr: Problem, early: dict) -> bool:
    """May assign's annealer improve on the paper's strategies' answer ``early``? Yes when
    they found none, or it sends bandwidth across switches, or leaves a soft desire unmet."""
    if early["where"] is None:
        return True
    if early["routing"].interswitch_bandwidth > 0:
        return True
    mapping = dict(zip(pr.vnames, [pr.pnames[p] for p in np.asarray(early["where"]).tolist()]))
    return unmet_desires(pr.top, pr.ptop, mapping) > 0


def _anneal_member(pr: Problem, early: dict, seed, backend: str, counters: dict,
                   offer: Callable[..., None]) -> Optional[dict]:  # fmt: skip
    """Under a time limit without a thread for it (``backend="numpy"``), assign's annealer
    (the ``"anneal"`` method: same seed, same schedule) straight after the paper's
    strategies (``early``), where it may gain (:func:`_gains`); its mapping offered
    (``offer``) when better. Returns its output (with ``routing``), or None where it did
    not run (nothing to gain, or a virtual node without candidates).

    It used to run after the default's own strategies, which take 1-20 ms on Emulab's
    ``test_big`` and about 7 s on an 800-node ring onto 2,000 PCs: at a small budget the
    default then found less than ``"anneal"`` alone at the same budget and seed, or nothing
    (issue 36 item 4). With the compiled kernel it runs beside them
    (:class:`_BesideAnneal`).
    """
    if not _gains(pr, early) or any(not c for c in pr.cand):
        return None
    an = _routed(pr, run_anneal(pr, kernel_seed(seed), dict(ANNEAL_DEFAULTS), backend),
                 counters, offer)
    if an["stopped"]:
        raise_stop(an)
    return an


def _routed(pr: Problem, an: dict, counters: dict,
            offer: Optional[Callable[..., None]]) -> dict:
    """The annealer's output ``an`` with its mapping routed (``an["routing"]``; ``valid``
    false when it does not route) and, with ``offer``, offered; ``counters["anneal_moves"]``
    set. The one place both ways of running the annealer (beside the strategies, or after
    them) hand its mapping on."""
    counters["anneal_moves"] = int(an["moves"])
    an["routing"] = None
    if an["valid"]:
        rt = route(pr, an["where"])
        if rt.failure is None:
            an["routing"] = rt
            if offer is not None:
                offer(an["where"], rt, label="anneal")
        else:
            an["valid"] = False
    return an


class _Hearing:
    """The annealer beside the strategies (``beside``, a :class:`_BesideAnneal` or None)
    heard or stopped however the call ends: at the time limit's stop its mapping is
    considered and offered (``offer``) before the stop goes on (it shares the deadline, so
    it has stopped or is about to); on any other exception (Ctrl-C, a scope's error, a
    failure) and on a return that did not hear it, it is cancelled. The call never returns
    with its thread running."""

    __slots__ = ("beside", "pr", "counters", "offer")

    def __init__(self, pr: Problem, counters: dict, offer: Callable[..., None]) -> None:
        self.beside: Optional[_BesideAnneal] = None
        self.pr, self.counters, self.offer = pr, counters, offer

    def live(self) -> Optional[_BesideAnneal]:
        """The annealer when it was started and is not yet heard nor cancelled."""
        b = self.beside
        return b if b is not None and not b.heard else None

    def __enter__(self) -> _Hearing:
        return self

    def __exit__(self, kind, exc, tb) -> bool:
        b = self.live()
        if b is not None:
            if kind is not None and issubclass(kind, _TimeLimitReached):
                b.hear(self.pr, self.counters, self.offer)
            else:
                b.cancel()
        return False


def _better_of(early: Optional[dict], out: dict) -> dict:
    """``out``, or the early answer's mapping when it crosses less bandwidth (or ``out``
    has none)."""
    if (
        early is not None
        and early["where"] is not None
        and (
            out["where"] is None
            or early["routing"].interswitch_bandwidth < out["routing"].interswitch_bandwidth
        )
    ):
        return dict(out, where=early["where"], routing=early["routing"], score=early["score"],
                    failure=None)  # fmt: skip
    return out


@checked("coalloc.testbed.constraints", "assign+")  # the four variants share one table
def assign_plus_method(top: VirtualTopology, ptop: PhysicalTopology, *, seed: Optional[int] = 0,
                       scoring: str = "1", memory: Optional[RequestMemory] = None,
                       exchange: bool = True, available=None, trunk_used=None,
                       backend: str = "compiled", fallback: bool = False,
                       method_name: str = "assign+",
                       exact_nodes: int = PORTFOLIO_EXACT_NODES) -> MappingResult:  # fmt: skip
    """assign+ (deterministic; ``seed`` only seeds the annealers of the default).

    With ``fallback`` (the default method, ``"assign+"``) it is the package's portfolio,
    sharing one incumbent: assign+'s strategies (the exchange also lowering trunk
    overload), then the improvements of :func:`_portfolio` (a quick anneal from the
    strategies' mapping; the strategies with offered soft desires made hard; assign's
    annealer, the ``"anneal"`` method with the same seed; the exact method on experiments
    of at most ``exact_nodes`` virtual nodes, 0: never), keeping the best by (unmet soft
    desires, inter-switch bandwidth, assign's score). When the strategies find nothing
    that routes for a reason other than a virtual node without candidates, assign's
    annealer alone runs (``params["fallback_used"]``).

    Under a time limit every step stops at the deadline (the compiled kernels by
    themselves) and the best mapping found so far is the answer (status ``time_limit``).
    """
    t0 = time.perf_counter()
    scoring = choice(scoring, SCORINGS, "scoring")  # fixed by the variant, not a parameter
    exact_nodes = int(exact_nodes)  # checked by the table (@checked)
    pr = _problem(top, ptop, available, trunk_used)
    interrupt.check()  # a set-up ended past the deadline: no annealer thread begun (its
    # first turn took 30-40 ms under load), the limit's stop at once
    t1 = time.perf_counter()
    backend = backend_name(backend)
    breach = policy_breach(pr.top, pr.ptop)
    if breach is not None:
        report = _Report(method_name, seed, {"scoring": scoring}, t0, {"setup": t1 - t0}, {})
        return _result(pr, report, None, None, failure=breach)  # fmt: skip
    params = {"scoring": scoring, "exchange": bool(exchange),
              "strategies": list(ALL_STRATEGIES if fallback else STRATEGIES),
              "fallback": bool(fallback), "trunk_aware": bool(fallback)}  # fmt: skip
    counters: Dict[str, Any] = {}

    timed = kernel_deadline() is not None
    offered: list = []  # under a time limit: the key of the answer offered last (the best)

    def offer(where, rt, key=None, label=None, score=None) -> None:
        """The time limit's incumbent: ``where`` as this method's answer (copies kept),
        when it is better (:func:`_key`) than the answer offered before."""
        if not timed:
            return
        p, c = dict(params), dict(counters)
        if fallback:  # (the variants offer one answer: nothing to compare)
            k = key if key is not None else _key(pr, kernel_data(pr), where, rt)
            if offered and k >= offered[0]:
                return
            offered[:] = [k]
            p["unmet_desires"] = k[0]
            score = k[3] if math.isfinite(k[3]) else score
        if label is not None:
            p["portfolio"] = label
        w = np.array(where, dtype=np.int64)
        report = _Report(method_name, seed, p, t0, {"setup": t1 - t0}, c)
        offer_incumbent(lambda: _result(pr, report, w, rt, score=score))  # fmt: skip

    early = annealed = first = None
    with _Hearing(pr, counters, offer) as hearing:
        if fallback and timed:
            # assign's annealer in a thread, beside the strategies (compiled kernel only)
            hearing.beside = _beside(pr, seed, backend)
            early = _early_answer(pr, scoring, bool(exchange), backend, offer)
            if early.get("stopped"):
                raise_stop(early)  # (_Hearing hears the annealer first at the deadline)
            if early["where"] is None:  # a first answer before the annealer has one
                first = first_feasible(pr, seed, backend, counters, offer)
            if hearing.beside is None:
                annealed = _anneal_member(pr, early, seed, backend, counters, offer)
            elif not _gains(pr, early):
                hearing.beside.cancel()
        out = assign_plus(
            pr,
            scoring=scoring,
            memory=memory,
            use_exchange=bool(exchange),
            backend=backend,
            trunk_aware=bool(fallback),
            strategies=ALL_STRATEGIES if fallback else STRATEGIES,
            pack=bool(fallback),
        )
        counters.update(solutions=out.get("solutions", 0), exchanges=out.get("exchanges", 0))
        t2 = time.perf_counter()
        if out["where"] is not None:
            offer(out["where"], out["routing"], score=out["score"])
        if out.get("stopped"):
            raise_stop(out)
        out = _better_of(early, out)
        fail = out["failure"] or {}
        provably = fail.get("constraint") in ("no_candidate", "fixed") or "needed" in fail
        if out["where"] is None and fallback and not provably:
            if hearing.live() is not None:  # (the same run, beside the strategies)
                an = hearing.beside.hear(pr, counters)
            elif annealed is not None:  # (run already, under the time limit: the same run)
                an = annealed
            else:
                an = run_anneal(pr, kernel_seed(seed), dict(ANNEAL_DEFAULTS), backend)
            if not an["valid"] and first is not None:  # (its mapping offered already)
                an = dict(an, valid=True, where=first["where"], score=first["score"])
            params["fallback_used"] = True
            counters.update({k: an[k] for k in ("moves", "temperatures")})
            if an["valid"]:
                rt = route(pr, an["where"])
                if rt.failure is None:
                    if an["stopped"]:
                        offer(an["where"], rt, label="anneal", score=an["score"])
                        raise_stop(an)
                    spent = {"setup": t1 - t0, "search": t2 - t1,
                             "fallback": time.perf_counter() - t2}  # fmt: skip
                    report = _Report(method_name, seed, params, t0, spent, counters)
                    return _result(pr, report, an["where"], rt,
                                   score=an["score"],
                                   message=f"mapped {pr.nv} nodes by the annealing fallback "
                                           f"(assign+: {reason_text(out['failure'])})")  # fmt: skip
            if an["stopped"]:
                raise_stop(an)
        if out["where"] is not None and fallback:  # the default: the portfolio
            where, rt, key, label, exact = _portfolio(
                pr, seed, out, params, counters, backend, available, exact_nodes,
                offer=lambda w, r, k, lab: offer(w, r, key=k, label=lab), annealed=annealed,
                beside=hearing.live(),
            )  # fmt: skip
            params["portfolio"] = label
            params["unmet_desires"] = key[0]
            status, bound, msg = None, None, ""
            if exact is not None:
                params["exact_status"] = exact.status
                if exact.status == "optimal" and exact.bound is not None:
                    bound = float(exact.bound)
                    # proven: no mapping crosses less bandwidth (settle makes it "optimal")
            spent = {"setup": t1 - t0, "search": t2 - t1, "portfolio": time.perf_counter() - t2}
            report = _Report(method_name, seed, params, t0, spent, counters)
            return _result(pr, report, where, rt,
                           score=key[3] if math.isfinite(key[3]) else None, status=status,
                           bound=bound, message=msg)  # fmt: skip
        spent = {"setup": t1 - t0, "search": time.perf_counter() - t1}
        report = _Report(method_name, seed, params, t0, spent, counters)
        return _result(pr, report, out["where"], out["routing"],
                       score=out["score"], failure=out["failure"],
                       message="" if out["where"] is not None else
                       f"assign+ found no mapping: {reason_text(out['failure'])}")  # fmt: skip
