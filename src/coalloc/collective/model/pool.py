"""A pool of resources and its ledger of reservations (Cankar et al. 2013, section 2).

A :class:`ResourcePool` holds ``n`` nodes (resources ``R_j``) with ``m`` named quantitative
properties (capacities ``p_ij``), qualitative labels, and per node and property a timetable
``T_ij(t)`` of the amount already reserved: a step function in continuous time (seconds from
the pool's origin). The timetables share one sorted grid of breakpoints ``times`` (the first
is 0); ``reserved[j, i, k]`` is the amount reserved on ``[times[k], times[k+1])`` and the last
value holds for ever. Reservation intervals are half-open: a job on ``[t, t + t_res)`` does not
conflict with one starting at ``t + t_res``.
"""

from __future__ import annotations

import math
import threading
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..._shared import interrupt
from ..._shared.caches import cache_of
from ..._shared.validation import check_nonnegative, readonly
from .tolerance import tolerances

__all__ = ["ResourcePool", "BLOCK"]


def _names(names: Any, m: Optional[int], argname: str) -> Tuple[str, ...]:
    if isinstance(names, str) or not isinstance(names, (list, tuple, np.ndarray)):
        raise TypeError(f"{argname} must be a sequence of strings")
    out = tuple(names)
    if not all(isinstance(s, str) and s for s in out):
        raise TypeError(f"{argname} must contain non-empty strings")
    if len(set(out)) != len(out):
        raise ValueError(f"{argname} has duplicates: {list(out)}")
    if m is not None and len(out) != m:
        raise ValueError(f"{argname} has {len(out)} names, expected {m}")
    return out


