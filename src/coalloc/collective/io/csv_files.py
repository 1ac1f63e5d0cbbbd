"""Pools in CSV: one row per node, and an optional usage CSV of reserved amounts by slot."""

from __future__ import annotations

import csv
import os
from typing import Optional

import numpy as np

from ..._shared.jsonio import InstanceError, PathOrFile
from ..model import ResourcePool
from ._common import text_int, text_number, wrap

__all__ = ["read_pool_csv"]


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
            cap.append([text_number(rec[p]) for p in props])
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
            slot = [text_int(u["slot"]) for u in urows]
            if slot and (min(slot) < 0 or max(slot) >= 10**7):
                raise ValueError(
                    f"slot numbers must be in [0, 10**7), got {min(slot)}..{max(slot)}"
                )
            slots = 1 + max(slot) if urows else 0
            reserved = np.zeros((len(nodes), len(props), slots))
            for u, k in zip(urows, slot):
                reserved[index[u["node"]], props.index(u["property"]), k] = text_number(
                    u["reserved"]
                )
        except (KeyError, ValueError) as exc:
            raise InstanceError(f"{uname}: bad usage row ({exc})") from None
        return wrap(name, ResourcePool.from_slots, cap, reserved, slot_seconds, props,
                     labels=labels or None, node_names=nodes)  # fmt: skip
    return wrap(name, ResourcePool, cap, props, labels=labels or None, node_names=nodes)
