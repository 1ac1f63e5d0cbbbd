"""The GAP search's restarts and path relinking (:mod:`.search`), the steps of a phase
of the search on every pair that its knobs switch on: restarts from elite assignments
(``_ELITE_RESTART``), the reduced-cost kick (``_KICK``), the exact re-optimisation of
agent sets (``_SUBGAP``), the learned restart weight (``_LEARN_WEIGHT``), and path
relinking (``relink=True``; :mod:`.relink`) (:class:`RestartSteps`).

Their knobs stay in :mod:`.search`, where the benches and the tests set them; they are
read from there at each call.
"""

from __future__ import annotations

import time

import numpy as np

from .model import objective_of
from .relink import path_point
from .subgap import intensify
from .tabu import TabuKnobs, TabuState

__all__ = ["RestartSteps"]


def _k():
    """The knobs' module, :mod:`.search` (imported here on use: it imports this one)."""
    from . import search

    return search


class RestartSteps:
    """The restarts' and path relinking's steps of :class:`.search._Search` (a mixin: the
    attributes and :meth:`phase` are the search's)."""

    def elite_restart(self, state: TabuState, threshold: int) -> None:
        """The state's best into the elite pool; when ``threshold`` iterations passed
        without a new best, the state restarts from a member drawn uniformly."""
        pool = self.elite
        if state.feasible:
            pool.offer(float(self.cost[state.best, np.arange(self.n)].sum()), state.best)
        if state.since_best >= threshold:
            if len(pool):
                x = pool.members[int(self.elite_draw.integers(len(pool)))][1]
            else:
                x = state.best
            state.restart_from(x, self.cost)

    def kick_restart(self, state: TabuState, threshold: int) -> None:
        """When ``threshold`` iterations passed without a new best (the restart rule), the
        state restarts from its best with ``_KICK`` items moved (``_KICK``): each drawn
        among the ``_KICK_POOL`` x ``_KICK`` items whose second-best agent by reduced cost
        (the LP's when solved, else the capacity multipliers') is nearest to the one they
        are on, to that agent."""
        if state.since_best < threshold:
            return
        x = state.best.copy()
        cols = np.arange(self.n)
        red = self.rc if self.rc is not None else (
            self.cost + self.bounds.best_lam[:, None] * self.weight)  # fmt: skip
        red = np.where(np.isfinite(red), red, 1e300)
        here = red[x, cols]
        other = red.copy()
        other[x, cols] = np.inf
        to = np.argmin(other, axis=0)
        delta = other[to, cols] - here
        k = min(self.kick, self.n)
        pool = np.argsort(delta, kind="stable")[: max(k, _k()._KICK_POOL * k)]
        chosen = self.kick_draw.choice(pool, size=k, replace=False)
        x[chosen] = to[chosen]
        self.kicks += 1
        state.restart_from(x, self.cost)

    def subgap(self, state: TabuState) -> None:
        """The state's best, when feasible and not yet re-optimised, through
        :func:`.subgap.intensify` (see ``_SUBGAP``; called once that best has stood for the
        restart rule's iterations); an improvement becomes the state's best
        and current assignment, and goes to the incumbent."""
        if not state.feasible or (self.subgap_left is not None and self.subgap_left <= 0):
            return
        key = state.best.tobytes()
        if key in self.subgap_seen:
            return
        self.subgap_seen.add(key)
        t1 = time.perf_counter()
        until = None
        if self.deadline is not None:
            until = min(self.deadline, t1 + min(self.subgap_left,
                                                _k()._SUBGAP_CALL * (self.deadline - self.t0)))
        x, improved, tried = intensify(self.cost, self.weight, self.cap, state.best,
                                       self.bounds.best_lam, self.subgap_k, until,
                                       self.subgap_draw, max_states=_k()._SUBGAP_STATES,
                                       steps=_k()._SUBGAP_STEPS)  # fmt: skip
        if self.subgap_left is not None:
            self.subgap_left -= time.perf_counter() - t1
        self.subgap_sets += tried
        if improved:
            self.subgap_improved += improved
            self.subgap_seen.add(x.tobytes())
            state.best[:] = x
            state.dstate[1] = float(self.cost[x, np.arange(self.n)].sum())
            state.restart_from(x, self.cost)
            self.take(state)

    def learn(self, state: TabuState) -> None:
        """The weights at a round's end into the learned restart weight (``_LEARN_WEIGHT``),
        which becomes the state's restart weight."""
        alpha = state.alpha
        sample = float(np.log(np.clip(alpha, 1e-300, None)).mean()) if alpha.size else 0.0
        r = self.learn_rate
        self.log_w = sample if self.log_w is None else (1.0 - r) * self.log_w + r * sample
        state.restart_weight = float(np.exp(self.log_w))

    def offer_pool(self, state: TabuState) -> None:
        """The state's best, when feasible, to the elite pool (on the true costs)."""
        if state.feasible:
            self.pool.offer(self.sign * objective_of(self.inst, state.best, self.assign_all),
                            state.best)  # fmt: skip

    def relink_fits(self, seconds: float) -> bool:
        """Whether ``seconds`` hold ``_PR_FEWEST`` path-relinking segments at the measured
        speed."""
        seg = max(_k()._PR_MIN, _k()._PR_PER_ITEM * self.n)
        return self.rate is not None and self.rate * seconds >= _k()._PR_FEWEST * seg

    def relink(self, start: np.ndarray, until: float, knobs: TabuKnobs,
               rng: np.ndarray) -> bool:  # fmt: skip
        """Path relinking until ``until`` (see ``_PR_SHARE``): False (nothing run) when the
        measured speed leaves fewer than ``_PR_FEWEST`` segments."""
        seg = max(_k()._PR_MIN, _k()._PR_PER_ITEM * self.n)
        if not self.relink_fits(until - time.perf_counter()):
            return False
        walk = np.random.default_rng(int(rng[0]))  # drawn from the call's seed
        if self.feasible:
            self.pool.offer(self.sign * self.best_obj, self.incumbent)
        first = True
        while not (self.proven or self.halted()) and time.perf_counter() < until:
            pair = None if first else self.pool.pair(walk)
            if pair is None and not first and len(self.pool):  # one: from the start to it
                pair = (start, self.pool.members[0][1])
            if pair is None:  # afresh: the start (the rounded LP), then its tabu search
                point = start
            else:
                share = float(walk.uniform(*_k()._PR_WALK))
                point = path_point(self.cost, self.weight, self.cap, pair[0], pair[1],
                                   self.a0, share)  # fmt: skip
            first = False
            state = self.phase(self.cost, point, until, self.done + seg, False, knobs, rng)
            self.offer_pool(state)
            self.relinks += 1
        return True
