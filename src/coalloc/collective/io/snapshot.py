"""The pool snapshot (``coalloc.collective.pool-snapshot``): a pool saved exactly and compactly
as a NumPy ``.npz`` archive, for ledgers too large for JSON."""

from __future__ import annotations

import os
import struct
import zipfile
import zlib
from typing import Any

import numpy as np

from ..._shared.jsonio import InstanceError, atomic_output
from ..model import ResourcePool

__all__ = ["write_pool_snapshot", "read_pool_snapshot", "SNAPSHOT_FORMAT"]

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
        Not a snapshot (a file that is not an ``.npz`` archive, or a corrupted, truncated
        one, or one with a member twice), an unknown or missing array, a wrong type or
        shape, or a pool the model refuses (the message names the file).
    """
    if isinstance(src, (str, bytes, os.PathLike)):  # a Path's .name is its base name only
        name = os.fsdecode(src)
    else:
        name = str(getattr(src, "name", None) or "<stream>")
    try:
        loaded = np.load(src, allow_pickle=False)
        if not isinstance(loaded, np.lib.npyio.NpzFile):  # a bare .npy array
            raise ValueError("a single .npy array, not an .npz archive")
        with loaded as z:
            members = z.zip.namelist()
            twice = sorted({m for m in members if members.count(m) > 1})
            if twice:  # the archive would keep only one of them, silently
                raise ValueError(f"member {twice[0]!r} appears {members.count(twice[0])} times")
            got = {k: z[k] for k in z.files}
    except (OSError, ValueError, EOFError, KeyError, NotImplementedError, struct.error,
            zipfile.BadZipFile, zlib.error) as exc:  # fmt: skip
        text = " ".join(str(exc).split()) or type(exc).__name__
        raise InstanceError(f"{name}: not a pool snapshot (.npz): {text}") from None
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
