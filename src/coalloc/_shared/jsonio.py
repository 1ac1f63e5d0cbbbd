"""The JSON envelope every family's files share, and the one error type for bad files.

Every coalloc file is a JSON object with ``"format"`` (``"coalloc.<what>"``) and
``"version"``; each family's ``io`` module defines its own formats on top of these helpers.
"""

from __future__ import annotations

import json
import os
from typing import IO, Any, Tuple, Union

import numpy as np

__all__ = [
    "InstanceError",
    "PathOrFile",
    "num",
    "vec",
    "load_json",
    "dump_json",
    "check_envelope",
    "get_key",
]

PathOrFile = Union[str, "os.PathLike[str]", IO[str]]


class InstanceError(ValueError):
    """A file or dictionary that is not a valid coalloc instance or result."""


def num(x: float) -> Union[int, float]:
    """Integers stay integers in JSON; other values keep full precision."""
    f = float(x)
    return int(f) if f.is_integer() and abs(f) < 2**53 else f


def vec(a: np.ndarray) -> list:
    """A 1-D array as a JSON list (integers stay integers)."""
    return [num(v) for v in a.tolist()]


def load_json(src: PathOrFile) -> Tuple[Any, str]:
    """Parse a JSON file or stream; returns ``(data, name)``.

    Raises
    ------
    InstanceError
        When the file cannot be read or is not valid JSON (the message names the file).
    """
    if hasattr(src, "read"):
        name = getattr(src, "name", "<stream>")
        text = src.read()
    else:
        name = os.fspath(src)
        try:
            with open(name, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            raise InstanceError(f"{name}: cannot read: {exc.strerror or exc}") from None
    try:
        return json.loads(text), str(name)
    except json.JSONDecodeError as exc:
        raise InstanceError(f"{name}: not valid JSON: {exc.msg} at line {exc.lineno}") from None


def dump_json(obj: Any, dst: PathOrFile) -> None:
    """Write ``obj`` as indented JSON to a path or a text stream."""
    text = json.dumps(obj, indent=1, separators=(",", ": "))
    if hasattr(dst, "write"):
        dst.write(text + "\n")
    else:
        with open(os.fspath(dst), "w", encoding="utf-8") as fh:
            fh.write(text + "\n")


def get_key(d: Any, key: str, where: str, required: bool = True) -> Any:
    """``d[key]`` with an :class:`InstanceError` naming ``where`` when it is missing."""
    if not isinstance(d, dict):
        raise InstanceError(f"{where}: expected an object, got {type(d).__name__}")
    if key not in d:
        if required:
            raise InstanceError(f"{where}: missing key {key!r}")
        return None
    return d[key]


def check_envelope(
    data: Any, fmt: str, version: int, source: str, *, required: bool = False
) -> None:
    """Check the ``format`` / ``version`` envelope of a parsed file.

    Parameters
    ----------
    data : object
        The parsed JSON.
    fmt : str
        Expected ``"format"``, e.g. ``"coalloc.instance"``.
    version : int
        The version this coalloc reads.
    source : str
        Name used in error messages.
    required : bool
        Whether ``"format"`` must be present (else a missing one is accepted).

    Raises
    ------
    InstanceError
    """
    if not isinstance(data, dict):
        raise InstanceError(f"{source}: expected a JSON object, got {type(data).__name__}")
    got = data.get("format")
    if (got is None and required) or (got is not None and got != fmt):
        raise InstanceError(f"{source}: format is {got!r}, expected {fmt!r}")
    v = data.get("version", version)
    if v != version:
        raise InstanceError(f"{source}: unsupported version {v!r} (this coalloc reads {version})")
