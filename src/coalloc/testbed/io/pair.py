"""The experiment and the testbed of a command line, whichever order its user knows.

``coalloc testbed assign`` takes ``TOP PTOP`` (or one ``coalloc.testbed.instance`` JSON file
that holds both); ``coalloc-assign``, like Emulab's ``assign``, takes ``PTOP TOP``. A user
who knows one order types the other: :func:`read_topologies` recognises each file by its
content (:func:`coalloc._shared.sniff.sniff`, and by which reader takes it) and names a
swap in one line instead of the first line the wrong reader stumbles on.
"""

from __future__ import annotations

import os
from typing import Any, Optional, Tuple

from ..._shared.jsonio import InstanceError
from ..._shared.sniff import Sniffed, sniff, wrong_kind
from .dicts import INSTANCE_FORMAT, read_instance
from .text import read_ptop, read_top

__all__ = ["read_topologies"]

_ROLE = {"top": "the virtual one", "ptop": "the physical one"}
_LOOKS = {"top": "a virtual topology (.top)", "ptop": "a physical topology (.ptop)"}


def _reads_as(path: Any, kind: str) -> bool:
    try:
        (read_top if kind == "top" else read_ptop)(path)
    except (InstanceError, OSError):
        return False
    return True


def read_topologies(top: Any, ptop: Optional[Any] = None, *, order: str = "TOP PTOP",
                    command: str = "testbed assign") -> Tuple[Any, Any]:  # fmt: skip
    """``(VirtualTopology, PhysicalTopology)`` from the files of a command line.

    Parameters
    ----------
    top : str or path-like
        The ``.top`` file, or (``ptop`` None) a ``coalloc.testbed.instance`` JSON file that
        holds both topologies.
    ptop : str or path-like, optional
        The ``.ptop`` file.
    order : str, default "TOP PTOP"
        The command's order, named in the message for a swap.
    command : str, default "testbed assign"
        The command, named in the messages.

    Returns
    -------
    tuple
        The experiment and the testbed.

    Raises
    ------
    InstanceError
        A malformed file (its own message), a file of another kind (what it looks like,
        what was expected), or the two files swapped (named, with the order).

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> open(os.path.join(d, "mine.top"), "w").write("node a pc\\nnode b pc\\n")
    20
    >>> open(os.path.join(d, "mine.ptop"), "w").write("node pc1 pc:1 - fast:1\\n")
    23
    >>> read_topologies(os.path.join(d, "mine.top"), os.path.join(d, "mine.ptop"))[0]
    VirtualTopology(2 nodes, 0 links)
    >>> try:
    ...     read_topologies(os.path.join(d, "mine.ptop"), os.path.join(d, "mine.top"))
    ... except InstanceError as exc:
    ...     print(str(exc).replace(d + os.sep, ""))
    mine.ptop looks like a physical topology (.ptop) and was given as the virtual one; the order is TOP PTOP
    """  # noqa: E501
    if ptop is None:
        found = sniff(top)
        if found.kind == "json" and found.format in (INSTANCE_FORMAT, None):
            return read_instance(top)
        if found.kind == "missing":
            return read_instance(top)  # its own 'cannot read' message
        raise wrong_kind(
            top, found, command,
            f"two files ({order}) or one {INSTANCE_FORMAT} JSON file that holds both",
            "give the other file too" if found.kind in ("top", "ptop", "emulab") else "",
        )  # fmt: skip
    files = {"top": top, "ptop": ptop}
    seen = {kind: sniff(path) for kind, path in files.items()}
    for kind, path in files.items():  # a JSON file where a topology belongs
        found = seen[kind]
        if found.kind == "json":
            hint = "give it alone" if found.format == INSTANCE_FORMAT else ""
            what = f"{_LOOKS[kind]} file ({order})"
            raise wrong_kind(path, found, command, what, hint)
        if found.kind not in ("top", "ptop", "emulab", "text", "missing"):
            raise wrong_kind(path, found, command, f"{_LOOKS[kind]} file ({order})")
    # both recognised the other way round: a swap, said before either reader complains
    swapped = [k for k, other in (("top", "ptop"), ("ptop", "top")) if seen[k].kind == other]
    for kind in swapped:
        _check_swap(files[kind], kind, seen[kind], order, force=len(swapped) == 2)
    out = {}
    for kind, path in files.items():
        try:
            out[kind] = (read_top if kind == "top" else read_ptop)(path)
        except InstanceError:
            other = "ptop" if kind == "top" else "top"
            # a swap when both files stand in the wrong place (the other one is not what
            # its place asks for either, or reads as this place's kind too: Emulab's own
            # test.ptop also reads as a .top), or the same file was given twice; one malformed
            # file beside a good one is malformed (its reader's message, as assign says it),
            # even where its content looks like the other kind
            same = os.path.abspath(os.fspath(path)) == os.path.abspath(os.fspath(files[other]))
            if _reads_as(path, other) and (
                same
                or (seen[kind].kind in (other, "emulab", "text")
                    and (seen[other].kind == kind or not _reads_as(files[other], other)
                         or _reads_as(files[other], kind)))
            ):  # fmt: skip
                _check_swap(path, kind, Sniffed(other, _LOOKS[other]), order, force=True)
            raise
    return out["top"], out["ptop"]


def _check_swap(path: Any, kind: str, found: Sniffed, order: str, *, force: bool) -> None:
    """Raise the swap message when ``force`` (the evidence is enough)."""
    if force:
        raise InstanceError(
            f"{os.fspath(path)} looks like {found.what} and was given as {_ROLE[kind]}; "
            f"the order is {order}"
        )
