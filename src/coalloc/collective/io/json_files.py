"""The family's JSON documents: pool, request, instance and result (``coalloc docs collective``).

* ``coalloc.collective.pool``: ``names``, ``capacity`` (nodes x properties), optional
  ``node_names``, ``labels`` (name -> one value per node) and either ``times`` + ``reserved``
  (nodes x properties x breakpoints) or ``slot_seconds`` + ``slots`` (nodes x properties x
  slots, a dense grid such as 5-minute usage logs).
* ``coalloc.collective.request``: the fields of :class:`CollectiveRequest`.
* ``coalloc.collective.instance``: ``{"pool": {...}, "request": {...}}``.
* ``coalloc.collective.result``: ``result.to_dict()`` and an optional ``verify``.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Tuple

import numpy as np

from ..._shared.docs import filled
from ..._shared.jsonio import (
    InstanceError,
    PathOrFile,
    check_envelope,
    dump_json,
    load_json,
)
from ..._shared.result import jsonable
from ..._shared.schema import (
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
from ..model import CollectiveRequest, ResourcePool
from ._common import wrap
from .csv_files import read_pool_csv

__all__ = [
    "pool_to_dict", "pool_from_dict", "read_pool", "write_pool", "request_to_dict",
    "request_from_dict", "read_request", "write_request", "instance_from_dict",
    "write_instance", "read_instance", "write_result",
]  # fmt: skip

POOL_FORMAT = "coalloc.collective.pool"
REQUEST_FORMAT = "coalloc.collective.request"
INSTANCE_FORMAT = "coalloc.collective.instance"
RESULT_FORMAT = "coalloc.collective.result"
VERSION = 1


#: Most nodes a request may ask for (counts are range-checked before any conversion).
MAX_COUNT = 2**31 - 1


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


def pool_to_dict(pool: ResourcePool) -> dict:
    """The pool as a ``coalloc.collective.pool`` dictionary.

    Parameters
    ----------
    pool : ResourcePool
        The pool, timetables included.

    Returns
    -------
    dict
        JSON-ready: the envelope, ``names``, ``node_names``, ``capacity``, ``labels``,
        ``times`` and ``reserved``.

    Examples
    --------
    >>> import coalloc.collective as co
    >>> from coalloc.collective.io import pool_to_dict
    >>> pool_to_dict(co.ResourcePool([[4.0], [2.0]], ["cores"]))["capacity"]
    [[4], [2]]
    """
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
        The parsed document (or the ``pool`` part of an instance).
    source : str
        The file name, first in every message.
    root : str, optional
        The path of ``data`` in its document (``"pool"`` in an instance file).

    Returns
    -------
    ResourcePool
        The pool, validated by the model.

    Raises
    ------
    InstanceError
        On a malformed dictionary: ``"<source>: <field path>: <what was expected>"``.

    Examples
    --------
    >>> from coalloc.collective.io import pool_from_dict
    >>> pool_from_dict({"names": ["cores"], "capacity": [[4], [2]]}).n_nodes
    2
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
        return wrap(source, ResourcePool.from_slots, cap_arr, slots, data["slot_seconds"], names,
                     labels=data.get("labels"), node_names=data.get("node_names"),
                     clip=data.get("clip", False))  # fmt: skip
    if "slot_seconds" in data:
        raise InstanceError(f"{source}: {at}slot_seconds: only allowed with slots")
    times = data.get("times")
    reserved = data.get("reserved")
    if reserved is not None:
        k = 1 if times is None else len(times)
        reserved = _grid(reserved, n, m, k, f"{at}reserved", source)
    return wrap(source, ResourcePool, cap_arr, names, times, reserved, labels=data.get("labels"),
                 node_names=data.get("node_names"), clip=data.get("clip", False))  # fmt: skip


def _read_part(src: PathOrFile, part: int, from_dict: Callable[..., Any]) -> Any:
    """What ``from_dict`` reads from the JSON file ``src``, or part ``part`` (0: the pool, 1:
    the request) of an instance file: either file stands for a pool or a request."""
    data, name = load_json(src)
    if isinstance(data, dict) and data.get("format") == INSTANCE_FORMAT:
        return instance_from_dict(data, source=name)[part]
    return from_dict(data, source=name)


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
    return _read_part(src, 0, pool_from_dict)


@filled
def write_pool(dst: PathOrFile, pool: ResourcePool) -> None:
    """Write a pool as JSON.

    Parameters
    ----------
    %(write_dst)s
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


def request_to_dict(request: CollectiveRequest) -> dict:
    """The request as a ``coalloc.collective.request`` dictionary.

    Parameters
    ----------
    request : CollectiveRequest
        The request.

    Returns
    -------
    dict
        JSON-ready: the envelope and the fields of :meth:`CollectiveRequest.to_dict`.

    Examples
    --------
    >>> import coalloc.collective as co
    >>> from coalloc.collective.io import request_to_dict
    >>> request_to_dict(co.CollectiveRequest(600, 2))["count"]
    2
    """
    return {"format": REQUEST_FORMAT, "version": VERSION, **request.to_dict()}


def request_from_dict(data: Any, *, source: str = "<dict>", root: str = "") -> CollectiveRequest:
    """A request from a parsed dictionary (missing fields take the paper's defaults).

    Parameters
    ----------
    data : dict
        The parsed document (a request file, an instance's ``request``, a workload item).
    source : str
        The file name, first in every message.
    root : str, optional
        The path of ``data`` in its document (``"request"`` in an instance file).

    Returns
    -------
    CollectiveRequest
        The request, validated by the model.

    Raises
    ------
    InstanceError
        ``"<source>: <field path>: <what was expected>"``.

    Examples
    --------
    >>> from coalloc.collective.io import request_from_dict
    >>> request_from_dict({"duration": 600, "count": 2}).latest_start
    86400.0
    """
    check_envelope(data, REQUEST_FORMAT, VERSION, f"{source}: {root}" if root else source)
    check(data, REQUEST_SCHEMA, source, root=root)
    return wrap(source, CollectiveRequest, data["duration"], data["count"],
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
    return _read_part(src, 1, request_from_dict)


@filled
def write_request(dst: PathOrFile, request: CollectiveRequest) -> None:
    """Write a request as JSON.

    Parameters
    ----------
    %(write_dst)s
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
    """``(pool, request)`` from a parsed ``coalloc.collective.instance`` dictionary.

    Parameters
    ----------
    data : dict
        The parsed instance document.
    source : str
        The file name, first in every message.

    Returns
    -------
    pool : ResourcePool
        The pool.
    request : CollectiveRequest
        The request, naming only properties of the pool.

    Raises
    ------
    InstanceError
        A malformed part, or a request naming a property the pool does not have.

    Examples
    --------
    >>> from coalloc.collective.io import instance_from_dict
    >>> pool, req = instance_from_dict({"format": "coalloc.collective.instance", "version": 1,
    ...     "pool": {"names": ["cores"], "capacity": [[4]]},
    ...     "request": {"duration": 60, "count": 1}})
    >>> pool.names, req.count
    (('cores',), 1)
    """
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


@filled
def write_instance(dst: PathOrFile, pool: ResourcePool, request: CollectiveRequest) -> None:
    """Write ``(pool, request)`` as one ``coalloc.collective.instance`` file.

    Parameters
    ----------
    %(write_dst)s
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


@filled
def write_result(dst: PathOrFile, result: Any, verify: Optional[dict] = None) -> None:
    """Write a result (and an optional verification summary) as JSON.

    Parameters
    ----------
    %(write_dst)s
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
