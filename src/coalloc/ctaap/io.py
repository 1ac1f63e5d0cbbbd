"""Reading and writing instances and results as JSON (format in ``coalloc docs formats``)."""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np
import scipy.sparse as sp

from .._shared.constraints import checked
from .._shared.docs import filled
from .._shared.jsonio import (
    InstanceError,
    PathOrFile,
    check_envelope,
    dump_json,
    get_key,
    load_json,
    num,
    vec,
)
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
    TupleOf,
    check,
)
from .._shared.validation import check_memory
from .model import MAX_CAPACITY, Offer, Request
from .result import SolveResult
from .verify import VerifyReport

__all__ = [
    "InstanceError",
    "read_instance",
    "write_instance",
    "instance_to_dict",
    "instance_from_dict",
    "write_result",
    "read_result",
]

INSTANCE_FORMAT = "coalloc.instance"
RESULT_FORMAT = "coalloc.result"
VERSION = 1


@filled
@checked("coalloc.ctaap.constraints", "instance_to_dict", tables="FUNCTIONS")
def instance_to_dict(
    request: Request,
    offer: Offer,
    *,
    bandwidth_format: str = "auto",
    metadata: Optional[dict] = None,
) -> dict:
    """Convert an instance to its JSON-ready dictionary.

    Parameters
    ----------
    %(ctaap_pair)s
    bandwidth_format : {"auto", "dense", "edges"}
        How to store the request bandwidth: a dense ``n x n`` list, or an edge list
        (``"auto"``: edges when fewer than half of the pairs communicate).
    metadata : dict, optional
        Free-form information stored under ``"metadata"``.

    Returns
    -------
    dict
        The ``coalloc.instance`` dictionary (``coalloc docs formats``).

    Raises
    ------
    ValueError
        An unknown ``bandwidth_format``.

    Examples
    --------
    >>> import coalloc.ctaap as ct
    >>> request = ct.Request({"cpu": [10, 20, 30]}, bandwidth=[[0, 5, 0], [5, 0, 2], [0, 2, 0]])
    >>> offer = ct.Offer({"cpu": [25, 40]}, capacity=[1, 2], bandwidth=[[4, 3], [3, 6]])
    >>> data = ct.instance_to_dict(request, offer)
    >>> data["format"], data["offer"]["capacity"], data["request"]["properties"]
    ('coalloc.instance', [1, 2], {'cpu': [10, 20, 30]})
    """
    n = request.n
    B = request.bandwidth
    if bandwidth_format == "auto":
        bandwidth_format = "edges" if B.nnz < 0.5 * n * max(n - 1, 1) else "dense"
    if bandwidth_format == "dense":
        bw: Any = [[num(v) for v in row] for row in B.toarray().tolist()]
    else:
        coo = B.tocoo()
        rows, cols, vals = coo.row, coo.col, coo.data
        if request.symmetric:
            keep = rows < cols
            rows, cols, vals = rows[keep], cols[keep], vals[keep]
        order = np.lexsort((cols, rows))
        bw = {
            "symmetric": bool(request.symmetric),
            "edges": [
                [int(i), int(k), num(b)]
                for i, k, b in zip(rows[order].tolist(), cols[order].tolist(), vals[order].tolist())
            ],
        }
    out = {
        "format": INSTANCE_FORMAT,
        "version": VERSION,
        "request": {
            "n_tasks": n,
            "properties": {k: vec(v) for k, v in request.properties.items()},
            "bandwidth": bw,
        },
        "offer": {
            "properties": {k: vec(v) for k, v in offer.properties.items()},
            "capacity": [int(c) for c in offer.capacity.tolist()],
            "bandwidth": [[num(v) for v in row] for row in offer.bandwidth.tolist()],
        },
    }
    for key, model in (("request", request), ("offer", offer)):
        if model.names is not None:
            out[key]["names"] = list(model.names)
    if metadata:
        out["metadata"] = metadata
    return out


