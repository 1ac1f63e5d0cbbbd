"""Reading and writing instances and results as JSON (format in docs/formats.md)."""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np
import scipy.sparse as sp

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
from .model import Offer, Request
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
    request : Request
    offer : Offer
    bandwidth_format : {"auto", "dense", "edges"}
        How to store the request bandwidth: a dense ``n x n`` list, or an edge list
        (``"auto"``: edges when fewer than half of the pairs communicate).
    metadata : dict, optional
        Free-form information stored under ``"metadata"``.

    Returns
    -------
    dict
    """
    if bandwidth_format not in ("auto", "dense", "edges"):
        raise ValueError(f"bandwidth_format must be auto, dense or edges, got {bandwidth_format!r}")
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
    if metadata:
        out["metadata"] = metadata
    return out




def _request_bandwidth(bw: Any, n: Optional[int], where: str):
    if bw is None:
        return None
    if isinstance(bw, list):
        return bw
    if isinstance(bw, dict):
        edges = get_key(bw, "edges", where)
        symmetric = bool(bw.get("symmetric", False))
        if n is None:
            n = bw.get("n_tasks")
        if n is None:
            raise InstanceError(f"{where}: an edge list needs request.n_tasks")
        try:
            arr = np.asarray(edges, dtype=np.float64).reshape(-1, 3)
        except (TypeError, ValueError):
            raise InstanceError(f"{where}.edges: expected a list of [i, k, bandwidth]") from None
        idx = arr[:, :2]
        if np.any(idx != np.round(idx)) or np.any(idx < 0) or np.any(idx >= n):
            raise InstanceError(f"{where}.edges: task indices must be integers in [0, {n})")
        i, k, b = idx[:, 0].astype(np.int64), idx[:, 1].astype(np.int64), arr[:, 2]
        if symmetric:
            i, k, b = np.concatenate([i, k]), np.concatenate([k, i]), np.concatenate([b, b])
        return sp.csr_array((b, (i, k)), shape=(n, n))
    raise InstanceError(f"{where}: expected a matrix (list of rows) or an edge-list object")


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
    (Request, Offer)

    Raises
    ------
    InstanceError
        With a message naming the offending field.
    """
    check_envelope(data, INSTANCE_FORMAT, VERSION, source)
    req = get_key(data, "request", source)
    off = get_key(data, "offer", source)
    n = get_key(req, "n_tasks", f"{source}: request", required=False)
    try:
        bw = _request_bandwidth(req.get("bandwidth"), n, f"{source}: request.bandwidth")
        request = Request(get_key(req, "properties", f"{source}: request", required=False), bw)
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




def read_instance(src: PathOrFile) -> Tuple[Request, Offer]:
    """Read an instance file (JSON, see docs/formats.md).

    Parameters
    ----------
    src : path or file object

    Returns
    -------
    (Request, Offer)

    Raises
    ------
    InstanceError
        When the file cannot be read or is not a valid instance; the message names the file
        and the field.
    """
    data, name = load_json(src)
    return instance_from_dict(data, source=name)




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
    request : Request
    offer : Offer
    bandwidth_format : {"auto", "dense", "edges"}
        See :func:`instance_to_dict`.
    metadata : dict, optional
        Free-form information to store with the instance.
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
    result : SolveResult
    report : VerifyReport, optional
        Stored under ``"verify"``.
    """
    out = {"format": RESULT_FORMAT, "version": VERSION, **result.to_dict()}
    if report is not None:
        out["verify"] = report.to_dict()
    dump_json(out, dst)


def read_result(src: PathOrFile) -> dict:
    """Read a result file written by :func:`write_result`.

    Returns
    -------
    dict
        The parsed result, with ``"assignment"`` as an int64 array.
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
