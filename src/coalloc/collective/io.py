"""File formats of :mod:`coalloc.collective` (see ``coalloc docs collective``).

* ``coalloc.collective.pool`` (JSON): ``names``, ``capacity`` (nodes x properties), optional
  ``node_names``, ``labels`` (name -> one value per node) and either ``times`` + ``reserved``
  (nodes x properties x breakpoints) or ``slot_seconds`` + ``slots`` (nodes x properties x
  slots, a dense grid such as 5-minute usage logs).
* pool CSV: one row per node: ``node,<property>...,<label:name>...`` (capacities, labels),
  optional usage CSV ``node,property,slot,reserved`` with ``--slot-seconds``.
* ``coalloc.collective.request`` (JSON): the fields of :class:`CollectiveRequest`.
* ``coalloc.collective.instance``: ``{"pool": {...}, "request": {...}}``.
* ``coalloc.collective.workload`` (JSON): ``requests``: a list of requests with ``arrival``
  (a request without ``earliest_start`` opens its window at its arrival, as SWF jobs do).
* Standard Workload Format (``.swf``): :func:`read_swf`.
"""

from __future__ import annotations

import csv
import math
import os
import re
from typing import Any, List, Optional, Tuple

import numpy as np

from .._shared.jsonio import (
    InstanceError,
    PathOrFile,
    atomic_output,
    check_envelope,
    dump_json,
    load_json,
    read_text,
)
from .._shared.result import jsonable
from .._shared.schema import (
    AnyValue,
    Bool,
    Int,
    ListOf,
    MapOf,
    Num,
    Obj,
    OneOf,
    Str,
    check,
    join_path,
)
from .model import CollectiveRequest, ResourcePool

__all__ = [
    "pool_to_dict", "pool_from_dict", "read_pool", "write_pool", "read_pool_csv",
    "request_to_dict", "request_from_dict", "read_request", "write_request",
    "instance_from_dict", "write_instance", "read_instance", "read_swf", "swf_requests",
    "read_workload", "write_result", "write_pool_snapshot", "read_pool_snapshot",
]  # fmt: skip

POOL_FORMAT = "coalloc.collective.pool"
REQUEST_FORMAT = "coalloc.collective.request"
INSTANCE_FORMAT = "coalloc.collective.instance"
WORKLOAD_FORMAT = "coalloc.collective.workload"
RESULT_FORMAT = "coalloc.collective.result"
VERSION = 1


#: Most nodes a request may ask for (counts are range-checked before any conversion).
MAX_COUNT = 2**31 - 1
#: A decimal number as text files write it: ASCII digits only (Python's ``float`` and
#: ``int`` also take ``1_0`` and other scripts' digits, which no trace or CSV means).
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)


def _text_number(text: str) -> float:
    """A decimal number of a text file (``ValueError`` for anything else, ``inf`` and
    ``nan`` included)."""
    t = text.strip()
    if not _DECIMAL.fullmatch(t):
        raise ValueError(f"not a decimal number: {text!r}")
    return float(t)


def _text_int(text: str) -> int:
    """A decimal integer of a text file, ASCII digits only."""
    t = text.strip()
    if not _INTEGER.fullmatch(t):
        raise ValueError(f"not a decimal integer: {text!r}")
    return int(t)


_NUMBERS = ListOf(Num(0))
_LABEL_VALUE = OneOf((str, Str()), (type(None), AnyValue()))
#: A pool object (file or instance part); contradictions are checked by :func:`pool_from_dict`.
POOL_SCHEMA = Obj(
    {
        "format": (AnyValue(), False),
        "version": (AnyValue(), False),
        "names": (ListOf(Str()), True),
        "node_names": (ListOf(Str()), False),
        "capacity": (ListOf(_NUMBERS), True),
        "labels": (MapOf(ListOf(_LABEL_VALUE)), False),
        "times": (_NUMBERS, False),
        "reserved": (ListOf(ListOf(_NUMBERS)), False),
        "slot_seconds": (Num(0), False),
        "slots": (ListOf(ListOf(_NUMBERS)), False),
        "clip": (Bool(), False),
        "metadata": (AnyValue(), False),
    }
)
_REQUEST_FIELDS = {
    "format": (AnyValue(), False),
    "version": (AnyValue(), False),
    "duration": (Num(0), True),
    "count": (Int(1, MAX_COUNT), True),
    "earliest_start": (Num(0), False),
    "latest_start": (Num(0), False),
    "minimum": (MapOf(Num(0)), False),
    "total": (MapOf(Num(0)), False),
    "labels": (MapOf(OneOf((str, Str()), (list, ListOf(Str())))), False),
    "arrival": (Num(0), False),
}
#: A request object (file, instance part or workload item).
REQUEST_SCHEMA = Obj(_REQUEST_FIELDS)
#: A ``coalloc.collective.instance`` file.
INSTANCE_SCHEMA = Obj(
    {
        "format": (AnyValue(), False),
        "version": (AnyValue(), False),
        "pool": (POOL_SCHEMA, True),
        "request": (REQUEST_SCHEMA, True),
        "metadata": (AnyValue(), False),
    }
)
#: A ``coalloc.collective.workload`` file.
WORKLOAD_SCHEMA = Obj(
    {
        "format": (AnyValue(), False),
        "version": (AnyValue(), False),
        "requests": (ListOf(REQUEST_SCHEMA), True),
        "metadata": (AnyValue(), False),
    }
)