#: Most tasks a request file may declare (task indices are int64; memory is checked too).
MAX_TASKS = 2**40

_VALUES = ListOf(Num(0))
#: Task or cluster names: strings or integers (distinct; checked by the model).
_NAMES = ListOf(OneOf((str, Str()), (int, Int())))
_MATRIX = ListOf(ListOf(Num(0)))
_EDGE_LIST = Obj(
    {
        "symmetric": (Bool(), False),
        "edges": (ListOf(TupleOf(Int(0, MAX_TASKS), Int(0, MAX_TASKS), Num(0))), True),
        "n_tasks": (Int(0, MAX_TASKS), False),
    }
)
#: The instance format, checked strictly: unknown keys, wrong types and out-of-range
#: values are errors naming the file and the field (``coalloc docs formats``).
INSTANCE_SCHEMA = Obj(
    {
        "format": (AnyValue(), False),
        "version": (AnyValue(), False),
        "request": (
            Obj(
                {
                    "n_tasks": (Int(0, MAX_TASKS), False),
                    "properties": (MapOf(_VALUES), False),
                    "bandwidth": (OneOf((list, _MATRIX), (dict, _EDGE_LIST)), False),
                    "names": (_NAMES, False),
                }
            ),
            True,
        ),
        "offer": (
            Obj(
                {
                    "properties": (MapOf(_VALUES), False),
                    "capacity": (ListOf(Int(0, MAX_CAPACITY)), True),
                    "bandwidth": (_MATRIX, False),
                    "names": (_NAMES, False),
                }
            ),
            True,
        ),
        "metadata": (AnyValue(), False),
    }
)


def _request_bandwidth(bw: Any, n: Optional[int], where: str):
    if bw is None:
        return None
    if isinstance(bw, list):
        return bw if bw else np.zeros((0, 0))  # the dense matrix of an empty request
    n_edges = bw.get("n_tasks")
    if n is not None and n_edges is not None and n != n_edges:
        raise InstanceError(f"{where}.n_tasks is {n_edges} but request.n_tasks is {n}")
    n = n if n is not None else n_edges
    if n is None:
        raise InstanceError(f"{where}: an edge list needs request.n_tasks")
    edges = bw["edges"]
    symmetric = bw.get("symmetric", False)
    check_memory(3 * 8 * (n + 1) + 64 * len(edges), f"a request of {n} tasks")
    first = {}
    for j, (i, k, _) in enumerate(edges):
        if i >= n or k >= n:
            raise InstanceError(
                f"{where}.edges[{j}]: task index {max(i, k)} is not in [0, {n}) "
                f"(request.n_tasks is {n})"
            )
        key = (min(i, k), max(i, k)) if symmetric else (i, k)
        if key in first:
            what = "the pair" if symmetric else "the edge"
            both = " (a symmetric edge list gives each pair once)" if symmetric else ""
            raise InstanceError(
                f"{where}.edges[{j}] = {list(edges[j])} repeats {what} {list(key)} of "
                f"edges[{first[key]}]{both}"
            )
        first[key] = j
    arr = np.array([e[2] for e in edges], dtype=np.float64)
    i = np.array([e[0] for e in edges], dtype=np.int64)
    k = np.array([e[1] for e in edges], dtype=np.int64)
    if symmetric:
        i, k, arr = np.concatenate([i, k]), np.concatenate([k, i]), np.concatenate([arr, arr])
    return sp.csr_array((arr, (i, k)), shape=(n, n))


