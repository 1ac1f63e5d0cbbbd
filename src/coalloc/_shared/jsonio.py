"""The JSON envelope every family's files share, and the one error type for bad files.

Every coalloc file is a JSON object with ``"format"`` (``"coalloc.<what>"``) and
``"version"``; each family's ``io`` module defines its own formats on top of these helpers.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import hashlib
import io
import json
import math
import os
import shutil
import stat
import tempfile
from typing import IO, Any, Iterable, Iterator, Optional, Tuple, Union

import numpy as np

__all__ = [
    "InstanceError",
    "PathOrFile",
    "brief",
    "num",
    "vec",
    "load_json",
    "dump_json",
    "check_envelope",
    "get_key",
    "write_text",
    "write_text_atomic",
    "atomic_output",
    "check_output",
    "protect_inputs",
    "OutputIsInputError",
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


def brief(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters: a value read from a file, echoed in an
    error message, keeps the message one short line (a 3,000-character ``"format"`` string
    made a fuzzing finding)."""
    text = repr(value)
    return text if len(text) <= limit else text[: max(0, limit - 3)] + "..."


def num(x: float) -> Union[int, float]:
    """Integers stay integers in JSON; other values keep full precision."""
    f = float(x)
    return int(f) if f.is_integer() and abs(f) < 2**53 else f


def vec(a: np.ndarray) -> list:
    """A 1-D array as a JSON list (integers stay integers)."""
    return [num(v) for v in a.tolist()]


def read_text(src: PathOrFile) -> Tuple[str, str]:
    """A text file or stream read whole; returns ``(text, name)``.

    The one place the readers of every family open an input file, so that a file that
    cannot be read or is not UTF-8 is always an :class:`InstanceError` naming it.

    Raises
    ------
    InstanceError
        When the file cannot be opened or read, or is not UTF-8 text.
    """
    stream = hasattr(src, "read")
    name = str(getattr(src, "name", "<stream>")) if stream else os.fspath(src)
    try:
        if stream:
            return src.read(), name  # type: ignore[union-attr]
        with open(name, encoding="utf-8") as fh:
            return fh.read(), name
    except OSError as exc:
        raise InstanceError(f"{name}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise InstanceError(
            f"{name}: not a UTF-8 text file (byte {exc.start}: {exc.reason})"
        ) from None


def load_json(src: PathOrFile) -> Tuple[Any, str]:
    """Parse a JSON file or stream; returns ``(data, name)``.

    Raises
    ------
    InstanceError
        When the file cannot be read or is not valid JSON (the message names the file).
    """
    text, name = read_text(src)
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite), str(name)
    except json.JSONDecodeError as exc:
        raise InstanceError(f"{name}: not valid JSON: {exc.msg} at line {exc.lineno}") from None
    except RecursionError:
        raise InstanceError(f"{name}: JSON nested too deeply to be an instance") from None
    except ValueError as exc:  # integers beyond Python's digit limit; NaN/Infinity
        raise InstanceError(f"{name}: not valid JSON: {exc}") from None


def file_sha256(path: Any) -> Optional[str]:
    """SHA-256 (hex) of a file's bytes, read in 1 MiB blocks; None when it cannot be read
    (the batch layers key resumable records by it and let the worker say why)."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


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


# ------------------------------------------------------------------------------ the writer
#
# Every file coalloc writes goes through :func:`atomic_output` (``tests/shared/test_writer*.py``
# enforce it). The data goes to a temporary file in the target's folder, is flushed to disk
# and renamed over the target; a path that is also an input of the running command is
# refused before anything is written.

#: The input files the running command protects (see :func:`protect_inputs`).
_PROTECTED: contextvars.ContextVar[Tuple[Tuple[str, str, Tuple[int, int]], ...]] = (
    contextvars.ContextVar("coalloc_protected_inputs", default=())
)


class OutputIsInputError(ValueError):
    """An output path names a file that is also an input (same path, a symlink or a hard link).

    A :class:`ValueError`: the command line prints it on one line and exits with status 2.
    """


def _identity(path: str) -> Optional[Tuple[int, int]]:
    """``(st_dev, st_ino)`` of the file ``path`` names (symlinks followed), None if none."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def _input_entries(inputs: Iterable[Any]) -> list:
    """``[(label, path, identity)]`` of the existing files among ``inputs``.

    Each item is a path or a ``(label, path)`` pair; streams, ``"-"``, ``None`` and paths that
    name no file are left out (nothing there can be overwritten).
    """
    entries = []
    for item in inputs:
        label, path = item if isinstance(item, tuple) else (None, item)
        if path is None or hasattr(path, "read") or hasattr(path, "write"):
            continue
        try:
            path = os.fspath(path)
        except TypeError:
            continue
        if not isinstance(path, str) or path in ("", "-"):
            continue
        ident = _identity(path)
        if ident is not None:
            entries.append((label or path, path, ident))
    return entries


