"""The scan's rejections: the proof that holds at any time (:func:`impossible`), the
answer's message (:func:`answer_message`) and the record of rejected starts (:class:`Ledger`)
from which the rejection of a request no start admits is written (moved out of
:mod:`.scan`, issue 40, h53coll).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from .core import Problem
from .model import CollectiveRequest, ResourcePool

__all__ = ["MAX_LISTED", "Ledger", "answer_message", "impossible"]

#: The rejected starts the ledger lists (the rest are counted).
MAX_LISTED = 50


def impossible(prob: Problem, pool: ResourcePool, n: int) -> Optional[dict]:
    """The rejection that holds at any time (a proof), or None: fewer than ``n`` nodes match
    the labels and have the minimums as capacity, or the ``n`` largest capacities of a
    property miss its total."""
    names, nodes, elo = pool.names, prob.matching, prob.elo
    if nodes.size < n:
        lab = int(prob.label_ok.sum())
        short = [names[i] for i in range(len(names))
                 if np.sum(pool.capacity[prob.label_ok, i] < elo[i]) > 0]  # fmt: skip
        return {"reason": "too_few_matching", "label_matches": lab, "matching": int(nodes.size),
                "needed": n, "capacity_short": short, "message":
                f"impossible: {lab} nodes match the labels, {nodes.size} of them have the "
                f"per-resource minimums as capacity; {n} needed"}  # fmt: skip
    top = -np.sort(-pool.capacity[nodes], axis=0)[:n].sum(axis=0)
    if np.any(top < prob.dlo):
        i = int(np.flatnonzero(top < prob.dlo)[0])
        return {"reason": "capacity", "property": names[i], "total": float(prob.d[i]),
                "best": float(top[i]), "message": f"impossible at any time: the {n} largest "
                f"capacities of {names[i]!r} sum to {top[i]:g} < total {prob.d[i]:g}"}  # fmt: skip
    return None


def answer_message(t: float, proven: bool, unknown: int, first_undecided: Optional[float],
                    u: float, exact_u: bool) -> str:
    """The answer's message: its start, proven earliest or not (the undecided starts), and
    its utilisation factor ``u``, enumerated maximal or not."""
    return (f"start {float(t):g} s "
            + ("proven earliest (every earlier candidate start fails a screen, the "
               "enumeration or the integer program)" if proven else
               f"found; not proven earliest ({unknown} earlier start(s) undecided by "
               f"the integer program within program_time_limit; none is earlier than "
               f"{first_undecided:g} s)")
            + f"; utilisation factor {u:.6g}"
            + (" (maximal there: every set enumerated)" if exact_u else
               " (not proven maximal)"))  # fmt: skip


class Ledger:
    """The scan's record of rejected starts: counts by check (``summary``) and by (check,
    property) (``binding``), and the first :data:`MAX_LISTED` entries (``listed``), from which
    :meth:`reason` writes the rejection of a request no start admits."""

    _SCREENS = ("minimum", "total")

    def __init__(self, names: tuple, n: int, d: np.ndarray) -> None:
        self.names, self.n, self.d = names, n, d
        self.listed: list = []
        self.summary = {"minimum": 0, "total": 0, "combination": 0, "undecided": 0}
        self.binding: dict = {}

    def note(self, entry: dict) -> None:
        """Record one start's rejection (``entry``: start, check, property)."""
        self.summary[entry["check"]] += 1
        key = (entry["check"], entry.get("property"))
        self.binding[key] = self.binding.get(key, 0) + 1
        if len(self.listed) < MAX_LISTED:
            self.listed.append(entry)

    def screened(self, b, codes, elig, props, vals) -> None:
        """Record the starts ``b`` (screen codes 1 and 2) at once: counts by check and
        property, and the first entries of the list."""
        names, listed = self.names, self.listed
        if codes.size:
            keys = codes * len(names) + props  # (check, property) pairs, by first occurrence
            uniq, first, cnt = np.unique(keys, return_index=True, return_counts=True)
            for q in np.argsort(first, kind="stable").tolist():
                c, i = divmod(int(uniq[q]), len(names))
                self.summary[self._SCREENS[c - 1]] += int(cnt[q])
                key = (self._SCREENS[c - 1], names[i])
                self.binding[key] = self.binding.get(key, 0) + int(cnt[q])
        for c in range(min(codes.size, MAX_LISTED - len(listed))):
            t, i = float(b[c]), int(props[c])
            if codes[c] == 1:
                listed.append({"start": t, "check": "minimum", "property": names[i],
                               "eligible": int(elig[c]), "meeting_property": int(vals[c]),
                               "needed": self.n})  # fmt: skip
            else:
                listed.append({"start": t, "check": "total", "property": names[i],
                               "best": float(vals[c]), "total": float(self.d[i])})  # fmt: skip

    def reason(self, request: CollectiveRequest, starts: np.ndarray, unknown: int) -> dict:
        """The rejection when no start admits a set: the counts, the check most often
        binding, the first entries, and the proof (every start decided) or its absence."""
        binding, listed = self.binding, self.listed
        (kind, prop), _ = (max(binding.items(), key=lambda kv: kv[1]) if binding
                           else ((None, None), 0))  # fmt: skip
        words = {"minimum": "per-resource minimum", "total": "total", "combination":
                 "no combination of N eligible resources meets every total", "undecided":
                 "undecided (program_time_limit)"}  # fmt: skip
        what = words.get(kind, "")
        if prop is not None:
            what = f"{what} of {prop!r}"
        reason = {"reason": "no_start", "starts_checked": int(starts.size),
                  "window": [request.earliest_start, request.latest_start], "summary": self.summary,
                  "binding": {"check": kind, "property": prop}, "per_start": listed,
                  "truncated": max(0, int(starts.size) - len(listed)), "message":
                  f"no admissible solution at any of {starts.size} candidate starts in "
                  f"[{request.earliest_start:g}, {request.latest_start:g}]; most often binding: "
                  f"{what}"}  # fmt: skip
        if unknown == 0:  # the proof: every candidate start was decided
            reason["message"] += (
                f". Proof: the scan is exhaustive: every one of the {starts.size} candidate "
                "starts (the window's opening and each time a reserved amount falls, the only "
                "possible earliest starts) fails a necessary screen (per-resource minimum, the N "
                "largest amounts against a total), a complete enumeration of the eligible sets, "
                "a weighted-sum (Lagrangian) certificate or an integer program proven infeasible"
            )  # fmt: skip
        else:
            reason["message"] += (
                f"; not a proof: {unknown} start(s) left undecided by the integer program within "
                "program_time_limit"
            )  # fmt: skip
        return reason