@filled
def instance_from_dict(data: Any, *, source: str = "instance") -> Tuple[Request, Offer]:
    """Build ``(Request, Offer)`` from a dictionary in the instance format.

    Parameters
    ----------
    data : dict
        Parsed JSON.
    source : str
        Name used in error messages (e.g. the file name).

    Returns
    -------
    %(ctaap_graphs)s

    Raises
    ------
    InstanceError
        With a message naming the offending field.

    Examples
    --------
    >>> import coalloc.ctaap as ct
    >>> request = ct.Request({"cpu": [10, 20, 30]}, bandwidth=[[0, 5, 0], [5, 0, 2], [0, 2, 0]])
    >>> offer = ct.Offer({"cpu": [25, 40]}, capacity=[1, 2], bandwidth=[[4, 3], [3, 6]])
    >>> request2, offer2 = ct.instance_from_dict(ct.instance_to_dict(request, offer))
    >>> request2, offer2
    (Request(n=3, properties=['cpu'], edges=4, symmetric=True),
     Offer(m=2, properties=['cpu'], machines=3))
    """
    check_envelope(data, INSTANCE_FORMAT, VERSION, source)
    check(data, INSTANCE_SCHEMA, source)
    req = data["request"]
    off = data["offer"]
    n = req.get("n_tasks")
    for name, values in (req.get("properties") or {}).items():
        if n is not None and len(values) != n:
            raise InstanceError(
                f"{source}: request.properties.{name} has {len(values)} values but "
                f"request.n_tasks is {n}"
            )
    try:
        bw = _request_bandwidth(req.get("bandwidth"), n, f"{source}: request.bandwidth")
        request = Request(get_key(req, "properties", f"{source}: request", required=False), bw,
                          names=req.get("names"))  # fmt: skip
    except InstanceError:
        raise
    except (TypeError, ValueError) as exc:
        raise InstanceError(f"{source}: request: {exc}") from None
    if n is not None and n != request.n:
        raise InstanceError(f"{source}: request.n_tasks is {n} but the data has {request.n} tasks")
    try:
        offer = Offer(
            get_key(off, "properties", f"{source}: offer", required=False),
            get_key(off, "capacity", f"{source}: offer"),
            off.get("bandwidth"),
            names=off.get("names"),
        )
    except InstanceError:
        raise
    except (TypeError, ValueError) as exc:
        raise InstanceError(f"{source}: offer: {exc}") from None
    if set(request.properties) != set(offer.properties):
        raise InstanceError(
            f"{source}: request and offer property names differ: "
            f"{sorted(request.properties)} vs {sorted(offer.properties)}"
        )
    return request, offer


@filled
def read_instance(src: PathOrFile) -> Tuple[Request, Offer]:
    """Read an instance file (JSON, see ``coalloc docs formats``).

    Parameters
    ----------
    src : path or file object
        The ``coalloc.instance`` JSON file.

    Returns
    -------
    %(ctaap_graphs)s

    Raises
    ------
    InstanceError
        When the file cannot be read or is not a valid instance; the message names the file
        and the field.

    Examples
    --------
    >>> import io
    >>> import coalloc.ctaap as ct
    >>> request = ct.Request({"cpu": [10, 20, 30]}, bandwidth=[[0, 5, 0], [5, 0, 2], [0, 2, 0]])
    >>> offer = ct.Offer({"cpu": [25, 40]}, capacity=[1, 2], bandwidth=[[4, 3], [3, 6]])
    >>> f = io.StringIO()
    >>> ct.write_instance(f, request, offer)
    >>> _ = f.seek(0)
    >>> request2, offer2 = ct.read_instance(f)
    >>> request2.n, offer2.capacity.tolist()
    (3, [1, 2])
    """
    data, name = load_json(src)
    return instance_from_dict(data, source=name)


@filled
def write_instance(
    dst: PathOrFile,
    request: Request,
    offer: Offer,
    *,
    bandwidth_format: str = "auto",
    metadata: Optional[dict] = None,
) -> None:
    """Write an instance as JSON.

    Parameters
    ----------
    dst : path or file object
        Where to write (atomically, for a path).
    %(ctaap_graphs)s
    bandwidth_format : {"auto", "dense", "edges"}
        See :func:`instance_to_dict`.
    metadata : dict, optional
        Free-form information to store with the instance.

    Examples
    --------
    >>> import json
    >>> import io
    >>> import coalloc.ctaap as ct
    >>> request = ct.Request({"cpu": [10, 20, 30]}, bandwidth=[[0, 5, 0], [5, 0, 2], [0, 2, 0]])
    >>> offer = ct.Offer({"cpu": [25, 40]}, capacity=[1, 2], bandwidth=[[4, 3], [3, 6]])
    >>> f = io.StringIO()
    >>> ct.write_instance(f, request, offer, metadata={"name": "three tasks"})
    >>> json.loads(f.getvalue())["metadata"]
    {'name': 'three tasks'}
    """
    dump_json(
        instance_to_dict(request, offer, bandwidth_format=bandwidth_format, metadata=metadata), dst
    )