@contextlib.contextmanager
def protect_inputs(inputs: Iterable[Any]) -> Iterator[None]:
    """Refuse, inside the ``with`` block, every write onto one of ``inputs``.

    The ``coalloc`` command runs each subcommand inside this block with the files it reads,
    so that no option (``-o``, ``--reserve-to``, ``--records``, a picture ...) and no writer
    the command calls can replace an input. Blocks nest: the inner one adds its files.

    Parameters
    ----------
    inputs : iterable
        Paths, or ``(label, path)`` pairs (the label names the input in the error, e.g. the
        option it came from). Files are told apart by device and inode, so a symlink or a
        hard link to an input is that input.

    Examples
    --------
    >>> import os, tempfile
    >>> from coalloc._shared.jsonio import protect_inputs, write_text_atomic
    >>> folder = tempfile.mkdtemp()
    >>> src = os.path.join(folder, "in.json")
    >>> write_text_atomic(src, "{}")
    >>> with protect_inputs([("instance", src)]):
    ...     try:
    ...         write_text_atomic(src, "[]")
    ...     except ValueError as exc:
    ...         print(type(exc).__name__)
    OutputIsInputError
    """
    token = _PROTECTED.set(_PROTECTED.get() + tuple(_input_entries(inputs)))
    try:
        yield
    finally:
        _PROTECTED.reset(token)


def check_output(path: Union[str, os.PathLike[str]], inputs: Iterable[Any] = (),
                 *, option: Optional[str] = None) -> None:  # fmt: skip
    """Raise :class:`OutputIsInputError` when ``path`` is one of the inputs.

    The inputs are ``inputs`` plus those of every enclosing :func:`protect_inputs`. The
    comparison is by device and inode (``os.path.samefile``): the same path spelt another
    way, a symlink to an input and a hard link to an input are all refused. A ``path`` that
    does not exist yet cannot be an input.

    Parameters
    ----------
    path : str or path-like
        The file about to be written.
    inputs : iterable
        More inputs: paths or ``(label, path)`` pairs.
    option : str, optional
        The option that named ``path`` (``"-o"``), for the message.
    """
    target = os.fspath(path)
    ident = _identity(target)
    if ident is None:
        return
    for label, src, src_ident in (*_PROTECTED.get(), *_input_entries(inputs)):
        if src_ident == ident:
            via = f" ({option})" if option else ""
            what = "" if label == src else f" ({label}: {src})"
            raise OutputIsInputError(
                f"the output file {target}{via} is also an input{what}: "
                "write the output somewhere else"
            )