def _rows(value: Any, width: int, path: str, source: str) -> None:
    """Every row of a checked list of lists has ``width`` items (a ragged matrix names its row)."""
    for j, row in enumerate(value):
        if len(row) != width:
            raise InstanceError(f"{source}: {path}[{j}]: expected {width} values, got {len(row)}")


def _grid(value: Any, n: int, m: int, k: int, path: str, source: str) -> np.ndarray:
    """A nodes x properties x k array from a checked list of lists of lists."""
    if len(value) != n:
        raise InstanceError(
            f"{source}: {path}: expected one entry per node ({n}), got {len(value)}"
        )
    for j, node in enumerate(value):
        if len(node) != m:
            raise InstanceError(
                f"{source}: {path}[{j}]: expected one list per property ({m}), got {len(node)}"
            )
        _rows(node, k, f"{path}[{j}]", source)
    return np.array(value, dtype=np.float64).reshape(n, m, k)


def _wrap(source: str, fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except InstanceError:
        raise
    except (TypeError, ValueError) as exc:
        raise InstanceError(f"{source}: {exc}") from None


def pool_to_dict(pool: ResourcePool) -> dict:
    """The pool as a ``coalloc.collective.pool`` dictionary."""
    return {
        "format": POOL_FORMAT, "version": VERSION, "names": list(pool.names),
        "node_names": list(pool.node_names), "capacity": jsonable(pool.capacity, compact=True),
        "labels": {k: list(v) for k, v in pool.labels.items()},
        "times": jsonable(pool.times, compact=True),
        "reserved": jsonable(pool.reserved, compact=True),
    }  # fmt: skip


def pool_from_dict(data: Any, *, source: str = "<dict>", root: str = "") -> ResourcePool:
    """A pool from a parsed ``coalloc.collective.pool`` dictionary.

    Parameters
    ----------
    data : dict
    source : str
        The file name, first in every message.
    root : str, optional
        The path of ``data`` in its document (``"pool"`` in an instance file).

    Raises
    ------
    InstanceError
        On a malformed dictionary: ``"<source>: <field path>: <what was expected>"``.
    """
    check_envelope(data, POOL_FORMAT, VERSION, f"{source}: {root}" if root else source)
    check(data, POOL_SCHEMA, source, root=root)
    at = f"{root}." if root else ""
    names = data["names"]
    cap = data["capacity"]
    m = len(names)
    _rows(cap, m, f"{at}capacity", source)
    n = len(cap)
    cap_arr = np.array(cap, dtype=np.float64).reshape(n, m)
    if "slots" in data:
        for key in ("times", "reserved"):
            if key in data:
                raise InstanceError(
                    f"{source}: {at}{key}: a pool has either slots + slot_seconds or times + "
                    "reserved, not both"
                )
        if "slot_seconds" not in data:
            raise InstanceError(f"{source}: {at}slot_seconds: missing (required with slots)")
        first = data["slots"][0] if data["slots"] else []
        width = len(first[0]) if first else 0
        slots = _grid(data["slots"], n, m, width, f"{at}slots", source)
        return _wrap(source, ResourcePool.from_slots, cap_arr, slots, data["slot_seconds"], names,
                     labels=data.get("labels"), node_names=data.get("node_names"),
                     clip=data.get("clip", False))  # fmt: skip
    if "slot_seconds" in data:
        raise InstanceError(f"{source}: {at}slot_seconds: only allowed with slots")
    times = data.get("times")
    reserved = data.get("reserved")
    if reserved is not None:
        k = 1 if times is None else len(times)
        reserved = _grid(reserved, n, m, k, f"{at}reserved", source)
    return _wrap(source, ResourcePool, cap_arr, names, times, reserved, labels=data.get("labels"),
                 node_names=data.get("node_names"), clip=data.get("clip", False))  # fmt: skip


def read_pool(src: PathOrFile) -> ResourcePool:
    """Read a pool: JSON (``coalloc.collective.pool`` or an instance's pool) or CSV (``.csv``).

    Parameters
    ----------
    src : str, path-like or file object
        A pool file, an instance file (its pool is read) or a ``.csv`` path
        (:func:`read_pool_csv`).

    Returns
    -------
    ResourcePool
        The pool, with its timetables.

    Raises
    ------
    InstanceError
        An unreadable file or a bad field (named with the file).

    Examples
    --------
    >>> import io
    >>> import coalloc.collective as co
    >>> pool = co.ResourcePool([[4.0, 8.0], [2.0, 2.0], [1.0, 4.0]], ["cores", "ram"])
    >>> f = io.StringIO()
    >>> co.write_pool(f, pool)
    >>> _ = f.seek(0)
    >>> co.read_pool(f).names
    ('cores', 'ram')
    """
    if not hasattr(src, "read") and str(src).lower().endswith(".csv"):
        return read_pool_csv(src)
    data, name = load_json(src)
    if isinstance(data, dict) and data.get("format") == INSTANCE_FORMAT:
        return instance_from_dict(data, source=name)[0]
    return pool_from_dict(data, source=name)


def write_pool(dst: PathOrFile, pool: ResourcePool) -> None:
    """Write a pool as JSON.

    Parameters
    ----------
    dst : str, path-like or file object
        Where to write (atomically, for a path).
    pool : ResourcePool
        The pool, timetables included.

    Examples
    --------
    >>> import io
    >>> import coalloc.collective as co
    >>> pool = co.ResourcePool([[4.0, 8.0], [2.0, 2.0], [1.0, 4.0]], ["cores", "ram"])
    >>> f = io.StringIO()
    >>> co.write_pool(f, pool)
    >>> _ = f.seek(0)
    >>> co.read_pool(f)
    ResourcePool(3 nodes, properties ['cores', 'ram'], 1 breakpoints, labels [])
    """
    dump_json(pool_to_dict(pool), dst)


SNAPSHOT_FORMAT = "coalloc.collective.pool-snapshot"
_SNAPSHOT_KEYS = {"format", "version", "names", "capacity", "times", "reserved", "node_names",
                  "label_keys", "label_values", "label_missing"}  # fmt: skip


def write_pool_snapshot(dst: Any, pool: ResourcePool) -> None:
    """Save a pool exactly and compactly: a NumPy ``.npz`` archive, written atomically.

    The binary counterpart of :func:`write_pool` for large ledgers (10,000 nodes x a week of
    5-minute slots: about 8 bytes per amount, where JSON takes about 50): the amounts as
    float64 (bit for bit), names and labels as Unicode arrays; no pickled object. Written
    through the package's one guarded writer (:func:`coalloc._shared.jsonio.atomic_output`):
    a killed run leaves the old file.

    Parameters
    ----------
    dst : str or path-like
        The file to write (``.npz`` by convention).
    pool : ResourcePool
        The pool, its timetables included.

    Examples
    --------
    >>> import os, tempfile
    >>> import coalloc.collective as co
    >>> from coalloc.collective.io import read_pool_snapshot, write_pool_snapshot
    >>> pool = co.ResourcePool([[4.0], [2.0]], ["cores"]).reserve(0, 60, [0], [[1.5]])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     write_pool_snapshot(os.path.join(tmp, "p.npz"), pool)
    ...     back = read_pool_snapshot(os.path.join(tmp, "p.npz"))
    >>> back.reserved_at(30).tolist()
    [[1.5], [0.0]]
    """
    if not isinstance(pool, ResourcePool):
        raise TypeError(f"pool must be a ResourcePool, got {type(pool).__name__}")
    times, reserved = pool._state  # one read: the grid and its amounts together
    keys = sorted(pool.labels)
    n = pool.n_nodes
    values = np.array([["" if v is None else v for v in pool.labels[k]] for k in keys],
                      dtype=str).reshape(len(keys), n)  # fmt: skip
    missing = np.array([[v is None for v in pool.labels[k]] for k in keys],
                       dtype=bool).reshape(len(keys), n)  # fmt: skip
    arrays = {
        "format": np.array(SNAPSHOT_FORMAT), "version": np.array(1, dtype=np.int64),
        "names": np.array(pool.names, dtype=str), "capacity": pool.capacity,
        "times": times, "reserved": reserved,
        "node_names": np.array(pool.node_names, dtype=str),
        "label_keys": np.array(keys, dtype=str).reshape(len(keys)),
        "label_values": values, "label_missing": missing,
    }  # fmt: skip
    with atomic_output(dst, binary=True) as fh:
        np.savez(fh, **arrays)


def read_pool_snapshot(src: Any) -> ResourcePool:
    """Read a pool written by :func:`write_pool_snapshot` (validated as any pool).

    Parameters
    ----------
    src : str, path-like or binary file object

    Returns
    -------
    ResourcePool
        The same pool: capacities, names, labels and timetables bit for bit.

    Raises
    ------
    InstanceError
        Not a snapshot, an unknown or missing array, a wrong type or shape, or a pool the
        model refuses (the message names the file).
    """
    name = getattr(src, "name", None) or str(src)
    try:
        with np.load(src, allow_pickle=False) as z:
            got = {k: z[k] for k in z.files}
    except (OSError, ValueError, EOFError) as exc:
        raise InstanceError(f"{name}: not a pool snapshot (.npz): {exc}") from None
    if set(got) != _SNAPSHOT_KEYS:
        extra, lack = sorted(set(got) - _SNAPSHOT_KEYS), sorted(_SNAPSHOT_KEYS - set(got))
        raise InstanceError(f"{name}: a pool snapshot has the arrays {sorted(_SNAPSHOT_KEYS)}; "
                            f"unknown {extra}, missing {lack}")  # fmt: skip
    if got["format"].shape != () or str(got["format"]) != SNAPSHOT_FORMAT:
        raise InstanceError(f"{name}: format must be {SNAPSHOT_FORMAT!r}")
    if got["version"].shape != () or got["version"].dtype.kind != "i" or int(got["version"]) != 1:
        raise InstanceError(f"{name}: version must be 1")
    for key in ("capacity", "times", "reserved"):
        if got[key].dtype != np.float64:
            raise InstanceError(f"{name}: {key} must be float64, got {got[key].dtype}")
    for key in ("names", "node_names", "label_keys", "label_values"):
        if got[key].dtype.kind != "U":
            raise InstanceError(f"{name}: {key} must be strings, got {got[key].dtype}")
    keys, values, missing = got["label_keys"], got["label_values"], got["label_missing"]
    n = got["capacity"].shape[0] if got["capacity"].ndim == 2 else -1
    if (keys.ndim != 1 or values.shape != (keys.shape[0], n) or missing.dtype != bool
            or missing.shape != values.shape):  # fmt: skip
        raise InstanceError(f"{name}: label_keys (k,), label_values and label_missing (k, nodes)"
                            " do not agree")  # fmt: skip
    labels = {str(k): [None if missing[q, j] else str(values[q, j]) for j in range(n)]
              for q, k in enumerate(keys.tolist())}  # fmt: skip
    try:
        return ResourcePool(got["capacity"], got["names"].tolist(), got["times"], got["reserved"],
                            labels=labels, node_names=got["node_names"].tolist())  # fmt: skip
    except (TypeError, ValueError) as exc:
        raise InstanceError(f"{name}: {exc}") from None


def read_pool_csv(path: PathOrFile, usage: Optional[PathOrFile] = None,
                  slot_seconds: float = 300.0) -> ResourcePool:  # fmt: skip
    """A pool from CSV: ``node,<property>...,label:<name>...`` (one row per node), and an
    optional usage CSV ``node,property,slot,reserved`` on a grid of ``slot_seconds``.

    Parameters
    ----------
    path : str, path-like or file object
        The nodes' CSV.
    usage : str, path-like or file object, optional
        The reservations' CSV; none: nothing is reserved.
    slot_seconds : float
        Length of a usage slot in seconds.

    Returns
    -------
    ResourcePool
        The pool.

    Raises
    ------
    InstanceError
        An unreadable file, a missing header, or a bad row (named with the file).

    Examples
    --------
    >>> import io
    >>> import coalloc.collective as co
    >>> co.read_pool_csv(io.StringIO("node,cores,ram\\nn0,4,8\\nn1,2,2\\n"))
    ResourcePool(2 nodes, properties ['cores', 'ram'], 1 breakpoints, labels [])
    """
    name = os.fspath(path) if not hasattr(path, "read") else getattr(path, "name", "<csv>")
    try:
        fh = path if hasattr(path, "read") else open(name, newline="", encoding="utf-8")
    except OSError as exc:
        raise InstanceError(f"{name}: cannot read: {exc.strerror or exc}") from None
    try:
        with fh:
            rows = list(csv.reader(fh))
    except UnicodeDecodeError as exc:
        raise InstanceError(f"{name}: not a UTF-8 text file (byte {exc.start})") from None
    except csv.Error as exc:
        raise InstanceError(f"{name}: not a CSV file: {exc}") from None
    if not rows or not rows[0] or rows[0][0].strip() != "node":
        raise InstanceError(f"{name}: the first row must be a header starting with 'node'")
    head = [h.strip() for h in rows[0]]
    props = [h for h in head[1:] if not h.startswith("label:")]
    labs = [h for h in head[1:] if h.startswith("label:")]
    nodes, cap, labels = [], [], {h[6:]: [] for h in labs}
    for r, row in enumerate(rows[1:], start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != len(head):
            raise InstanceError(f"{name}:{r}: {len(row)} fields, header has {len(head)}")
        rec = dict(zip(head, (c.strip() for c in row)))
        nodes.append(rec["node"])
        try:
            cap.append([_text_number(rec[p]) for p in props])
        except ValueError:
            raise InstanceError(f"{name}:{r}: capacities must be numbers") from None
        for h in labs:
            labels[h[6:]].append(rec[h])
    reserved = None
    if usage is not None:
        uname = os.fspath(usage)
        try:
            with open(uname, newline="", encoding="utf-8") as uf:
                urows = list(csv.DictReader(uf))
        except OSError as exc:
            raise InstanceError(f"{uname}: cannot read: {exc.strerror or exc}") from None
        index = {nm: j for j, nm in enumerate(nodes)}
        try:
            slot = [_text_int(u["slot"]) for u in urows]
            if slot and (min(slot) < 0 or max(slot) >= 10**7):
                raise ValueError(
                    f"slot numbers must be in [0, 10**7), got {min(slot)}..{max(slot)}"
                )
            slots = 1 + max(slot) if urows else 0
            reserved = np.zeros((len(nodes), len(props), slots))
            for u, k in zip(urows, slot):
                reserved[index[u["node"]], props.index(u["property"]), k] = _text_number(
                    u["reserved"]
                )
        except (KeyError, ValueError) as exc:
            raise InstanceError(f"{uname}: bad usage row ({exc})") from None
        return _wrap(name, ResourcePool.from_slots, cap, reserved, slot_seconds, props,
                     labels=labels or None, node_names=nodes)  # fmt: skip
    return _wrap(name, ResourcePool, cap, props, labels=labels or None, node_names=nodes)


def request_to_dict(request: CollectiveRequest) -> dict:
    """The request as a ``coalloc.collective.request`` dictionary."""
    return {"format": REQUEST_FORMAT, "version": VERSION, **request.to_dict()}


def request_from_dict(data: Any, *, source: str = "<dict>", root: str = "") -> CollectiveRequest:
    """A request from a parsed dictionary (missing fields take the paper's defaults).

    Raises
    ------
    InstanceError
        ``"<source>: <field path>: <what was expected>"``.
    """
    check_envelope(data, REQUEST_FORMAT, VERSION, f"{source}: {root}" if root else source)
    check(data, REQUEST_SCHEMA, source, root=root)
    return _wrap(source, CollectiveRequest, data["duration"], data["count"],
                 data.get("earliest_start"), data.get("latest_start"), data.get("minimum"),
                 data.get("total"), data.get("labels"))  # fmt: skip


def read_request(src: PathOrFile) -> CollectiveRequest:
    """Read a request file (or the request of an instance file).

    Parameters
    ----------
    src : str, path-like or file object
        A ``coalloc.collective.request`` or ``coalloc.collective.instance`` JSON file.

    Returns
    -------
    CollectiveRequest
        The request (missing fields take the paper's defaults).

    Raises
    ------
    InstanceError
        An unreadable file or a bad field (named with the file).

    Examples
    --------
    >>> import io
    >>> import coalloc.collective as co
    >>> req = co.CollectiveRequest(3600, 2, minimum={"cores": 1, "ram": 1}, total={"ram": 6})
    >>> f = io.StringIO()
    >>> co.write_request(f, req)
    >>> _ = f.seek(0)
    >>> co.read_request(f).count
    2
    """
    data, name = load_json(src)
    if isinstance(data, dict) and data.get("format") == INSTANCE_FORMAT:
        return instance_from_dict(data, source=name)[1]
    return request_from_dict(data, source=name)


def write_request(dst: PathOrFile, request: CollectiveRequest) -> None:
    """Write a request as JSON.

    Parameters
    ----------
    dst : str, path-like or file object
        Where to write (atomically, for a path).
    request : CollectiveRequest
        The request.

    Examples
    --------
    >>> import io
    >>> import coalloc.collective as co
    >>> req = co.CollectiveRequest(3600, 2, minimum={"cores": 1, "ram": 1}, total={"ram": 6})
    >>> f = io.StringIO()
    >>> co.write_request(f, req)
    >>> _ = f.seek(0)
    >>> back = co.read_request(f)
    >>> back.count, back.duration, back.minimum, back.total
    (2, 3600.0, {'cores': 1.0, 'ram': 1.0}, {'ram': 6.0})
    """
    dump_json(request_to_dict(request), dst)


def instance_from_dict(
    data: Any, *, source: str = "<dict>"
) -> Tuple[ResourcePool, CollectiveRequest]:
    """``(pool, request)`` from a parsed ``coalloc.collective.instance`` dictionary."""
    check_envelope(data, INSTANCE_FORMAT, VERSION, source, required=True)
    check(data, INSTANCE_SCHEMA, source)
    pool = pool_from_dict(data["pool"], source=source, root="pool")
    req = request_from_dict(data["request"], source=source, root="request")
    for key in ("minimum", "total"):
        unknown = sorted(set(data["request"].get(key) or {}) - set(pool.names))
        if unknown:  # a contradiction between the two parts of one file
            raise InstanceError(
                f"{source}: {join_path(f'request.{key}', unknown[0])}: not a property of the pool "
                f"(pool.names: {list(pool.names)})"
            )
    return pool, req


def write_instance(dst: PathOrFile, pool: ResourcePool, request: CollectiveRequest) -> None:
    """Write ``(pool, request)`` as one ``coalloc.collective.instance`` file.

    Parameters
    ----------
    dst : str, path-like or file object
        Where to write (atomically, for a path).
    pool : ResourcePool
        The pool.
    request : CollectiveRequest
        The request.

    Examples
    --------
    >>> import io
    >>> import coalloc.collective as co
    >>> pool = co.ResourcePool([[4.0, 8.0], [2.0, 2.0], [1.0, 4.0]], ["cores", "ram"])
    >>> req = co.CollectiveRequest(3600, 2, minimum={"cores": 1, "ram": 1}, total={"ram": 6})
    >>> f = io.StringIO()
    >>> co.write_instance(f, pool, req)
    >>> _ = f.seek(0)
    >>> pool2, req2 = co.read_instance(f)
    >>> pool2.names, req2.duration
    (('cores', 'ram'), 3600.0)
    """
    dump_json({"format": INSTANCE_FORMAT, "version": VERSION, "pool": pool_to_dict(pool),
               "request": request_to_dict(request)}, dst)  # fmt: skip


def read_instance(src: PathOrFile) -> Tuple[ResourcePool, CollectiveRequest]:
    """Read a ``coalloc.collective.instance`` file.

    Parameters
    ----------
    src : str, path-like or file object
        The instance file.

    Returns
    -------
    pool : ResourcePool
        The pool.
    request : CollectiveRequest
        The request.

    Raises
    ------
    InstanceError
        An unreadable file or a bad field (named with the file).

    Examples
    --------
    >>> import io
    >>> import coalloc.collective as co
    >>> pool = co.ResourcePool([[4.0, 8.0], [2.0, 2.0], [1.0, 4.0]], ["cores", "ram"])
    >>> req = co.CollectiveRequest(3600, 2, minimum={"cores": 1, "ram": 1}, total={"ram": 6})
    >>> f = io.StringIO()
    >>> co.write_instance(f, pool, req)
    >>> _ = f.seek(0)
    >>> co.coallocate(*co.read_instance(f)).resources.tolist()
    [1, 2]
    """
    data, name = load_json(src)
    return instance_from_dict(data, source=name)


def write_result(dst: PathOrFile, result: Any, verify: Optional[dict] = None) -> None:
    """Write a result (and an optional verification summary) as JSON.

    Parameters
    ----------
    dst : str, path-like or file object
        Where to write (atomically, for a path).
    result : CoallocationResult
        The result of any method.
    verify : dict, optional
        A verification summary stored under ``"verify"``.

    Examples
    --------
    >>> import io, json
    >>> import coalloc.collective as co
    >>> pool = co.ResourcePool([[4.0, 8.0], [2.0, 2.0], [1.0, 4.0]], ["cores", "ram"])
    >>> req = co.CollectiveRequest(3600, 2, minimum={"cores": 1, "ram": 1}, total={"ram": 6})
    >>> result = co.coallocate(pool, req)
    >>> f = io.StringIO()
    >>> co.write_result(f, result, verify=co.verify(req, pool, result).to_dict())
    >>> data = json.loads(f.getvalue())
    >>> data["format"], data["start"], data["resources"], data["verify"]["admissible"]
    ('coalloc.collective.result', 0.0, [1, 2], True)
    """
    out = {"format": RESULT_FORMAT, "version": VERSION, **result.to_dict()}
    if verify is not None:
        out["verify"] = verify
    dump_json(out, dst)


def read_workload(src: PathOrFile) -> List[Tuple[float, CollectiveRequest]]:
    """``[(arrival, request), ...]`` from a ``coalloc.collective.workload`` JSON file.

    Parameters
    ----------
    src : str, path-like or file object
        The workload file: ``requests``, each a request with an optional ``arrival``.

    Returns
    -------
    list of (float, CollectiveRequest)
        The requests by arrival time. The paper's ``t_e`` is the submission time, so a
        request with an ``arrival`` and no ``earliest_start`` gets ``t_e`` = its arrival and,
        without ``latest_start``, ``t_l = t_e + t_C`` (:data:`DEFAULT_HORIZON`), the window
        :func:`swf_requests` gives an SWF job; without an ``arrival`` it arrives at its
        ``earliest_start``. Explicit fields are kept as written.

    Raises
    ------
    InstanceError
        An unreadable file, a bad request or a negative arrival (named with the file).

    Examples
    --------
    >>> import io
    >>> import coalloc.collective as co
    >>> text = ('{"format": "coalloc.collective.workload", "version": 1, "requests": ['
    ...         '{"arrival": 60, "duration": 600, "count": 1}, {"duration": 300, "count": 2}]}')
    >>> [(t, r.count, r.earliest_start, r.latest_start)
    ...  for t, r in co.read_workload(io.StringIO(text))]
    [(0.0, 2, 0.0, 86400.0), (60.0, 1, 60.0, 86460.0)]
    """
    data, name = load_json(src)
    check_envelope(data, WORKLOAD_FORMAT, VERSION, name)
    check(data, WORKLOAD_SCHEMA, name)
    out = []
    for q, item in enumerate(data["requests"]):
        if item.get("arrival") is not None and item.get("earliest_start") is None:
            item = {**item, "earliest_start": item["arrival"]}  # t_e = the submission time
        req = request_from_dict(item, source=name, root=f"requests[{q}]")
        out.append((float(item.get("arrival", req.earliest_start)), req))
    return sorted(out, key=lambda x: x[0])


def read_swf(src: PathOrFile) -> np.ndarray:
    """The jobs of a Standard Workload Format file as a float array (jobs x 18).

    Lines starting with ``;`` are header comments; every other non-empty line must have 18
    white-space separated numeric fields (``-1`` = unknown).

    Parameters
    ----------
    src : str, path-like or file object
        The SWF trace.

    Returns
    -------
    ndarray of float64, shape (jobs, 18)
        One row per job, the SWF fields in order.

    Raises
    ------
    InstanceError
        On a line with the wrong number of fields or a non-numeric field (with its number).

    Examples
    --------
    >>> import io
    >>> import coalloc.collective as co
    >>> swf = io.StringIO("; a header comment\\n"
    ...                   "1 0 5 3600 4 -1 -1 4 7200 -1 1 1 1 1 1 -1 -1 -1\\n"
    ...                   "2 60 0 1800 2 -1 -1 2 3600 -1 1 1 1 1 1 -1 -1 -1\\n")
    >>> jobs = co.read_swf(swf)
    >>> jobs.shape, jobs[:, 1].tolist()
    ((2, 18), [0.0, 60.0])
    """
    text, name = read_text(src)
    rows = []
    for ln, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if not s or s.startswith(";"):
            continue
        parts = s.split()
        if len(parts) != 18:
            raise InstanceError(f"{name}:{ln}: expected 18 SWF fields, got {len(parts)}")
        # float() also reads "1_0" and other scripts' digits; an ASCII line without "_" holds
        # only what float() reads as decimal or as inf/nan (refused below): the slow, exact
        # check only where the line could hold something else
        plain = s.isascii() and "_" not in s
        bad = (
            None
            if plain
            else next((k for k, x in enumerate(parts) if not _DECIMAL.fullmatch(x)), None)
        )
        if bad is None:
            try:
                row = [float(x) for x in parts]
            except ValueError:
                bad = next(k for k, x in enumerate(parts) if not _DECIMAL.fullmatch(x))
        if bad is not None:
            raise InstanceError(
                f"{name}:{ln}: SWF field {bad + 1} must be a finite number in ASCII decimal "
                f"digits, got {parts[bad]!r}"
            )
        bad = next((k for k, x in enumerate(row) if not math.isfinite(x)), None)
        if bad is not None:
            raise InstanceError(
                f"{name}:{ln}: SWF field {bad + 1} must be a finite number, got {parts[bad]!r}"
            )
        rows.append(row)
    return np.array(rows, dtype=np.float64).reshape(-1, 18)


def swf_requests(
    jobs: np.ndarray,
    *,
    procs_property: Optional[str] = "cores",
    memory_property: Optional[str] = None,
    procs_per_node: float = 1.0,
    max_wait: float = 86400.0,
    collective: bool = True,
    time_offset: Optional[float] = None,
    source: Optional[str] = None,
) -> List[Tuple[float, CollectiveRequest]]:
    """Turn SWF jobs into ``(arrival, request)`` pairs (the mapping of ``coalloc docs collective``).

    * arrival = ``t_e`` = submit time (field 2) minus ``time_offset`` (default: the first
      submit time), ``t_l = t_e + max_wait``;
    * duration = run time (field 4), else requested time (field 9); jobs with neither are
      skipped;
    * processors ``P`` = requested (field 8), else allocated (field 5); skipped if unknown;
    * ``N = ceil(P / procs_per_node)`` resources; a total of ``P`` of ``procs_property``
      (collective) or ``P / N`` on each (simple);
    * with ``memory_property`` and a known memory per processor (field 10 requested, else
      field 7 used, KB): a total of ``P * memory`` in GB.

    Parameters
    ----------
    jobs : ndarray, shape (jobs, 18)
        SWF jobs, as :func:`read_swf` returns them.
    procs_property : str or None
        The property that counts processors (None: none).
    memory_property : str, optional
        The property that counts memory in GB (None: memory is ignored).
    procs_per_node : float
        Processors of one resource (finite, > 0).
    max_wait : float
        Seconds a job may wait (finite, >= 0): the start window is ``[t_e, t_e + max_wait]``.
    collective : bool
        Collective requests (a total over the resources) or simple ones (per resource).
    time_offset : float, optional
        Subtracted from the submit times (default: the first submit time).
    source : str, optional
        The trace's file name, for error messages (``"<file>: SWF job <id>: ..."``).

    Returns
    -------
    list of (float, CollectiveRequest)
        ``(arrival, request)`` per usable job, in the order of ``jobs``.

    Raises
    ------
    ValueError
        A job whose numbers give no valid request (for instance a memory so large that the
        total overflows), naming the job (and ``source``); an argument out of range, naming
        it.

    Examples
    --------
    >>> import io
    >>> import coalloc.collective as co
    >>> jobs = co.read_swf(io.StringIO("1 0 5 3600 4 -1 -1 4 7200 -1 1 1 1 1 1 -1 -1 -1\\n"))
    >>> [(t, r.count, r.duration) for t, r in co.swf_requests(jobs, procs_per_node=2)]
    [(0.0, 2, 3600.0)]
    """
    jobs = np.asarray(jobs, dtype=np.float64)
    if jobs.ndim != 2 or jobs.shape[1] != 18:
        raise ValueError(f"jobs must have shape (jobs, 18), got {jobs.shape}")
    if not np.all(np.isfinite(jobs)):
        raise ValueError("jobs must hold finite numbers")
    for argname, value in (("procs_per_node", procs_per_node), ("max_wait", max_wait),
                           ("time_offset", time_offset)):  # fmt: skip
        if value is None and argname == "time_offset":
            continue
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
            raise TypeError(f"{argname} must be a number, got {type(value).__name__}")
        if not math.isfinite(float(value)):
            raise ValueError(f"{argname} must be a finite number, got {value!r}")
    if not procs_per_node > 0:
        raise ValueError(f"procs_per_node must be > 0, got {procs_per_node!r}")
    if not max_wait >= 0:
        raise ValueError(f"max_wait must be >= 0 seconds, got {max_wait!r}")
    for argname, value in (("procs_property", procs_property),
                           ("memory_property", memory_property)):  # fmt: skip
        if value is not None and not (isinstance(value, str) and value):
            raise TypeError(f"{argname} must be a property name or None, got {value!r}")
    out = []
    if jobs.shape[0] == 0:
        return out
    t0 = float(jobs[:, 1].min()) if time_offset is None else float(time_offset)
    for row in jobs:
        dur = row[3] if row[3] > 0 else row[8]
        procs = row[7] if row[7] > 0 else row[4]
        if dur <= 0 or procs <= 0:
            continue
        where = f"{source + ': ' if source else ''}SWF job {row[0]:g}"
        if procs / procs_per_node > 2**31 - 1:  # a count numpy's int64 arrays and we can hold
            raise ValueError(f"{where}: {procs:g} processors need more than 2**31 - 1 "
                             f"resources of {procs_per_node:g}")  # fmt: skip
        n = max(1, int(math.ceil(procs / procs_per_node)))
        te = max(0.0, float(row[1]) - t0)
        minimum, total = {}, {}
        if procs_property:
            if collective:
                total[procs_property] = float(procs)
                minimum[procs_property] = float(procs) / (2 * n)
            else:
                minimum[procs_property] = float(procs) / n
        mem = row[9] if row[9] > 0 else row[6]
        if memory_property and mem > 0:
            gb = float(procs) * float(mem) / 1048576.0
            if not math.isfinite(gb):
                raise ValueError(f"{where}: {procs:g} processors x {mem:g} KB of memory is not "
                                 f"a finite amount of memory")  # fmt: skip
            if collective:
                total[memory_property] = gb
                minimum[memory_property] = gb / (2 * n)
            else:
                minimum[memory_property] = gb / n
        try:
            req = CollectiveRequest(float(dur), n, te, te + max_wait, minimum, total or None)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc}") from None
        out.append((te, req))
    return out
