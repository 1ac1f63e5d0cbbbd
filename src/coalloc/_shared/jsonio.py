"""The JSON envelope every family's files share, and the one error type for bad files.

Every coalloc file is a JSON object with ``"format"`` (``"coalloc.<what>"``) and
``"version"``; each family's ``io`` module defines its own formats on top of these helpers.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
from typing import IO, Any, Iterator, Tuple, Union

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
    "write_text_atomic",
    "atomic_output",
    "same_file",
]

PathOrFile = Union[str, "os.PathLike[str]", IO[str]]


class InstanceError(ValueError):
    """A file or dictionary that is not a valid coalloc instance or result.

    A :class:`ValueError`; the message names the file (or ``<stream>``), the field and
    what was expected.

    Examples
    --------
    >>> import io
    >>> import coalloc
    >>> try:
    ...     coalloc.read_instance(io.StringIO("{}"))
    ... except coalloc.InstanceError as exc:
    ...     print(exc)
    <stream>: request: missing (required)
    """


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
        except UnicodeDecodeError as exc:
            raise InstanceError(
                f"{name}: not a UTF-8 text file (byte {exc.start}: {exc.reason})"
            ) from None
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite), str(name)
    except json.JSONDecodeError as exc:
        raise InstanceError(f"{name}: not valid JSON: {exc.msg} at line {exc.lineno}") from None
    except RecursionError:
        raise InstanceError(f"{name}: JSON nested too deeply to be an instance") from None
    except ValueError as exc:  # integers beyond Python's digit limit; NaN/Infinity
        raise InstanceError(f"{name}: not valid JSON: {exc}") from None


def same_file(a: Any, b: Any) -> bool:
    """Whether two paths (or path-like objects; streams never) name the same existing file."""
    if hasattr(a, "read") or hasattr(a, "write") or hasattr(b, "read") or hasattr(b, "write"):
        return False
    try:
        return os.path.samefile(os.fspath(a), os.fspath(b))
    except (OSError, TypeError):
        return False


def _finite(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):  # 1e400: Python's json would read it as inf
        raise ValueError(f"the number {token[:30]} is beyond the float range")
    return value


def _no_constant(token: str) -> Any:
    raise ValueError(f"{token} is not a number JSON allows (use a finite number)")


@contextlib.contextmanager
def atomic_output(path: Union[str, os.PathLike[str]]) -> Iterator[IO[str]]:
    """Open a text file for writing that appears at ``path`` only when complete.

    Writes go to a temporary file beside ``path``, renamed over it when the ``with`` block
    ends normally; on an exception or interrupt the temporary file is removed and ``path``
    keeps its old content (or stays absent).
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        if os.path.exists(path):
            mode = os.stat(path).st_mode & 0o777
        else:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text_atomic(path: Union[str, os.PathLike[str]], text: str) -> None:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_output`)."""
    with atomic_output(path) as fh:
        fh.write(text)


def dump_json(obj: Any, dst: PathOrFile) -> None:
    """Write ``obj`` as indented JSON to a path or a text stream."""
    text = json.dumps(obj, indent=1, separators=(",", ": "))
    if hasattr(dst, "write"):
        dst.write(text + "\n")
    else:
        write_text_atomic(dst, text + "\n")


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
    if isinstance(v, bool) or v != version:
        raise InstanceError(f"{source}: unsupported version {v!r} (this coalloc reads {version})")