def write_result(
    dst: PathOrFile, result: SolveResult, report: Optional[VerifyReport] = None
) -> None:
    """Write a solver result (and optionally its verification) as JSON.

    Parameters
    ----------
    dst : path or file object
        Where to write (atomically, for a path).
    result : SolveResult
        The result of any method.
    report : VerifyReport, optional
        Stored under ``"verify"``.

    Examples
    --------
    >>> import io
    >>> import coalloc.ctaap as ct
    >>> request = ct.Request({"cpu": [10, 20, 30]}, bandwidth=[[0, 5, 0], [5, 0, 2], [0, 2, 0]])
    >>> offer = ct.Offer({"cpu": [25, 40]}, capacity=[1, 2], bandwidth=[[4, 3], [3, 6]])
    >>> result = ct.solve(request, offer, seed=0)
    >>> f = io.StringIO()
    >>> ct.write_result(f, result, ct.verify(request, offer, result.assignment))
    >>> _ = f.seek(0)
    >>> data = ct.read_result(f)
    >>> data["assignment"].tolist(), data["n_allocated"], data["verify"]["feasible"]
    ([-1, 1, 1], 2, True)
    """
    out = {"format": RESULT_FORMAT, "version": VERSION, **result.to_dict()}
    if report is not None:
        out["verify"] = report.to_dict()
    dump_json(out, dst)


def read_result(src: PathOrFile) -> dict:
    """Read a result file written by :func:`write_result`.

    Parameters
    ----------
    src : path or file object
        The ``coalloc.result`` JSON file.

    Returns
    -------
    dict
        The parsed result, with ``"assignment"`` as an int64 array.

    Raises
    ------
    InstanceError
        Not a result file, or an assignment that is not a list of integers.

    Examples
    --------
    >>> import io
    >>> import coalloc.ctaap as ct
    >>> request = ct.Request({"cpu": [10, 20, 30]}, bandwidth=[[0, 5, 0], [5, 0, 2], [0, 2, 0]])
    >>> offer = ct.Offer({"cpu": [25, 40]}, capacity=[1, 2], bandwidth=[[4, 3], [3, 6]])
    >>> f = io.StringIO()
    >>> ct.write_result(f, ct.solve(request, offer, method="greedy"))
    >>> _ = f.seek(0)
    >>> data = ct.read_result(f)
    >>> data["method"], data["assignment"].tolist()
    ('greedy', [0, -1, 1])
    """
    data, name = load_json(src)
    if not isinstance(data, dict) or data.get("format") != RESULT_FORMAT:
        raise InstanceError(f"{name}: not a coalloc result file (format {RESULT_FORMAT!r})")
    values = data.get("assignment")
    if not isinstance(values, list):
        raise InstanceError(f"{name}: assignment must be a list of integers (cluster or -1)")
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, int):
            raise InstanceError(
                f"{name}: assignment[{i}] = {v!r} is not an integer cluster index (or -1)"
            )
        if not -1 <= v < 2**62:
            raise InstanceError(f"{name}: assignment[{i}] = {v} is out of range")
    data["assignment"] = np.asarray(values, dtype=np.int64).reshape(len(values))
    for key in ("n_tasks", "n_allocated"):
        v = data.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            raise InstanceError(f"{name}: {key} must be a non-negative integer, got {v!r}")
    return data
