"""Why not: the explanation a negative answer carries, and the search for a minimal conflict.

Every family that answers "no" (an item that fits nowhere, tasks left out, a request with no
admissible start) can attach an :class:`Explanation`: the smallest set of demand elements
that, with the named resource constraints, cannot be satisfied together (a *conflict*), how
that was proved, whether it is minimal, and the nearest changes of the request that fit
(:class:`Relaxation`), each one checked by solving the changed request.

The search is generic: :func:`minimal_conflict` shrinks an infeasible set of elements by
deletion filtering with a divide-and-conquer first pass (the chunked form of the deletion
filter; QuickXplain, Junker 2004, finds the same kind of set), asking a family's
feasibility oracle. The oracle answers True (feasible), False (infeasible, proved) or None
(unknown within its budget); an unknown answer keeps the element and the set is then not
claimed minimal. The search stops at a deadline (:func:`time.monotonic`) and says so.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

__all__ = [
    "Explanation",
    "Relaxation",
    "ConflictSearch",
    "minimal_conflict",
    "fix_deadline",
    "fix_margin",
    "EXPLANATION_SCHEMA",
    "check_explanation",
]


@dataclass(frozen=True, kw_only=True)
class Relaxation:
    """One change of a request that makes it feasible, checked by solving the changed request.

    Parameters
    ----------
    kind : str
        What changes, in the family's words (``"drop_items"``, ``"raise_capacity"``,
        ``"later_start"`` ...).
    sentence : str
        The change, readable: ``"drop items 3 and 7"``.
    changes : dict
        The change, machine-readable (JSON-able); where the family can, ``"request"``
        holds the whole changed request in its own terms.
    cost : float
        Its size in the family's measure (items dropped, capacity added ...); the
        relaxation of its kind with the least cost, where ``optimal`` is True.
    optimal : bool or None
        Whether ``cost`` was proved the least for this kind of change (None: unknown).
    checked : bool
        The changed request was solved and found feasible.

    Examples
    --------
    >>> r = Relaxation(kind="drop_items", sentence="drop item 2", changes={"items": [2]},
    ...                cost=1.0, optimal=True, checked=True)
    >>> r.to_dict()["kind"]
    'drop_items'
    """

    kind: str
    sentence: str
    changes: Dict[str, Any] = field(default_factory=dict)
    cost: float = 0.0
    optimal: Optional[bool] = None
    checked: bool = False

    def to_dict(self) -> Dict[str, Any]:
        """The relaxation as a JSON-ready dict.

        Returns
        -------
        dict
            ``kind``, ``sentence``, ``changes``, ``cost``, ``optimal``, ``checked``.

        Examples
        --------
        >>> Relaxation(kind="k", sentence="s").to_dict()["checked"]
        False
        """
        return {"kind": self.kind, "sentence": self.sentence, "changes": dict(self.changes),
                "cost": float(self.cost), "optimal": self.optimal,
                "checked": self.checked}  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class Explanation:
    """Why a request (or part of it) cannot be satisfied: a conflict and what would fit.

    Parameters
    ----------
    demand : tuple of str
        The demand elements of the conflict, by name (``"item 7"``, ``"task t3"``).
    resources : tuple of str
        The resource constraints they violate together (``"capacity of agent 2 (40)"``).
    certificate : str
        How the conflict was proved: ``"exact"`` (an exact model found the set alone
        infeasible), ``"pigeonhole"``, ``"fits-nowhere"`` ..., or ``""`` when not proved.
    sound : bool or None
        The conflict alone is infeasible (proved); None: not established in the budget.
    minimal : bool or None
        Dropping any one demand element makes the rest feasible (each drop proved); None:
        not established in the budget.
    sentence : str
        One readable sentence: the conflict and the nearest fix.
    relaxations : tuple of Relaxation
        The nearest changes of the request that fit, cheapest first within each kind.
    conflict : dict
        The conflict as a request in the family's own terms (JSON-ready: the items of a
        GAP conflict, the reduced request of a collective one), to re-check or re-solve.
    oracle_calls : int
        How many feasibility checks the search made.
    seconds : float
        The explanation's own time.

    Examples
    --------
    >>> e = Explanation(demand=("item 0",), resources=("capacity of agent 0 (1)",),
    ...                 certificate="fits-nowhere", sound=True, minimal=True,
    ...                 sentence="item 0 fits no agent")
    >>> e.to_dict()["sound"], str(e)
    (True, 'item 0 fits no agent')
    """

    demand: Tuple[str, ...]
    resources: Tuple[str, ...]
    certificate: str = ""
    sound: Optional[bool] = None
    minimal: Optional[bool] = None
    sentence: str = ""
    relaxations: Tuple[Relaxation, ...] = ()
    conflict: Dict[str, Any] = field(default_factory=dict)
    oracle_calls: int = 0
    seconds: float = 0.0

    def __post_init__(self) -> None:
        _fixes_ended(float(self.seconds))

    def __str__(self) -> str:
        return self.sentence

    def to_dict(self) -> Dict[str, Any]:
        """The explanation as a JSON-ready dict (what a result's ``to_dict()`` carries).

        Returns
        -------
        dict
            Every field, the relaxations as dicts.

        Examples
        --------
        >>> Explanation(demand=(), resources=()).to_dict()["relaxations"]
        []
        """
        return {"demand": list(self.demand), "resources": list(self.resources),
                "certificate": self.certificate, "sound": self.sound,
                "minimal": self.minimal, "sentence": self.sentence,
                "relaxations": [r.to_dict() for r in self.relaxations],
                "conflict": dict(self.conflict),
                "oracle_calls": int(self.oracle_calls), "seconds": float(self.seconds)}  # fmt: skip


@dataclass
class ConflictSearch:
    """What :func:`minimal_conflict` found.

    Parameters
    ----------
    conflict : list of int
        The elements kept (indices into the candidates), in their original order.
    sound : bool or None
        The oracle proved the kept set infeasible (None: never asked or unknown).
    minimal : bool or None
        Every single drop of a kept element was proved feasible (None: some drop was
        unknown or the deadline came first).
    calls : int
        Oracle calls made.
    timed_out : bool
        The deadline stopped the search.

    Examples
    --------
    >>> ConflictSearch([1], True, True, 2, False).conflict
    [1]
    """

    conflict: List[int]
    sound: Optional[bool]
    minimal: Optional[bool]
    calls: int
    timed_out: bool


def minimal_conflict(
    candidates: Sequence[int],
    feasible: Callable[[List[int]], Optional[bool]],
    *,
    deadline: Optional[float] = None,
    known_infeasible: bool = False,
    chunk: Optional[int] = None,
    shrink: Optional[Callable[[List[int]], Optional[List[int]]]] = None,
) -> ConflictSearch:
    """Shrink an infeasible set of demand elements to a minimal conflict.

    A chunked deletion filter: drop halves, then quarters ... then single elements, keeping
    a drop whenever the rest stays infeasible. Each kept element is then one whose drop
    made the rest feasible (proved) or unknown, so the result is minimal exactly when no
    answer was unknown and the deadline did not stop the search.

    Parameters
    ----------
    candidates : sequence of int
        The demand elements to search over (their order guides the search: put the likely
        culprits last, they are tried for removal last).
    feasible : callable
        ``feasible(subset) -> True | False | None``: whether the elements of ``subset``
        (a list of candidates, possibly empty: the part of the request no search drops
        may conflict alone) can be satisfied together; None when unknown.
    deadline : float, optional
        A :func:`time.monotonic` instant after which the search stops (the set then is
        sound but not claimed minimal).
    known_infeasible : bool, default False
        The caller has already proved the whole set infeasible (skips one call).
    chunk : int, optional
        The first chunk's size (default: half the candidates). 1 is the plain deletion
        filter, one call per element: the cheapest start from a set that is likely
        minimal already (an unsat core), where halves and quarters would all be refused.
    shrink : callable, optional
        ``shrink(subset) -> list | None``, asked after ``feasible(subset)`` answered False:
        a smaller subset of ``subset`` that the same answer proves infeasible too (e.g. an
        exact optimum placing ``k`` of the elements proves every ``k + 1`` of them
        infeasible), or None. The search goes on from it, so elements it leaves out cost
        no call of their own.

    Returns
    -------
    ConflictSearch
        The conflict (a subset of ``candidates``), whether it is proved sound and minimal.

    Examples
    --------
    Items of weight 4, 5, 6 and 1 into one bin of 10: {4, 6, 1} and {5, 6} conflict;
    the search keeps one of them.

    >>> w = [4, 5, 6, 1]
    >>> out = minimal_conflict(range(4), lambda s: sum(w[i] for i in s) <= 10)
    >>> sorted(out.conflict), out.sound, out.minimal
    ([1, 2], True, True)
    """
    keep = list(candidates)
    calls = 0
    if not known_infeasible:
        calls += 1
        first = feasible(keep)
        if first is not False:
            return ConflictSearch(keep, None if first is None else False, None, calls, False)

    def late() -> bool:
        return deadline is not None and time.monotonic() >= deadline

    unknown = False
    chunk = max(1, len(keep) // 2 if chunk is None else min(int(chunk), len(keep)))
    tried_single: set = set()
    while True:
        i = 0
        while i < len(keep):
            if late():
                return ConflictSearch(keep, True, None, calls, True)
            part = keep[i:i + chunk]
            if chunk == 1 and part[0] in tried_single:
                i += 1
                continue
            rest = keep[:i] + keep[i + chunk:]
            calls += 1
            got = feasible(rest)
            if got is False:  # the rest still conflicts: drop the part for good
                keep = rest
                smaller = shrink(rest) if shrink is not None else None
                if smaller is not None and len(smaller) < len(rest):
                    inside = set(smaller)  # (in the candidates' order; i stays a position)
                    ahead = sum(1 for e in rest[:i] if e in inside)
                    keep, i = [e for e in rest if e in inside], ahead
                continue
            if chunk == 1:
                tried_single.add(part[0])
                unknown = unknown or got is None
            i += chunk
        if chunk == 1:
            break
        chunk = max(1, chunk // 2)
    return ConflictSearch(keep, True, None if unknown else True, calls, False)


def fix_deadline(started: float, time_limit: float) -> float:
    """When the search for the nearest fixes stops (a :func:`time.monotonic` instant).

    The conflict is the certificate; the fixes are help. They stop 0.9 of a tenth of the
    budget (of 1 s at least) after the explanation started, earlier by the learnt margin
    (:func:`fix_margin`: the recent explanations' last calls past their deadline) where the
    0.1 s left before the target does not cover it, or 0.2 s after the conflict was found
    when the conflict took longer, never past the budget's end: an explanation then costs
    its conflict plus a fraction of a second (issue 38: the solve's time plus 1 s).

    Parameters
    ----------
    started : float
        When the explanation started (:func:`time.monotonic`).
    time_limit : float
        Its whole budget in seconds.

    Returns
    -------
    float
        The instant.

    Examples
    --------
    >>> import time
    >>> t0 = time.monotonic()
    >>> fix_deadline(t0, 10.0) <= t0 + 10.0
    True
    """
    share = 0.9 * max(1.0, 0.1 * time_limit)
    fixes = max(FIX_FLOOR * share, min(share, share / 0.9 - fix_margin()))
    out = min(started + time_limit, max(started + fixes, time.monotonic() + 0.2))
    _PENDING.fixes = (started, out)
    return out


#: How many recent explanations' lateness (:func:`fix_margin`) is remembered.
FIX_MEMORY = 8

#: The learnt margin is this many times the largest recent lateness.
FIX_SAFETY = 1.5

#: The fixes keep at least this share of their time whatever the margin.
FIX_FLOOR = 0.5

_LATE: deque[float] = deque(maxlen=FIX_MEMORY)
_PENDING = threading.local()


def fix_margin() -> float:
    """The margin the fixes keep before the explanation's target (learnt, in seconds).

    Each explanation that took a :func:`fix_deadline` records, when it is built, how far
    past that deadline it ended (its last fix call's overrun: 0 when the fixes ended
    before). The margin is :data:`FIX_SAFETY` times the second largest of the last
    :data:`FIX_MEMORY` (the largest while only one is known; 0 before any: one slow call,
    a process's first imports, does not cut the next eight explanations' fixes, a loaded
    machine's repeated ones do): the fixes then stop ``margin`` before the
    explanation's target (1 s after it started on the default budget), never later than
    their 0.9 s nor earlier than :data:`FIX_FLOOR` of it. On a quiet machine the last
    calls end within the 0.1 s the 0.9 s leaves, and nothing changes; under load a slow
    last call (0.1-0.3 s at loads past 15) moves the next explanations' fixes earlier, and
    the margin falls back once quick calls fill the memory again.

    Returns
    -------
    float
        Seconds.

    Examples
    --------
    >>> fix_margin() >= 0.0
    True
    """
    late = sorted(_LATE, reverse=True)
    return FIX_SAFETY * (late[1] if len(late) > 1 else late[0] if late else 0.0)


def _fixes_ended(seconds: float) -> None:
    """Record an explanation's lateness past its fixes' deadline (:func:`fix_margin`),
    when it is the one that took that deadline (started ``seconds`` ago, within 50 ms of
    the deadline's start: an explanation built by hand, or one whose fixes were skipped,
    records nothing)."""
    pending = getattr(_PENDING, "fixes", None)
    if pending is None:
        return
    now = time.monotonic()
    started, deadline = pending
    if abs((now - seconds) - started) > 0.05:
        return
    _PENDING.fixes = None
    _LATE.append(max(0.0, now - deadline))


def _schema() -> Any:
    """The schema of :meth:`Explanation.to_dict` (built on first use: no import cycle)."""
    from .schema import AnyValue, Bool, Int, ListOf, Num, Obj, OneOf, Str

    maybe = OneOf((bool, Bool()), (type(None), AnyValue()))
    relaxation = Obj({"kind": (Str(), True), "sentence": (Str(), True),
                      "changes": (Obj({}, extra=True), True), "cost": (Num(), True),
                      "optimal": (maybe, True), "checked": (Bool(), True)})  # fmt: skip
    return Obj({"demand": (ListOf(Str()), True), "resources": (ListOf(Str()), True),
                "certificate": (Str(), True), "sound": (maybe, True),
                "minimal": (maybe, True), "sentence": (Str(), True),
                "relaxations": (ListOf(relaxation), True),
                "conflict": (Obj({}, extra=True), True),
                "oracle_calls": (Int(0), True), "seconds": (Num(0), True)})  # fmt: skip


#: The schema of an explanation's JSON (``Explanation.to_dict()``, the ``explanation`` of a
#: result's or a command's ``--json`` output), as :mod:`coalloc._shared.schema` nodes; built
#: by :func:`check_explanation` on first use (``EXPLANATION_SCHEMA[0]``).
EXPLANATION_SCHEMA: List[Any] = []


def check_explanation(doc: Any, source: str = "<explanation>") -> None:
    """Check a parsed explanation (``Explanation.to_dict()`` read back from JSON).

    Parameters
    ----------
    doc : object
        The parsed JSON.
    source : str, default "<explanation>"
        Where it came from, first in the message.

    Raises
    ------
    coalloc._shared.jsonio.InstanceError
        A missing or unknown field, or a field of the wrong type, named by its path.

    Examples
    --------
    >>> check_explanation(Explanation(demand=("item 0",), resources=()).to_dict())
    >>> try:
    ...     check_explanation({"demand": "item 0"})
    ... except ValueError as exc:
    ...     print(str(exc).split(":")[0])
    <explanation>
    """
    from .schema import check

    if not EXPLANATION_SCHEMA:
        EXPLANATION_SCHEMA.append(_schema())
    check(doc, EXPLANATION_SCHEMA[0], source)
