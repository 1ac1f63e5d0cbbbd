"""File formats of the load-sharing family.

* ``coalloc.loadshare.instance`` (JSON, version 1)::

      {"format": "coalloc.loadshare.instance", "version": 1,
       "capacity": [...], "job_size": [...], "job_origin": [...], "groups": [...]}

  ``groups`` is optional; jobs are listed in arrival order.
* OR-Library GAP files (:func:`read_gap`, :func:`write_gap`): integers separated by white
  space. A multi-instance file starts with the number of instances ``P``; each instance is
  ``m n``, the ``m x n`` cost matrix row by row, the ``m x n`` weight matrix row by row and
  the ``m`` capacities. A one-instance file has no leading ``P``; the reader tells the two
  apart by the token count. The format cannot say whether the objective is minimised or
  maximised: :func:`orlib_sense` is the convention the command line assumes.
* GAP instances in JSON (``coalloc.loadshare.gap``, one instance per file, with its
  ``"sense"``): :func:`coalloc.loadshare.gap_to_dict`, :func:`read_gap_file`,
  :func:`write_gap_file`.

:func:`read_gap_file` reads both GAP formats, recognised by content (``fmt=`` forces one);
:func:`write_gap_file` writes what the file name's suffix says (``.json``: JSON, anything
else: OR-Library text).
"""

from __future__ import annotations

import os
import re
from typing import Any, List

import numpy as np

from .._shared.constraints import checked
from .._shared.docs import filled
from .._shared.jsonio import (
    InstanceError,
    PathOrFile,
    check_envelope,
    dump_json,
    get_key,
    load_json,
    vec,
    write_text,
)
from .._shared.schema import AnyValue, Int, ListOf, Num, Obj, check
from .gap import GapInstance
from .model import LoadSharingProblem

__all__ = [
    "FORMAT",
    "read_problem",
    "write_problem",
    "problem_from_dict",
    "problem_to_dict",
    "read_gap",
    "write_gap",
    "parse_gap",
    "read_gap_file",
    "write_gap_file",
    "orlib_sense",
    "GAP_FILE_FORMATS",
]

#: The GAP file formats :func:`read_gap_file` takes (``--format`` of the GAP commands).
GAP_FILE_FORMATS = ("json", "orlib")

FORMAT = "coalloc.loadshare.instance"
VERSION = 1
#: The strict schema of a problem file (unknown keys, wrong types and ranges are errors).
PROBLEM_SCHEMA = Obj(
    {
        "format": (AnyValue(), False),
        "version": (AnyValue(), False),
        "capacity": (ListOf(Num(0)), True),
        "job_size": (ListOf(Num(0)), True),
        "job_origin": (ListOf(Int(0)), True),
        "groups": (ListOf(Int(0)), False),
        "metadata": (AnyValue(), False),
    }
)


def problem_to_dict(problem: LoadSharingProblem, metadata: Any = None) -> dict:
    """The JSON-ready dictionary of a problem."""
    out = {"format": FORMAT, "version": VERSION, "capacity": vec(problem.capacity),
           "job_size": vec(problem.job_size),
           "job_origin": [int(v) for v in problem.job_origin.tolist()],
           "groups": [int(v) for v in problem.groups.tolist()]}  # fmt: skip
    if metadata is not None:
        out["metadata"] = metadata
    return out


def problem_from_dict(data: Any, *, source: str = "<dict>") -> LoadSharingProblem:
    """A problem from a parsed ``coalloc.loadshare.instance`` dictionary.

    Raises
    ------
    InstanceError
        Missing keys or invalid values (the message names ``source``).
    """
    check_envelope(data, FORMAT, VERSION, source)
    check(data, PROBLEM_SCHEMA, source)
    n_nodes, n_jobs = len(data["capacity"]), len(data["job_size"])
    if len(data["job_origin"]) != n_jobs:
        raise InstanceError(
            f"{source}: job_origin: expected one node per job ({n_jobs}, the length of "
            f"job_size), got {len(data['job_origin'])}"
        )
    bad = next((j for j, v in enumerate(data["job_origin"]) if v >= n_nodes), None)
    if bad is not None:
        raise InstanceError(
            f"{source}: job_origin[{bad}]: expected a node index in [0, {n_nodes}), "
            f"got {data['job_origin'][bad]}"
        )
    if "groups" in data and len(data["groups"]) != n_nodes:
        raise InstanceError(
            f"{source}: groups: expected one group per node ({n_nodes}, the length of "
            f"capacity), got {len(data['groups'])}"
        )
    try:
        return LoadSharingProblem(
            get_key(data, "capacity", source), get_key(data, "job_size", source),
            get_key(data, "job_origin", source), data.get("groups"),
        )  # fmt: skip
    except (TypeError, ValueError) as exc:
        if isinstance(exc, InstanceError):
            raise
        raise InstanceError(f"{source}: {exc}") from None