def _umask() -> int:
    """The process's umask, read without changing it where the system says it."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _copy(buf: IO[bytes], out: IO[bytes]) -> None:
    """Copy all of ``buf`` into the empty ``out``: in the kernel where it can, else in chunks."""
    src, dst = buf.fileno(), out.fileno()
    size = os.fstat(src).st_size
    done = 0
    if hasattr(os, "copy_file_range"):
        try:
            while done < size:
                n = os.copy_file_range(src, dst, size - done, done, done)
                if n == 0:
                    break
                done += n
        except OSError:
            if done:  # failed midway (a full disk): the error is the answer
                raise
    if done < size:  # no copy_file_range here, or it copied nothing
        buf.seek(done)
        out.seek(done)
        shutil.copyfileobj(buf, out, 1 << 20)


def _named_copy(buf: IO[bytes], folder: str, base: str, mode: int) -> str:
    """Copy the complete anonymous file ``buf`` to a new hidden file in ``folder``; its name."""
    fd, named = tempfile.mkstemp(prefix=f".{base}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as out:
            _copy(buf, out)
            out.flush()
            if hasattr(os, "fchmod"):
                os.fchmod(out.fileno(), mode)
            os.fsync(out.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(named)
        raise
    return named


#: File systems (``st_dev``) where a nameless file cannot be linked: copied at once.
_LINKABLE: dict = {}


def _publish(buf: IO[bytes], target: str, mode: int) -> None:
    """Give the complete anonymous file ``buf`` the name ``target`` (one atomic rename).

    The file is flushed to disk and linked under a fresh hidden name through
    ``/proc/self/fd`` (no copy; Linux files made with ``O_TMPFILE``), else copied to one
    (flushed to disk in turn), and that name is renamed over ``target``.
    """
    folder, base = os.path.split(target)
    fd = buf.fileno()
    named = None
    device = os.stat(folder).st_dev
    if _LINKABLE.get(device, True) and os.path.isdir("/proc/self/fd"):
        if hasattr(os, "fchmod"):
            os.fchmod(fd, mode)
        os.fsync(fd)
        for _ in range(8):
            candidate = os.path.join(folder, f".{base}.{os.urandom(6).hex()}.tmp")
            try:
                os.link(f"/proc/self/fd/{fd}", candidate, follow_symlinks=True)
            except FileExistsError:
                continue
            except OSError:  # not linkable here (no O_TMPFILE, a sandboxed /proc): copy
                _LINKABLE[device] = False  # and do not try again on this file system
                break
            named = candidate
            break
    if named is None:
        named = _named_copy(buf, folder, base, mode)
    try:
        os.replace(named, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(named)
        raise


@contextlib.contextmanager
def atomic_output(
    path: Union[str, os.PathLike[str]],
    *,
    binary: bool = False,
    newline: Optional[str] = None,
    inputs: Iterable[Any] = (),
    option: Optional[str] = None,
    append: bool = False,
) -> Iterator[IO[Any]]:
    """Open a file for writing that appears at ``path`` only when complete: the one writer.

    Every file coalloc writes goes through here. It refuses ``path`` when it is an input
    (:func:`check_output`: ``inputs`` and the enclosing :func:`protect_inputs`). What the
    ``with`` block writes goes to a temporary file with no name in the folder of ``path``
    (:func:`tempfile.TemporaryFile`: ``O_TMPFILE`` on Linux); when the block ends normally
    that file is flushed to disk (``fsync``), given a hidden name ``.NAME.XXXX.tmp`` beside
    ``path`` (linked, else copied and flushed) and renamed over ``path``. On an exception or Ctrl-C
    nothing is renamed and ``path`` keeps its old content (or stays absent); a process
    killed outright (SIGKILL) while it writes leaves the old file and no temporary file
    (the system frees the nameless one). Only a kill inside the final copy and rename can
    leave a hidden ``.NAME.XXXX.tmp``.

    A symlink at ``path`` is followed (its target is replaced, the link stays); a file with
    several hard links gets a new inode, so its other names keep the old content. A ``path``
    that exists and is not a regular file (``/dev/null``, a named pipe) is written directly:
    no rename is possible there. A new file gets the mode ``0o666`` less the umask, an
    existing one keeps its mode.

    Parameters
    ----------
    path : str or path-like
        The file to write.
    binary : bool
        A binary file object (pictures) instead of UTF-8 text.
    newline : str, optional
        As for :func:`open` in text mode (``""`` for the :mod:`csv` module).
    inputs : iterable
        Files that must not be overwritten: paths or ``(label, path)`` pairs.
    option : str, optional
        The command-line option that named ``path``, for the refusal's message.
    append : bool, default False
        Grow the file in place instead (created when missing): for a command's own output of
        JSON lines that must survive a crash line by line (``solve-batch --resume``). A last
        line left incomplete by a writer that was killed is cut first, so what is appended
        starts a line. Not atomic: each line is there once written and flushed. Inputs are
        refused as in the default mode.

    Yields
    ------
    file object
        Text (UTF-8) or binary, open for writing.

    Raises
    ------
    OutputIsInputError
        When ``path`` is one of the inputs (nothing is written).
    OSError
        When the folder of ``path`` is missing or not writable, or ``path`` is a folder.

    Examples
    --------
    >>> import os, tempfile
    >>> from coalloc._shared.jsonio import atomic_output
    >>> path = os.path.join(tempfile.mkdtemp(), "out.csv")
    >>> with atomic_output(path, newline="") as fh:
    ...     _ = fh.write("a,b\\r\\n")
    >>> open(path, newline="").read()
    'a,b\\r\\n'
    """
    check_output(path, inputs, option=option)
    target = os.path.realpath(os.fspath(path))
    if os.path.isdir(target):
        raise IsADirectoryError(errno.EISDIR, "is a folder, not a file", os.fspath(path))
    text_args = {} if binary else {"encoding": "utf-8", "newline": newline}
    if append:
        folder = os.path.dirname(target)
        if not os.path.isdir(folder):
            raise FileNotFoundError(errno.ENOENT, "No such file or directory (its folder)", folder)
        with open(target, "ab+") as raw:
            if stat.S_ISREG(os.fstat(raw.fileno()).st_mode):
                _cut_incomplete_line(raw)
            out: IO[Any] = raw if binary else io.TextIOWrapper(raw, **text_args)
            try:
                yield out
                out.flush()
            finally:
                if out is not raw:
                    out.detach()
        return
    if os.path.exists(target) and not stat.S_ISREG(os.stat(target).st_mode):
        with open(target, "wb" if binary else "w", **text_args) as fh:  # a device, a pipe
            yield fh
        return
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise FileNotFoundError(errno.ENOENT, "No such file or directory (its folder)", folder)
    mode = os.stat(target).st_mode & 0o777 if os.path.exists(target) else 0o666 & ~_umask()
    buf = tempfile.TemporaryFile(dir=folder)  # closed below, after publishing
    fh: IO[Any] = buf if binary else io.TextIOWrapper(buf, **text_args)
    try:
        yield fh
        fh.flush()
        _publish(buf, target, mode)
    finally:
        fh.close()


def _cut_incomplete_line(raw: IO[bytes]) -> None:
    """Truncate an appendable file after its last newline (a killed writer's partial line)."""
    size = raw.seek(0, os.SEEK_END)
    end = size
    while end > 0:
        start = max(0, end - 65536)
        raw.seek(start)
        block = raw.read(end - start)
        cut = block.rfind(b"\n")
        if cut >= 0:
            end = start + cut + 1
            break
        end = start
    if end < size:
        raw.truncate(end)
        raw.flush()
    raw.seek(0, os.SEEK_END)


def write_text_atomic(path: Union[str, os.PathLike[str]], text: str, *,
                      inputs: Iterable[Any] = ()) -> None:  # fmt: skip
    """Write ``text`` to ``path`` through the one writer (see :func:`atomic_output`)."""
    with atomic_output(path, inputs=inputs) as fh:
        fh.write(text)


def write_text(dst: PathOrFile, text: str) -> None:
    """Write ``text`` to a text stream as is, or to a path through :func:`atomic_output`."""
    if hasattr(dst, "write"):
        dst.write(text)
    else:
        write_text_atomic(dst, text)


def dump_json(obj: Any, dst: PathOrFile) -> None:
    """Write ``obj`` as indented JSON to a path or a text stream."""
    write_text(dst, json.dumps(obj, indent=1, separators=(",", ": ")) + "\n")


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
        raise InstanceError(f"{source}: format is {brief(got)}, expected {fmt!r}")
    v = data.get("version", version)
    if isinstance(v, bool) or v != version:
        raise InstanceError(f"{source}: unsupported version {brief(v)} "
                            f"(this coalloc reads {version})")  # fmt: skip
