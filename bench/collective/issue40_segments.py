"""Issue 40 item 5 (h51coll): would bounds over every start at once settle the reject starts?

For the ``reject`` requests of ``bench.collective.scale`` (10,000 nodes, 7 days of 5-minute
slots), the starts that ``scan`` sends to ``window_screen`` (all but the first nine) are
screened exactly (``window_max_rows`` + ``block_screen``: the codes ``scan`` records) and
compared with what three arguments over all the starts together would decide:

* ``minimum``: the starts whose eligible nodes are fewer than ``N`` (code 1): what a
  difference array of each row's usable starts (its slots over ``cap - e`` dilated by the
  duration) settles exactly. The reject requests have no minimums: every node is eligible.
* ``segments``: per segment ``k``, ``F_i(k)`` the sum of the ``N`` largest free amounts
  ``cap - reserved[., i, k]`` and ``G(k)`` that of the equal weights' scores; at a start,
  ``min_k F_i(k)`` over its window is at least the sum of the ``N`` largest amounts (every
  window maximum is at least each of its segments' amounts), so it proves a total missed
  (code 2) or, with ``min_k G(k)``, the weighted proof (code 3); below, the ``N`` largest
  exact amounts among the rows on top at the start's own segment. A start counts as decided
  when these bounds fix its code and, for code 2, the property of the largest relative
  shortfall (the screen's rule); ``ceiling``: the same with the exact sums below (the most
  the bounds above can decide). Every decision is checked against the exact code (the
  referee: an error if a bound decides a code the screen does not give).
* ``rows``: per start, the rows that can be among the ``N + N // 2 + 1`` largest amounts or
  scores (at or above the exact ``g``-th largest) judged from one segment of its window (the
  best one: what a per-segment sorted index would read), and judged from all of them.

Run:  PYTHONPATH=src:. python -m bench.collective.issue40_segments [--pool-seeds 2028]
"""

from __future__ import annotations

import argparse
import os

import numpy as np

from bench.collective.scale import reject_requests
from bench.shared._progress import add_quiet, bar, say
from coalloc.cli._common import count as _count
from coalloc.collective.core import Problem, kernels
from coalloc.collective.generators import table1_pool

#: Relative margin of the bounds' comparisons (sums of at most 1,024 amounts in another order).
_MARGIN = 1e-9


def _top(x, n):
    """The sum of the ``n`` largest of ``x`` along axis 0."""
    return (-np.partition(-x, n - 1, axis=0)[:n]).sum(axis=0)


def _decide(fail, ok, lo, hi, d, v, bound):
    """The code the bounds fix at one start (None if they do not): ``fail[i]``/``ok[i]``
    whether total ``i`` is proven missed/met, ``lo``/``hi`` the bounds of its sum, ``v`` the
    bound above the weighted score and ``bound`` the weighted proof's threshold."""
    if fail.any():
        best = max((d[i] - hi[i]) / d[i] for i in range(d.size) if fail[i])
        rivals = [
            i for i in range(d.size) if (fail[i] or not ok[i]) and (d[i] - lo[i]) / d[i] >= best
        ]
        return (2, rivals[0]) if len(rivals) == 1 else None
    if not ok.all():
        return None
    return (3, -1) if v < bound * (1 - _MARGIN) else None


