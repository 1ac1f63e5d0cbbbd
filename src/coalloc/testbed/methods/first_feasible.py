"""The default's first answer where assign+'s strategies find none (under a time limit):
a short anneal from scratch at a low start temperature (:data:`FIRST_FEASIBLE`)."""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

import numpy as np

from ..._shared.seeding import kernel_seed
from ..anneal import kernel_data, kernel_deadline_struct, raise_stop
from ..problem import Problem
from ..routing import route

__all__ = ["FIRST_FEASIBLE", "first_feasible"]

#: Under a time limit, where the paper's strategies find no mapping, a short anneal from
#: scratch at a low start temperature (no melting; at most ``max_moves`` moves) in the
#: calling thread, its valid mapping offered at once: a first answer well before assign's
#: annealer (the ``"anneal"`` method's schedule, beside the strategies) has one. On Emulab's
#: test_ugly (direct PC-to-PC wires, where the strategies fail) it meets a valid mapping
#: after a median 1,900 moves (38 of 40 seeds), the published schedule after 29,000-40,000:
#: at 0.05 s under load the default ended with no mapping where "anneal" alone found one
#: (the contract audit). None: off (as before). Untimed calls never run it.
FIRST_FEASIBLE: Optional[Dict[str, Any]] = {
    "t0": 0.5,
    "melt_moves": 0,
    "melt_accept": 0.95,
    "cooling": 0.9,
    "min_moves": 1000,
    "t_stop": 0.002,
    "frozen": 0,
    "max_moves": 10_000,
}


def first_feasible(pr: Problem, seed, backend: str, counters: dict,
                   offer: Callable[..., None]) -> Optional[dict]:  # fmt: skip
    """:data:`FIRST_FEASIBLE`'s short anneal from scratch (under a time limit, where the
    paper's strategies found no mapping), its valid mapping offered (``offer``); a stop at
    the deadline raised after that. Returns the kernel's output with its mapping routed
    (``routing``) when it found a valid one that routes, else None (and where a virtual
    node has no candidate, or the knob is off)."""
    if FIRST_FEASIBLE is None or any(not c for c in pr.cand):
        return None
    if backend != "compiled":
        from .._reference.anneal import anneal as kernel
    else:
        from .._anneal import anneal as kernel
    params = dict(FIRST_FEASIBLE, deadline=kernel_deadline_struct(pr))
    out = kernel(kernel_data(pr), int(kernel_seed(seed)) & ((1 << 64) - 1), params)
    counters["first_feasible_moves"] = int(out["moves"])
    found = None
    if out["valid"]:
        where = np.asarray(out["where"], dtype=np.int64)
        rt = route(pr, where)
        if rt.failure is None:
            offer(where, rt, label="first feasible")
            found = dict(out, where=where, routing=rt)
    if out.get("stopped"):
        raise_stop(out)
    return found
