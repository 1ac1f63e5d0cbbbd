"""The GAP search's proof on small instances (:mod:`.search`): the exact dynamic programme
of :mod:`.subgap` over every agent's load, once the search's best has stood for a round.

The tabu search's bounds (the LP and Lagrangian relaxations) leave a gap on most small
instances: on 3 x 10 to 8 x 16 instances of types b-d the untimed heuristic ended
``feasible`` at the optimum, and on 2 x 5 instances with no assignment ``no_solution``,
while the programme over the agents' loads, pruned by the Lagrangian bound against the
search's best, decides them in under a millisecond (a timed call searched to its deadline:
3 s of a 3 s limit on the contract suite's 3 x 10 type a).

So when an instance has at most ``_PROOF_PAIRS`` agent-item pairs and its load vectors fit a
63-bit key, the search runs the programme with ``_PROOF_STATES`` states a layer at most
(and, timed, within ``_PROOF_SHARE`` of the limit for all its tries), once its best has not
changed in a round; again, up to ``_PROOF_TRIES`` in all, after a round that improved it if
the programme gave up. Its outcomes: none below the best (a proof: the best is optimal, or,
with none feasible, no assignment keeps every capacity), the optimum below it (it becomes
the best, proven), or given up (the search goes on as before). Untimed, only the state
budget stops it, so the answer does not depend on the machine's speed.

Its states are pruned by the knapsack bound (h63prog, ``search._PROOF_KNAP``: each agent a
0-1 knapsack over the items left at its residual capacity, the item multipliers the
search's Lagrangian reduced costs improved by subgradient steps;
:func:`.subgap.knapsack_bound`): with the Lagrangian bound alone it gave up on every
Chu-Beasley type d instance from 5 x 15 (hundreds of thousands of load vectors a layer).

The knobs stay in :mod:`.search`, where the benches and the tests set them.
"""

from __future__ import annotations

import math
import time
from typing import Optional

import numpy as np

from .model import objective_of
from .subgap import key_split, solve_subgap

__all__ = ["ProofSteps", "proof_fits", "reduced_weights"]

#: The programme's key (``sum_a load_a prod_{b<a} (cap_b + 1)``) must fit an int64.
_KEY_BITS = 62.0


def proof_fits(cap: np.ndarray, n: int, pairs: int, words: int = 1) -> bool:
    """Whether the programme over every agent's load may run: at most ``pairs`` agent-item
    pairs (0: never) and load vectors whose key fits 62 bits, or with ``words`` 2 two
    words of 62 bits (:func:`.subgap.key_split`, h63prog)."""
    m = int(cap.shape[0])
    if pairs <= 0 or n <= 0 or m * n > pairs:
        return False
    if float(np.log2(np.asarray(cap, dtype=np.float64) + 1.0).sum()) < _KEY_BITS:
        return True
    return words >= 2 and key_split(cap, words) is not None


def reduced_weights(weight: np.ndarray, cap: np.ndarray) -> tuple:
    """Each agent's weights and capacity divided by the greatest common divisor of its
    weights (the capacity rounded down), and the divisors: the same assignments keep every
    capacity, in smaller numbers (weights of 1e11 units: load vectors of 42 bits an agent,
    5 bits after). Agents whose weights are all 0 keep theirs (divisor 1)."""
    g = np.gcd.reduce(np.asarray(weight, dtype=np.int64), axis=1)
    g = np.where(g > 0, g, 1)
    return (np.ascontiguousarray(weight // g[:, None], dtype=np.int64),
            np.ascontiguousarray(np.asarray(cap, dtype=np.int64) // g, dtype=np.int64),
            g)  # fmt: skip


class ProofSteps:
    """The proof's step of :class:`.search._Search` (a mixin: the attributes are the
    search's). ``proof_left`` (tries left, 0: none), ``proof_mark`` (the best when the
    programme last gave up), ``proof_none`` (it proved that no assignment keeps every
    capacity) and ``proof_data`` (the weights, capacities and the divisors of
    :func:`reduced_weights`) are set by :meth:`proof_setup`."""

    def proof_setup(self, pairs: int, tries: int, seconds: Optional[float],
                    words: int = 1) -> None:  # fmt: skip
        """The proof's state at the search's start (``pairs``, ``tries``, ``words``: the
        knobs; ``seconds``: what a timed call's tries may take in all, None untimed)."""
        w, c, g = reduced_weights(self.weight, self.cap)
        self.proof_data = (w, c, g.astype(np.float64))
        self.proof_left = tries if proof_fits(c, self.n, pairs, words) else 0
        self.proof_seconds = seconds
        self.proof_mark: Optional[tuple] = None
        self.proof_none = False

    def proof_open(self) -> bool:
        """Tries left (and, timed, time for them), and the programme not already given up
        on the search's best."""
        return (self.proof_left > 0 and self.proof_mark != (self.best_obj,)
                and (self.proof_seconds is None or self.proof_seconds > 0))  # fmt: skip

    def proof_due(self, seen_obj: Optional[float]) -> bool:
        """Whether the programme runs after a round: :meth:`proof_open`, and the search's
        best unchanged in that round (``seen_obj``: the best before it)."""
        return self.best_obj == seen_obj and self.proof_open()

    def exact_proof(self, states: int, knap_steps: Optional[int] = None) -> None:
        """The programme over every agent's load against the search's best (see the
        module's docstring), ``states`` a layer, pruned by the knapsack bound with
        ``knap_steps`` subgradient steps (None: the Lagrangian bound; ``solve_subgap``);
        sets ``proven`` when it decides the instance."""
        self.proof_left -= 1
        # (solve_subgap's tolerance is relative to the largest cost: any units alike)
        target = self.sign * self.best_obj if self.feasible else math.inf
        weight, cap, g = self.proof_data
        # (the multipliers of the reduced weights: lam_i w_ij = (lam_i g_i)(w_ij / g_i))
        lam = np.asarray(self.bounds.best_lam, dtype=np.float64) * g
        lam = lam if lam.shape == cap.shape and np.isfinite(lam).all() else None
        until = None
        t1 = time.perf_counter()
        if self.proof_seconds is not None:
            until = min(self.deadline, t1 + self.proof_seconds)
        why = np.full(1, -1, dtype=np.int64)
        got = solve_subgap(self.cost, weight, cap, target, lam, states, until, why,
                           knap_steps=knap_steps)
        if self.proof_seconds is not None:
            self.proof_seconds -= time.perf_counter() - t1
        if why[0] not in (0, 1):  # given up: the search goes on
            self.proof_mark = (self.best_obj,)
            return
        if got is not None:  # the optimum: the answer unless the best is as good
            x = np.ascontiguousarray(got[0], dtype=np.int64)
            obj = objective_of(self.inst, x, self.assign_all)
            if not self.feasible or (obj < self.best_obj if self.sense == "min"
                                     else obj > self.best_obj):  # fmt: skip
                self.feasible, self.incumbent, self.best_obj = True, x, obj
                self.trajectory.append((self.now(), self.best_obj, self.bounds.best()))
        if self.feasible:
            self.bounds.exact = self.best_obj
            self.trajectory.append((self.now(), self.best_obj, self.best_obj))
        else:
            self.proof_none = True
        self.proven = True