def read_problem(src: PathOrFile) -> LoadSharingProblem:
    """Read a ``coalloc.loadshare.instance`` JSON file.

    Parameters
    ----------
    src : str, path-like or file object
        The file.

    Returns
    -------
    LoadSharingProblem
        The grid and its jobs.

    Raises
    ------
    InstanceError
        An unreadable file or a bad field (named with the file).

    Examples
    --------
    >>> import io, json
    >>> from coalloc.loadshare.io import read_problem
    >>> text = json.dumps({"capacity": [1, 1], "job_size": [2], "job_origin": [0]})
    >>> read_problem(io.StringIO(text)).n_nodes
    2
    """
    data, name = load_json(src)
    return problem_from_dict(data, source=name)


@filled
def write_problem(dst: PathOrFile, problem: LoadSharingProblem, metadata: Any = None) -> None:
    """Write a problem as a ``coalloc.loadshare.instance`` JSON file.

    Parameters
    ----------
    %(write_dst)s
    %(loadshare_problem)s
    metadata : dict, optional
        Free-form information stored with the problem.

    Examples
    --------
    >>> import io
    >>> import coalloc.loadshare as ls
    >>> problem = ls.LoadSharingProblem([10, 10, 10], [8, 7, 6, 3], [0, 0, 0, 1])
    >>> f = io.StringIO()
    >>> ls.write_problem(f, problem, metadata={"name": "toy"})
    >>> _ = f.seek(0)
    >>> ls.read_problem(f)
    LoadSharingProblem(n_nodes=3, n_jobs=4, load=24, capacity=30)
    """
    dump_json(problem_to_dict(problem, metadata), dst)


def parse_gap(text: str, source: str = "<string>") -> List[GapInstance]:
    """Parse OR-Library GAP text (multi-instance or one instance); returns the instances.

    Raises
    ------
    InstanceError
        Non-integer tokens, a truncated file or trailing data.
    """
    # ASCII only: Python's int() would also read "1_0" (as 10) and Unicode digits, and
    # str.split() would split at Unicode spaces; none of them belongs to the format.
    tokens = (
        text.split()
        if _ASCII_TEXT.fullmatch(text)
        else _ASCII_SPACE.split(text.strip(" \t\n\r\f\v"))
    )
    bad = next((t for t in tokens if not _ASCII_INT.fullmatch(t)), None)
    if bad is not None:
        raise InstanceError(f"{source}: not an integer: {bad[:30]!r}")
    nums = [int(t) for t in tokens]
    if not nums:
        raise InstanceError(f"{source}: empty GAP file")
    big = next((k for k, v in enumerate(nums) if abs(v) >= 2**62), None)
    if big is not None:  # checked before any conversion to int64, which would overflow
        raise InstanceError(
            f"{source}: number {big + 1} ({tokens[big][:30]}) is too large: GAP values must "
            "be below 2**62 in magnitude"
        )

    def single_size(pos: int) -> int:
        if pos + 2 > len(nums):
            return -1
        m, n = nums[pos], nums[pos + 1]
        if m < 1 or n < 0:
            return -1
        return 2 + 2 * m * n + m

    if len(nums) >= 2 and single_size(0) == len(nums):
        starts, count = [0], 1
    else:
        count = nums[0]
        if count < 1:
            raise InstanceError(f"{source}: the instance count must be positive, got {count}")
        starts, pos = [], 1
        for k in range(count):
            size = single_size(pos)
            if size < 0 or pos + size > len(nums):
                raise InstanceError(f"{source}: instance {k + 1} of {count} is truncated")
            starts.append(pos)
            pos += size
        if pos != len(nums):
            extra = len(nums) - pos
            raise InstanceError(f"{source}: {extra} extra numbers after the last instance")
    out = []
    base = os.path.splitext(os.path.basename(source))[0]
    for k, pos in enumerate(starts):
        m, n = nums[pos], nums[pos + 1]
        a = pos + 2
        cost = np.array(nums[a : a + m * n], dtype=np.int64).reshape(m, n)
        weight = np.array(nums[a + m * n : a + 2 * m * n], dtype=np.int64).reshape(m, n)
        cap = np.array(nums[a + 2 * m * n : a + 2 * m * n + m], dtype=np.int64)
        if cost.size and int(np.abs(cost).max()) >= 2**52:  # costs are held as float64
            raise InstanceError(
                f"{source}: instance {k + 1}: a cost of {int(np.abs(cost).max())} is too large: "
                "GAP costs must be below 2**52 in magnitude (larger ones are not exact as "
                "floating-point numbers)"
            )
        try:
            out.append(GapInstance(cost, weight, cap, name=f"{base}-{k + 1}"))
        except (TypeError, ValueError) as exc:
            raise InstanceError(f"{source}: instance {k + 1}: {exc}") from None
    return out