def _float_array(values: Any, argname: str, ndim: int) -> np.ndarray:
    try:
        arr = np.array(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{argname} must be numeric: {exc}") from None
    if arr.ndim != ndim:
        raise ValueError(f"{argname} must be {ndim}-D, got shape {arr.shape}")
    check_nonnegative(arr, argname)
    return arr


class ResourcePool:
    """Nodes with capacities, labels and timetables of reserved amounts.

    Parameters
    ----------
    capacity : array_like, shape (n, m)
        ``p_ij``: the amount of property ``i`` on node ``j`` (finite, >= 0).
    names : sequence of str, length m
        Property names (for example ``("cores", "ghz", "ram_gb")``).
    times : array_like, shape (K,), optional
        Sorted, distinct breakpoints of the timetables in seconds, ``times[0] == 0``.
        Default ``[0]`` (nothing reserved).
    reserved : array_like, shape (n, m, K), optional
        ``reserved[j, i, k]``: amount reserved on ``[times[k], times[k+1])`` (the last for
        ever); at most the capacity. Default zeros.
    labels : mapping of str to sequence of str, optional
        Qualitative properties: ``labels["arch"][j]`` is node ``j``'s architecture.
    node_names : sequence of str, optional
        Names of the nodes (default ``"n0", "n1", ...``).
    clip : bool
        Clip reserved amounts above the capacity to the capacity (usage logs can exceed
        it) instead of raising ``ValueError``.

    Raises
    ------
    TypeError, ValueError
        On malformed arguments (the message names the argument).

    Examples
    --------
    >>> pool = ResourcePool([[4, 8.0], [2, 4.0]], ["cores", "ram"])
    >>> pool.n_nodes, pool.names
    (2, ('cores', 'ram'))
    """

    def __init__(
        self,
        capacity: Any,
        names: Sequence[str],
        times: Any = None,
        reserved: Any = None,
        labels: Optional[Mapping[str, Sequence[str]]] = None,
        node_names: Optional[Sequence[str]] = None,
        *,
        clip: bool = False,
    ) -> None:
        cap = _float_array(capacity, "capacity", 2)
        n, m = cap.shape
        if m == 0:
            raise ValueError("capacity must have at least one property (column)")
        self._names = _names(names, m, "names")
        t = np.zeros(1) if times is None else _float_array(times, "times", 1)
        if t.shape[0] == 0 or t[0] != 0.0:
            raise ValueError("times must start at 0 (the pool's origin)")
        if np.any(np.diff(t) <= 0):
            raise ValueError("times must be strictly increasing")
        if reserved is None:
            res = np.zeros((n, m, t.shape[0]))
        else:
            res = _float_array(reserved, "reserved", 3)
            if res.shape != (n, m, t.shape[0]):
                raise ValueError(
                    f"reserved has shape {res.shape}, expected (nodes, properties, len(times)) "
                    f"= {(n, m, t.shape[0])}"
                )
        tol = tolerances(cap)
        over = res > cap[:, :, None] + tol[None, :, None]
        if np.any(over) and not clip:
            j, i, k = (int(v[0]) for v in np.nonzero(over))
            raise ValueError(
                f"reserved exceeds capacity: node {j}, property {self._names[i]!r}, from "
                f"t={t[k]:g} s ({res[j, i, k]:g} > {cap[j, i]:g}); pass clip=True to clip "
                "reserved amounts to the capacity"
            )
        if clip:
            res = np.minimum(res, cap[:, :, None])
        self._labels: Dict[str, np.ndarray] = {}
        if labels is not None:
            if not isinstance(labels, Mapping):
                raise TypeError("labels must be a mapping of label name -> one value per node")
            for key, values in labels.items():
                if not isinstance(key, str):
                    raise TypeError("labels keys must be strings")
                vals = np.array([None if v is None else str(v) for v in values], dtype=object)
                if vals.shape != (n,):
                    raise ValueError(f"labels[{key!r}] has {vals.shape[0]} values, expected {n}")
                readonly(vals)
                self._labels[key] = vals
        if node_names is None:
            self._node_names = tuple(f"n{j}" for j in range(n))
        else:
            self._node_names = _names(node_names, n, "node_names")
        readonly(cap, t, res, tol)
        self._capacity, self._tolerance = cap, tol
        self._state = (t, res)  # one attribute: a reader never sees new times, old amounts
        self._lock = threading.Lock()
        # the ledger: _buf is the writable array behind _state[1] once a booking has made the
        # pool its own copy (None: shared with a copy or a caller, copied at the next booking)
        self._buf: Optional[np.ndarray] = None
        # Derived from the state, kept beside the pool (coalloc._shared.caches: a query never
        # writes onto the model and a pickle carries none), read and written under the lock:
        # "falls": (state, bits), per node, packed bits of the breakpoints where one of its
        # reserved amounts falls, for the state it was computed on (see candidate_starts);
        # "bm": (state, block maxima of BLOCK segments) for the state it was computed on, and
        # "bm_own": whether that array is this pool's own (updated in place by bookings) or
        # shared with a copy; "bn", "bn_own": the same for the blocks' minima (built with
        # "bm", _block_extrema); "parts": key -> (state, array, rows done), an index whose
        # build a deadline stopped (_index: the next build goes on from there).

    # ----------------------------------------------------------------- constructors
    @classmethod
    def from_slots(
        cls,
        capacity: Any,
        reserved: Any,
        slot_seconds: float,
        names: Sequence[str],
        *,
        labels: Optional[Mapping[str, Sequence[str]]] = None,
        node_names: Optional[Sequence[str]] = None,
        clip: bool = False,
    ) -> ResourcePool:
        """A pool from a dense grid of equal slots (for example 5-minute usage logs).

        Parameters
        ----------
        capacity : array_like, shape (n, m)
        reserved : array_like, shape (n, m, S)
            Amount reserved in slot ``s`` = ``[s * slot_seconds, (s + 1) * slot_seconds)``.
            After the last slot nothing is reserved.
        slot_seconds : float
            Length of a slot (> 0).
        names : sequence of str
        labels, node_names, clip : optional
            As for :class:`ResourcePool`.

        Returns
        -------
        ResourcePool

        Examples
        --------
        >>> pool = ResourcePool.from_slots([[4.0]], [[[1.0, 3.0]]], 300, ["cores"])
        >>> pool.times.tolist(), pool.reserved[0, 0].tolist()
        ([0.0, 300.0, 600.0], [1.0, 3.0, 0.0])
        """
        if isinstance(slot_seconds, bool) or not isinstance(slot_seconds, (int, float, np.number)):
            raise TypeError("slot_seconds must be a number")
        if not (math.isfinite(float(slot_seconds)) and slot_seconds > 0):
            raise ValueError(f"slot_seconds must be a finite number > 0, got {slot_seconds!r}")
        res = _float_array(reserved, "reserved", 3)
        s = res.shape[2]
        times = np.arange(s + 1, dtype=np.float64) * float(slot_seconds)
        res = np.concatenate([res, np.zeros(res.shape[:2] + (1,))], axis=2)
        return cls(capacity, names, times, res, labels=labels, node_names=node_names, clip=clip)

    # ----------------------------------------------------------------- properties
    @property
    def n_nodes(self) -> int:
        """Number of nodes ``n``."""
        return int(self._capacity.shape[0])

    @property
    def n_properties(self) -> int:
        """Number of quantitative properties ``m``."""
        return int(self._capacity.shape[1])

    @property
    def names(self) -> Tuple[str, ...]:
        """Property names."""
        return self._names

    @property
    def node_names(self) -> Tuple[str, ...]:
        """Node names."""
        return self._node_names

    @property
    def capacity(self) -> np.ndarray:
        """``p_ij`` as a read-only (n, m) array."""
        return self._capacity

    @property
    def tolerance(self) -> np.ndarray:
        """``tau_i = TOLERANCE * max_j p_ij`` per property (read-only; see :data:`TOLERANCE`)."""
        return self._tolerance

    @property
    def times(self) -> np.ndarray:
        """Breakpoints of the timetables (read-only, seconds)."""
        return self._state[0]

    @property
    def reserved(self) -> np.ndarray:
        """Reserved amounts per node, property and segment (read-only, (n, m, K))."""
        return self._state[1]

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        del state["_lock"]  # a lock cannot be pickled; the copy gets its own
        state["_buf"] = None  # the pickled amounts are a copy: the next booking copies again
        return state

    def __setstate__(self, state: dict) -> None:
        state.setdefault("_buf", None)  # a pool pickled before the ledger
        for stale in ("_falls", "_bm", "_bm_own"):  # derived data of an older pickle
            state.pop(stale, None)
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def labels(self) -> Dict[str, np.ndarray]:
        """Qualitative labels: name -> read-only object array of one value per node."""
        return dict(self._labels)

    def __repr__(self) -> str:
        return (
            f"ResourcePool({self.n_nodes} nodes, properties {list(self._names)}, "
            f"{self.times.shape[0]} breakpoints, labels {sorted(self._labels)})"
        )

    def copy(self) -> ResourcePool:
        """An independent pool with the same state (the arrays are shared read-only).

        Returns
        -------
        ResourcePool
            A pool whose reservations and trimming do not touch this one.

        Examples
        --------
        >>> from coalloc.collective import ResourcePool
        >>> pool = ResourcePool([[4, 8.0], [2, 4.0]], ["cores", "ram"])
        >>> other = pool.copy().reserve(0, 60, [0], [[1, 2.0]])
        >>> pool.reserved_at(0)[0].tolist(), other.reserved_at(0)[0].tolist()
        ([0.0, 0.0], [1.0, 2.0])
        """
        new = object.__new__(ResourcePool)
        with self._lock:
            new.__dict__.update(self.__dict__)
            self._buf = None  # the amounts are shared now: each pool copies at its next booking
            mine = self._derived()
            mine["bm_own"] = mine["bn_own"] = False
            cache_of(new).update(mine)  # the derived arrays are shared too, read-only
            cache_of(new)["parts"] = {}  # a stopped build stays with this pool
        new._buf = None
        new._labels = dict(self._labels)
        new._lock = threading.Lock()
        return new

    # ----------------------------------------------------------------- queries
    def reserved_at(self, t: float) -> np.ndarray:
        """``T_ij(t)`` for every node and property, shape (n, m).

        Parameters
        ----------
        t : float
            The time (seconds); intervals are half-open, so a reservation ending at ``t``
            no longer counts.

        Returns
        -------
        ndarray of float64, shape (n, m)
            The reserved amounts in force at ``t`` (a copy).

        Examples
        --------
        >>> from coalloc.collective import ResourcePool
        >>> pool = ResourcePool([[4, 8.0], [2, 4.0]], ["cores", "ram"])
        >>> _ = pool.reserve(60, 60, [1], [[1, 1.5]])
        >>> pool.reserved_at(60).tolist(), pool.reserved_at(120).tolist()
        ([[0.0, 0.0], [1.0, 1.5]], [[0.0, 0.0], [0.0, 0.0]])
        """
        times, res = self._state
        k = int(np.searchsorted(times, float(t), side="right")) - 1
        return res[:, :, max(k, 0)].copy()

    def match(self, labels: Optional[Mapping[str, Any]]) -> np.ndarray:
        """Boolean mask of the nodes whose labels satisfy ``labels``.

        A requirement value is a string (equality) or a sequence of accepted strings; a
        label the pool does not have matches no node.

        Parameters
        ----------
        labels : dict or None
            Label name -> accepted value or values; None or empty matches every node.

        Returns
        -------
        ndarray of bool, shape (n,)
            True for the matching nodes.

        Examples
        --------
        >>> from coalloc.collective import ResourcePool
        >>> pool = ResourcePool([[4], [2], [8]], ["cores"],
        ...                     labels={"site": ["a", "b", "a"]})
        >>> pool.match({"site": "a"}).tolist(), pool.match({"site": ["a", "b"]}).tolist()
        ([True, False, True], [True, True, True])
        >>> pool.match({"os": "linux"}).tolist()
        [False, False, False]
        """
        mask = np.ones(self.n_nodes, dtype=bool)
        for key, want in (labels or {}).items():
            have = self._labels.get(key)
            if have is None:
                return np.zeros(self.n_nodes, dtype=bool)
            accepted = {want} if isinstance(want, str) else set(want)
            mask &= np.array([v in accepted for v in have], dtype=bool)
        return mask

    # ----------------------------------------------------------------- Phase VI
    def reserve(self, start: float, duration: float, resources: Any, amounts: Any) -> ResourcePool:
        """Reserve ``amounts`` on ``resources`` for ``[start, start + duration)``, atomically.

        Either every amount fits into what is free over the whole interval (within the
        tolerance rule of :data:`TOLERANCE`) and all the timetables are updated, or a
        ``ValueError`` is raised and the pool is unchanged. The check and the update run
        under the pool's lock, so that threads sharing a pool never overbook it; nothing is
        clipped (an amount that does not fit is an error, never a silent cap).

        Parameters
        ----------
        start, duration : float
            Seconds (``start >= 0``, ``duration > 0``).
        resources : array_like of int, shape (N,)
            Distinct node indices.
        amounts : array_like, shape (N, m)
            Amount of each property to reserve on each node.

        Returns
        -------
        ResourcePool
            ``self`` (updated in place).

        Raises
        ------
        ValueError
            When an amount does not fit (nothing is changed) or the arguments are malformed.

        Examples
        --------
        >>> pool = ResourcePool([[4.0], [4.0]], ["cores"])
        >>> _ = pool.reserve(0, 60, [1], [[3.0]])
        >>> pool.reserved_at(30).ravel().tolist(), pool.reserved_at(60).ravel().tolist()
        ([0.0, 3.0], [0.0, 0.0])
        """
        return self._book(start, duration, resources, amounts, +1)

    def release(self, start: float, duration: float, resources: Any, amounts: Any) -> ResourcePool:
        """Give back ``amounts`` on ``resources`` for ``[start, start + duration)``, atomically.

        The inverse of :meth:`reserve`: either every amount is at most what is reserved over
        the whole interval (within the tolerance rule) and the timetables are lowered, or a
        ``ValueError`` is raised and the pool is unchanged.

        Parameters
        ----------
        start, duration : float
            Seconds (``start >= 0``, ``duration > 0``).
        resources : array_like of int, shape (N,)
            Distinct node indices.
        amounts : array_like, shape (N, m)
            Amount of each property to give back on each node.

        Returns
        -------
        ResourcePool
            ``self`` (updated in place).

        Raises
        ------
        ValueError
            When more would be released than is reserved (nothing is changed) or the
            arguments are malformed.

        Examples
        --------
        >>> pool = ResourcePool([[4.0], [4.0]], ["cores"])
        >>> _ = pool.reserve(0, 60, [1], [[3.0]]).release(0, 60, [1], [[3.0]])
        >>> pool.reserved_at(30).ravel().tolist()
        [0.0, 0.0]
        """
        return self._book(start, duration, resources, amounts, -1)

    def _book(self, start: Any, duration: Any, resources: Any, amounts: Any,
              sign: int) -> ResourcePool:  # fmt: skip
        """Reserve (``sign`` +1) or release (-1) under the pool's lock, all or nothing."""
        start = float(start)
        duration = float(duration)
        if not (math.isfinite(start) and start >= 0):
            raise ValueError(f"start must be a finite number >= 0, got {start!r}")
        if not (math.isfinite(duration) and duration > 0):
            raise ValueError(f"duration must be a finite number > 0, got {duration!r}")
        end = start + duration
        if not math.isfinite(end):
            raise ValueError(f"start + duration must be finite, got {start!r} + {duration!r}")
        idx = np.asarray(resources)
        if idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer):
            raise ValueError("resources must be a 1-D array of node indices")
        idx = idx.astype(np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= self.n_nodes):
            raise ValueError(f"resources must be node indices in [0, {self.n_nodes})")
        if np.unique(idx).size != idx.size:
            raise ValueError("resources must be distinct")
        amt = _float_array(amounts, "amounts", 2)
        if amt.shape != (idx.size, self.n_properties):
            want = (idx.size, self.n_properties)
            raise ValueError(f"amounts has shape {amt.shape}, expected {want}")
        cap, tol = self._capacity[idx], self._tolerance
        with self._lock:  # read, check and write as one step: no lost or double booking
            old_state = self._state
            times, res = old_state
            new_points = [x for x in (start, end) if x not in set(times.tolist())]
            if new_points:
                old = times
                times = np.union1d(times, new_points)
                res = res[:, :, np.searchsorted(old, times, side="right") - 1]
            k0 = int(np.searchsorted(times, start, side="left"))
            k1 = int(np.searchsorted(times, end, side="left"))
            window = res[idx, :, k0:k1]
            if sign > 0:
                free = cap - window.max(axis=2)
                bad = amt > free + tol[None, :]
                if np.any(bad):
                    r, i = (int(v[0]) for v in np.nonzero(bad))
                    raise ValueError(
                        f"cannot reserve {amt[r, i]:g} of {self._names[i]!r} on node "
                        f"{int(idx[r])} for [{start:g}, {end:g}): only {free[r, i]:g} is free; "
                        "nothing was reserved"
                    )
            else:
                held = window.min(axis=2)
                bad = amt > held + tol[None, :]
                if np.any(bad):
                    r, i = (int(v[0]) for v in np.nonzero(bad))
                    raise ValueError(
                        f"cannot release {amt[r, i]:g} of {self._names[i]!r} on node "
                        f"{int(idx[r])} for [{start:g}, {end:g}): only {held[r, i]:g} is "
                        "reserved there; nothing was released"
                    )
            if new_points:  # a new grid: a fresh array (the old one stays with its readers)
                buf = np.ascontiguousarray(res, dtype=np.float64)
            elif self._buf is not None:  # the pool's own amounts: updated in place
                buf = self._buf
            else:  # shared with a copy (or never booked): copied once, then its own
                buf = np.array(res, dtype=np.float64, copy=True)
            if sign > 0:
                buf[idx, :, k0:k1] = window + amt[:, :, None]
            else:  # a release within the tolerance of all that is held leaves 0
                buf[idx, :, k0:k1] = np.maximum(window - amt[:, :, None], 0.0)
            if buf is not self._buf:
                view = buf.view()
                times = np.array(times, dtype=np.float64)
                readonly(times, view)
                self._buf = buf
                self._state = (times, view)
            derived = self._derived()
            for key, lowest in (("bm", False), ("bn", True)):
                bm = derived[key]
                if bm is not None and bm[0] is old_state and not new_points:
                    arr = bm[1] if derived[key + "_own"] else np.array(bm[1], copy=True)
                    b0, b1 = k0 // BLOCK, (k1 - 1) // BLOCK + 1
                    arr[idx, :, b0:b1] = _block_maxima(buf[idx, :, b0 * BLOCK : b1 * BLOCK],
                                                       lowest)  # fmt: skip
                    derived[key], derived[key + "_own"] = (self._state, arr), True
                else:
                    derived[key], derived[key + "_own"] = None, False
            falls = derived["falls"]
            if falls is not None and falls[0] is old_state and not new_points:
                # the same grid: only the booked rows' bits change (a new array: readers of
                # the old one keep it)
                bits = falls[1].copy()
                bits[idx] = _fall_bits(buf[idx])
                readonly(bits)
                derived["falls"] = (self._state, bits)
            parts = derived["parts"]
            for key, (st, arr, done) in list(parts.items()):
                if st is old_state and not new_points:  # the rows built so far: kept exact
                    rows = idx[idx < done]
                    arr[rows] = _INDEXES[key](buf[rows])
                    parts[key] = (self._state, arr, done)
                else:
                    del parts[key]
        return self

    def _block_maxima(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(times, reserved, bm)`` read together: ``bm[j, i, b]`` the maximum of
        ``reserved[j, i]`` over the segments ``b BLOCK .. (b + 1) BLOCK - 1``, computed once
        per grid (under the lock) and kept up to date by every booking on it (the kernel
        ``window_max_blocks`` reads the whole blocks of a window from it)."""
        return self._block_extrema()[:3]

    def _block_extrema(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(times, reserved, bm, bn)`` read together: :meth:`_block_maxima`'s and ``bn``,
        the minima of the same blocks (``window_screen``'s coarse bounds), built together
        (one index build per grid) and kept up to date alike."""
        with self._lock:
            state = self._state
            derived = self._derived()
            bm, bn = _index(derived, "bm", state), _index(derived, "bn", state)
            return state[0], state[1], bm, bn

    def _indexed(self) -> bool:
        """Whether the indexes a request reads (``falls``, ``bm``) are built for the current
        state (a fresh or unpickled pool has none until its first request builds them)."""
        with self._lock:
            state, derived = self._state, self._derived()
            return all(derived[k] is not None and derived[k][0] is state for k in ("falls", "bm"))

    def _derived(self) -> dict:
        """The pool's derived data (``falls``, ``bm``, ``bm_own``, ``bn``, ``bn_own``; see
        ``__init__``), kept beside it in :func:`coalloc._shared.caches.cache_of`; call under
        the lock."""
        derived = cache_of(self)
        if "bm" not in derived:
            derived.update(falls=None, bm=None, bm_own=False)
        if "bn" not in derived:
            derived.update(bn=None, bn_own=False)
        if "parts" not in derived:
            derived["parts"] = {}
        return derived

    def candidate_starts(self, nodes: Any, lo: float, hi: float) -> np.ndarray:
        """``lo`` and the breakpoints in ``(lo, hi]`` where a reserved amount of ``nodes`` falls.

        The only possible earliest starts (Phase III), as the kernel ``decrease_starts``
        finds them, from per-node bits of the breakpoints where an amount falls: computed
        once per grid (under the pool's lock) and kept up to date by every booking on it, so
        a request reads ``len(nodes)`` rows of bits over its window, not the timetables.

        Parameters
        ----------
        nodes : array_like of int
            Node indices.
        lo, hi : float
            The window of starts.

        Returns
        -------
        ndarray of float64
            The starts, ascending, ``lo`` first.

        Examples
        --------
        >>> pool = ResourcePool.from_slots([[4.0], [4.0]], [[[3.0, 1.0, 2.0]], [[0.0, 0.0, 0.0]]],
        ...                                60, ["cores"])
        >>> pool.candidate_starts([0], 0.0, 500.0).tolist()
        [0.0, 60.0, 180.0]
        """
        with self._lock:
            state = self._state
            bits = _index(self._derived(), "falls", state)
        times = state[0]
        lo, hi = float(lo), float(hi)
        k0 = max(int(np.searchsorted(times, lo, side="right")), 1)  # first k with t_k > lo
        k1 = int(np.searchsorted(times, hi, side="right"))  # t_k <= hi for k < k1
        nodes = np.asarray(nodes, dtype=np.int64)
        if k1 <= k0 or nodes.size == 0:
            return np.array([lo])
        c0, c1 = k0 - 1, k1 - 1  # bit c is breakpoint c + 1
        any_fall = np.bitwise_or.reduce(bits[nodes, c0 // 8 : (c1 + 7) // 8], axis=0)
        flags = np.unpackbits(any_fall)[c0 % 8 : c0 % 8 + (c1 - c0)]
        return np.concatenate([[lo], times[np.flatnonzero(flags) + k0]])

    def trim(self, before: float) -> ResourcePool:
        """Drop breakpoints before ``before`` (the past), keeping the timetables after it.

        The value in force at ``before`` moves to the origin's segment; used by the online
        simulator to keep the grid small.

        Parameters
        ----------
        before : float
            Breakpoints before this time are forgotten.

        Returns
        -------
        ResourcePool
            ``self``, trimmed in place.

        Examples
        --------
        >>> from coalloc.collective import ResourcePool
        >>> pool = ResourcePool([[4, 8.0], [2, 4.0]], ["cores", "ram"])
        >>> _ = pool.reserve(0, 60, [0], [[1, 1.0]]).reserve(100, 60, [0], [[2, 2.0]])
        >>> pool.times.tolist()
        [0.0, 60.0, 100.0, 160.0]
        >>> pool.trim(110).times.tolist(), pool.reserved_at(120)[0].tolist()
        ([0.0, 160.0], [2.0, 2.0])
        """
        with self._lock:
            old_t, old_r = self._state
            k = int(np.searchsorted(old_t, float(before), side="right")) - 1
            if k <= 0:
                return self
            times = np.concatenate([[0.0], old_t[k + 1 :]])
            res = np.concatenate([old_r[:, :, k : k + 1], old_r[:, :, k + 1 :]], 2)
            # keep absolute times: the first segment now covers [0, times[1])
            readonly(times, res)
            self._state = (times, res)
            self._buf = None
        return self

    def _restore(self, times: np.ndarray, reserved: np.ndarray) -> None:
        """Put back a whole ledger (``times`` from 0, ``reserved`` (n, m, K)) that the
        online simulator assembled from the past it trimmed and the timetables left (no
        check: the pieces are this pool's own, cut by :meth:`trim`)."""
        times = np.ascontiguousarray(times, dtype=np.float64)
        res = np.ascontiguousarray(reserved, dtype=np.float64)
        readonly(times, res)
        with self._lock:
            self._state = (times, res)
            self._buf = None


#: Segments per block of :meth:`ResourcePool._block_maxima`.
BLOCK = 16


def _block_maxima(res: np.ndarray, lowest: bool = False) -> np.ndarray:
    """Per row of ``res`` (rows, m, K), the maxima (the minima when ``lowest``) of blocks of
    :data:`BLOCK` segments (the last block may be shorter), shape (rows, m, ceil(K / BLOCK)):
    the compiled kernels ``block_maxima`` and ``block_minima`` (issue 40, h50coll: 0.05 s
    instead of NumPy's 0.35-0.40 s at 10,000 nodes x 3 properties x 2,017 breakpoints), their
    NumPy twins when the compiled module is not built (the same values)."""
    try:
        from .._search import block_maxima, block_minima
    except ImportError:  # a source tree without the compiled core
        from .._reference.search import block_maxima, block_minima
    res = np.ascontiguousarray(res, dtype=np.float64)
    out = np.empty((res.shape[0], res.shape[1], -(-res.shape[2] // BLOCK)))
    (block_minima if lowest else block_maxima)(res, BLOCK, out)
    return out


#: Amounts (rows x properties x breakpoints) read per piece of an index build; the build
#: looks at the deadline in force between two pieces (:func:`_index`).
PIECE = 1 << 20


def _index(derived: dict, key: str, state: Tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """The pool's index ``key`` (``"falls"``, ``"bm"`` or ``"bn"``) for ``state``, built now
    when missing, in pieces of rows of about :data:`PIECE` amounts (call under the lock).

    Between two pieces the build calls :func:`coalloc._shared.interrupt.check`, which raises
    once the deadline in force has passed (a ``time_limit``'s scope): the rows built so far
    stay in ``derived["parts"]`` (kept exact by bookings on the same grid) and the next
    build on that state goes on from there. Issue 36 at 10,000 nodes x 2,016 slots (h52coll):
    the three indexes cost about 0.15 s of CPU, built inside the first request on a pool
    without a look at the clock; a 0.05 s call ended at 0.5-1.0 s under load. Without a
    deadline the arrays are the same as one build of every row."""
    got = derived[key]
    if got is not None and got[0] is state:
        return got[1]
    res = state[1]
    n, m, k = res.shape
    part = derived["parts"].get(key)
    if part is not None and part[0] is state:
        arr, done = part[1], part[2]
    else:
        width = -(-max(k - 1, 0) // 8) if key == "falls" else -(-k // BLOCK)
        shape = (n, width) if key == "falls" else (n, m, width)
        arr, done = np.empty(shape, dtype=np.uint8 if key == "falls" else np.float64), 0
    step = max(1, PIECE // max(1, m * k))
    while done < n:
        derived["parts"][key] = (state, arr, done)
        interrupt.check()  # the deadline in force: raises, the rows built so far kept
        arr[done : done + step] = _INDEXES[key](res[done : done + step])
        done = min(done + step, n)
    derived["parts"].pop(key, None)
    if key == "falls":
        readonly(arr)  # shared with readers; a booking makes a new one
    else:
        derived[key + "_own"] = True  # the pool's own: bookings update it in place
    derived[key] = (state, arr)
    return arr


def _fall_bits(res: np.ndarray) -> np.ndarray:
    """Per row of ``res`` (rows, m, K), packed bits (big-endian, :func:`numpy.packbits`) of
    the breakpoints ``k >= 1`` where some amount falls: bit ``k - 1`` is
    ``any_i res[., i, k] < res[., i, k - 1]``."""
    falls = np.zeros((res.shape[0], max(res.shape[2] - 1, 0)), dtype=bool)
    for i in range(res.shape[1]):
        falls |= res[:, i, 1:] < res[:, i, :-1]
    return np.packbits(falls, axis=1)


#: The pool's indexes, each computed from some rows of the amounts (rows, m, K).
_INDEXES = {
    "falls": _fall_bits,
    "bm": _block_maxima,
    "bn": lambda res: _block_maxima(res, True),
}