def measure(pool, req, ker, chunk=128):
    """``(starts, codes, minimum, decided, ceiling, rows_one, rows_all)`` for one request."""
    prob = Problem.of(pool, req)
    nodes, n, d = prob.matching, req.count, prob.d
    cap = np.ascontiguousarray(pool.capacity[nodes])
    starts = pool.candidate_starts(nodes, req.earliest_start, req.latest_start)[9:]
    times, res = pool._state
    g = n + n // 2 + 1
    w = (1.0 / d.size) / d  # the reject requests' totals are all positive
    bound = float(np.sum((1.0 / d.size) * (prob.dlo / d)))
    k0 = np.maximum(np.searchsorted(times, starts, side="right") - 1, 0)
    k1 = np.maximum(np.searchsorted(times, starts + req.duration, side="left"), k0 + 1)
    lo0 = int(k0[0])
    free = cap[:, :, None] - res[nodes][:, :, lo0 : int(k1[-1])]
    score = np.einsum("jik,i->jk", free, w)
    F, G = _top(free, n), _top(score, n)
    out = {"codes": np.zeros(4, int), "decided": 0, "ceiling": 0, "one": [], "all": []}
    for c0 in range(0, starts.size, chunk):
        b = starts[c0 : c0 + chunk]
        tm = np.asarray(ker.window_max_rows(times, res, nodes, b, req.duration))
        codes, _, props, _ = ker.block_screen(tm, cap, prob.e, d, n, tol=prob.tol)
        out["codes"] += np.bincount(codes, minlength=4)
        for s in range(b.size):
            seg = slice(int(k0[c0 + s]) - lo0, int(k1[c0 + s]) - lo0)
            av = cap - tm[s]
            exact = -np.sort(-av, axis=0)[:n].sum(axis=0)
            hi, v = F[:, seg].min(axis=1), float(G[seg].min())
            own = np.unique(
                np.concatenate(
                    [np.argpartition(-free[:, i, seg.start], n - 1)[:n] for i in range(d.size)]
                )
            )
            low = -np.sort(-av[own], axis=0)[:n].sum(axis=0)
            for key, lo in (("decided", low), ("ceiling", exact)):
                fail, ok = hi < prob.dlo * (1 - _MARGIN), lo >= prob.dlo * (1 + _MARGIN)
                got = _decide(fail, ok, lo, hi, d, v, bound)
                if got is not None:
                    if got[0] != codes[s] or (got[0] == 2 and got[1] != props[s]):
                        raise AssertionError(
                            f"the bounds decided {got}, the screen {(codes[s], props[s])}"
                        )
                    out[key] += 1
            if s % 4 == 0:  # the rows that can matter, from one segment or from all
                one, every = np.zeros(nodes.size, bool), np.zeros(nodes.size, bool)
                x = av @ w
                pairs = [(av[:, i], free[:, i, seg]) for i in range(d.size)] + [(x, score[:, seg])]
                for vals, fr in pairs:
                    reach = fr >= -np.partition(-vals, g - 1)[g - 1]
                    one |= reach[:, int(np.argmin(reach.sum(axis=0)))]
                    every |= reach.all(axis=1)
                out["one"].append(int(one.sum()))
                out["all"].append(int(every.sum()))
    return starts.size, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=_count(), default=10_000)
    ap.add_argument("--pool-seeds", type=_count(0), nargs="+", default=[2028])
    ap.add_argument("--counts", type=_count(), nargs="+", default=[10, 60])
    ap.add_argument("--cases", type=_count(), default=3)
    ap.add_argument("--seed", type=_count(0), default=28)
    add_quiet(ap)
    args = ap.parse_args(argv)
    ker = kernels("compiled")
    say(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for pseed in args.pool_seeds:
        pool = table1_pool(args.nodes, n_slots=288 * 7, load=(1.5, 3.5), seed=pseed)
        for n_top in bar(args.counts, desc=f"pool {pseed}", unit="N"):
            for q, req in enumerate(reject_requests(pool, n_top, args.cases, days=7,
                                                    seed=args.seed)):  # fmt: skip
                size, out = measure(pool, req, ker)
                c = out["codes"]
                print(f"pool {pseed} N={n_top} case {q} {req.duration / 3600:g} h, {size} starts: "
                      f"codes 0/1/2/3 {c[0]}/{c[1]}/{c[2]}/{c[3]}; minimum settles {c[1]}; "
                      f"segments decide {out['decided']} (ceiling {out['ceiling']}); rows per "
                      f"start from one segment {np.median(out['one']):.0f}, from all "
                      f"{np.median(out['all']):.0f}", flush=True)  # fmt: skip
    say(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