_ASCII_TEXT = re.compile(r"[0-9+\- \t\n\r\f\v]*")  # what a GAP file is made of
_ASCII_SPACE = re.compile(r"[ \t\n\r\f\v]+")
_ASCII_INT = re.compile(r"[+-]?[0-9]+")


def read_gap(path: PathOrFile) -> List[GapInstance]:
    """Read an OR-Library GAP file: a list of :class:`GapInstance` (one per instance).

    Parameters
    ----------
    path : str, path-like or text stream

    Returns
    -------
    list of GapInstance

    Raises
    ------
    InstanceError
        Unreadable or malformed file (one line naming the file).

    Examples
    --------
    >>> import io
    >>> from coalloc.loadshare import read_gap
    >>> [g.m for g in read_gap(io.StringIO("1 1 2  3 4  1 1  2"))]
    [1]
    """
    if hasattr(path, "read"):
        return parse_gap(path.read(), getattr(path, "name", "<stream>"))
    name = os.fspath(path)
    try:
        with open(name, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise InstanceError(f"{name}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise InstanceError(f"{name}: not a text file") from None
    return parse_gap(text, name)


@filled
def write_gap(dst: PathOrFile, instances: Any, *, multi: bool = True) -> None:
    """Write GAP instances in the OR-Library format (``multi=False``: exactly one, no count).

    Parameters
    ----------
    %(write_dst)s
    instances : GapInstance or iterable of GapInstance
        The instances.
    multi : bool
        Write the multi-instance format (a count first); False: exactly one instance.

    Raises
    ------
    ValueError
        Non-integer costs, or ``multi=False`` with more than one instance.

    Examples
    --------
    >>> import io
    >>> import coalloc.loadshare as ls
    >>> gap = ls.GapInstance([[1, 3], [2, 1]], [[2, 2], [2, 2]], [2, 2])
    >>> f = io.StringIO()
    >>> ls.write_gap(f, gap)
    >>> print(f.getvalue(), end="")
     1
     2 2
     1 3
     2 1
     2 2
     2 2
     2 2
    >>> _ = f.seek(0)
    >>> ls.read_gap(f)[0].cost.tolist()
    [[1.0, 3.0], [2.0, 1.0]]
    """
    if isinstance(instances, GapInstance):
        instances = [instances]
    instances = list(instances)
    if not multi and len(instances) != 1:
        raise ValueError("multi=False writes exactly one instance")
    lines = [f" {len(instances)}"] if multi else []
    for g in instances:
        if not g.integral_cost:
            raise ValueError("the OR-Library format holds integer costs only")
        lines.append(f" {g.m} {g.n}")
        for mat in (g.cost.astype(np.int64), g.weight):
            for row in mat.tolist():
                lines.append(" " + " ".join(str(int(v)) for v in row))
        lines.append(" " + " ".join(str(int(v)) for v in g.capacity.tolist()))
    write_text(dst, "\n".join(lines) + "\n")


_GAPN = re.compile(r"gap([1-9]|1[0-2])(\.[A-Za-z0-9]+)?")


def orlib_sense(name: Any) -> tuple:
    """The objective sense an OR-Library GAP file of this name is assumed to have.

    OR-Library text holds no sense. By the library's own convention the classical files
    ``gap1`` ... ``gap12`` (``gap1.txt``) are maximisation problems, and the Chu-Beasley and
    Yagiura types (``gapa`` ... ``gapd``, ``e*``) and every other file minimisation
    problems.

    Parameters
    ----------
    name : str or path-like
        The file's name (only its base name counts).

    Returns
    -------
    tuple of (str, str)
        ``(sense, reason)``: ``"max"`` or ``"min"``, and the sentence that says why.

    Examples
    --------
    >>> orlib_sense("data/gap1.txt")[0], orlib_sense("gapd.txt")[0], orlib_sense("d.txt")[0]
    ('max', 'min', 'min')
    """
    base = os.path.basename(os.fspath(name)).lower()
    if _GAPN.fullmatch(base):
        return "max", (
            f"{os.path.basename(os.fspath(name))} is one of OR-Library's gap1-gap12, "
            "published as maximisation problems"
        )
    return "min", "OR-Library GAP text does not state the sense; minimisation is the default"


@checked("coalloc.loadshare.constraints", "io.read_gap_file", tables="FUNCTIONS")
def read_gap_file(path: PathOrFile, fmt: Any = None, *, command: str = "read_gap_file") -> tuple:
    """GAP instances from an OR-Library text file or a ``coalloc.loadshare.gap`` JSON file.

    The format is recognised by the file's content (a JSON document, or integers), not its
    name; ``fmt`` forces it.

    Parameters
    ----------
    path : str, path-like or text stream
        The file.
    fmt : {"json", "orlib"}, optional
        Read as this format.
    command : str, default "read_gap_file"
        Named in the message for a file of another kind.

    Returns
    -------
    tuple of (list of GapInstance, str)
        The instances (a JSON file holds one, with the ``sense`` it states; OR-Library
        instances have ``sense`` None) and the format read (``"json"`` or ``"orlib"``).

    Raises
    ------
    InstanceError
        A malformed file, or a file of another kind (one line: what it looked like and
        what was expected).

    Examples
    --------
    >>> import io, json
    >>> from coalloc.loadshare import GapInstance, gap_to_dict
    >>> from coalloc.loadshare.io import read_gap_file
    >>> text = json.dumps(gap_to_dict(GapInstance([[3, 1]], [[1, 1]], [2], sense="max")))
    >>> insts, fmt = read_gap_file(io.StringIO(text))
    >>> fmt, insts[0].sense, read_gap_file(io.StringIO("1 1 2  3 4  1 1  2"))[1]
    ('json', 'max', 'orlib')
    """
    from .._shared.sniff import sniff, wrong_kind
    from .solvers import GAP_FORMAT, gap_from_dict

    expected = "an OR-Library GAP file or a coalloc.loadshare.gap JSON file"
    found = sniff(path)
    name = getattr(path, "name", "<stream>") if hasattr(path, "read") else os.fspath(path)
    if found.kind == "missing" and fmt is None:
        return read_gap(path), "orlib"  # its own 'cannot read' message
    if fmt == "json" or (fmt is None and found.kind == "json"):
        data, source = load_json(path)
        if fmt is None and isinstance(data, dict) and data.get("format") not in (GAP_FORMAT, None):
            raise wrong_kind(name, found, command, expected)
        return [gap_from_dict(data, source=source)], "json"
    if fmt is None and found.kind not in ("orlib-gap", "text", "metis"):
        raise wrong_kind(name, found, command, expected)
    try:
        return read_gap(path), "orlib"
    except InstanceError as exc:
        if fmt is None and found.kind == "metis":  # not a GAP at all, most likely
            hint = f"the GAP reader says: {exc}"
            raise wrong_kind(name, found, command, expected, hint) from None
        raise


def write_gap_file(dst: Any, instances: Any, *, multi: bool = True) -> str:
    """Write GAP instances in the format the file name's suffix says.

    ``*.json``: a ``coalloc.loadshare.gap`` JSON file (exactly one instance, its ``sense``
    kept); any other name: OR-Library text (:func:`write_gap`; the sense is not kept).

    Parameters
    ----------
    dst : str or path-like
        The file.
    instances : GapInstance or iterable of GapInstance
        The instances.
    multi : bool, default True
        OR-Library text: write the multi-instance layout (a count first).

    Returns
    -------
    str
        ``"json"`` or ``"orlib"``: what was written.

    Raises
    ------
    ValueError
        Several instances for a ``.json`` file (a JSON file holds one instance).

    Examples
    --------
    >>> import json, os, tempfile
    >>> from coalloc.loadshare import GapInstance
    >>> from coalloc.loadshare.io import read_gap_file, write_gap_file
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "g.json")
    ...     write_gap_file(path, GapInstance([[1, 3]], [[1, 1]], [2], sense="min"))
    ...     read_gap_file(path)[0][0].sense
    'json'
    'min'
    """
    from .solvers import gap_to_dict

    if isinstance(instances, GapInstance):
        instances = [instances]
    instances = list(instances)
    if os.fspath(dst).lower().endswith(".json"):
        if len(instances) != 1:
            raise ValueError(
                f"{os.fspath(dst)}: a coalloc.loadshare.gap JSON file holds one instance, not "
                f"{len(instances)}: write one file each, or OR-Library text (a .txt name)"
            )
        dump_json(gap_to_dict(instances[0]), dst)
        return "json"
    write_gap(dst, instances, multi=multi)
    return "orlib"
