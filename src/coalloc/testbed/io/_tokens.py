"""The tokens of a ``.ptop``/``.top`` line: the numbers, counts, names and pairs the line
table's converters and the fast path read, and the one refusal (:meth:`_Line.fail`) that
names the file, the line number and what was expected."""

from __future__ import annotations

import math
from typing import Dict, Optional, Tuple

from ..._shared.jsonio import InstanceError


class _Line:
    __slots__ = ("source", "lineno", "text")

    def __init__(self, source: str, lineno: int, text: str) -> None:
        self.source, self.lineno, self.text = source, lineno, text

    def fail(self, expected: str) -> InstanceError:
        """One short line: the quoted line (and tokens quoted in ``expected``) are cut."""
        return InstanceError(
            f"{self.source}:{self.lineno}: expected {_cut(expected, 300)}; "
            f"got {_cut(repr(self.text.strip()), 120)}"
        )


def _cut(text: str, limit: int) -> str:
    """``text`` shortened to about ``limit`` characters (a garbled line can be megabytes)."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _count(tok: str, line: _Line, what: str, *, low: int = 0, high: int = 2**53) -> int:
    """A whole number written in ASCII digits, ``low <= n <= high`` (no ``inf``, ``1e400``,
    ``1.5`` or ``1_0``: Emulab reads these counts as C integers)."""
    if not (tok.isascii() and tok.isdigit()):
        raise line.fail(f"{what} (a whole number), not {_cut(repr(tok), 40)}")
    n = int(tok) if len(tok) < 30 else high + 1
    if not low <= n <= high:
        top = "2**53" if high == 2**53 else str(high)
        raise line.fail(f"{what} between {low} and {top}, not {_cut(tok, 40)}")
    return n


def _link_name(name: str, taken: Dict[str, int]) -> str:
    """A repeated link name (Emulab accepts them: each line is one more link) gets the
    suffix ``#k`` for its k-th use, so that routes and mappings can name every link."""
    if name not in taken:
        return name
    k = 2
    while f"{name}#{k}" in taken:
        k += 1
    return f"{name}#{k}"


def _number(tok: str, line: _Line, what: str, *, star: bool = False) -> float:
    """A finite non-negative number in ASCII (``*`` = unlimited where ``star``): ``inf``,
    ``1e400``, ``1_0`` and non-ASCII digits are refused, not read as numbers."""
    if tok.isdigit() and tok.isascii() and len(tok) < 300:  # the common case: finite
        return float(tok)
    if star and tok == "*":
        return math.inf
    try:
        if not tok.isascii() or "_" in tok:
            raise ValueError(tok)
        x = float(tok)
    except ValueError:
        raise line.fail(f"{what} (a number{' or *' if star else ''}), not "
                        f"{_cut(repr(tok), 40)}") from None  # fmt: skip
    if not math.isfinite(x) or x < 0:
        raise line.fail(f"{what} (a finite non-negative number), not {_cut(repr(tok), 40)}")
    return x


def _tolerance(tok: str, line: _Line, what: str, *, star: bool = False) -> Optional[float]:
    """``X`` or Emulab's ``X:UNDER:OVER[:WEIGHT]`` (the tolerances are checked, not kept);
    ``*`` (None) where ``star``."""
    if ":" not in tok:  # the common case: a plain number
        if star and tok == "*":
            return None
        return _number(tok, line, f"{what}{' (or *)' if star else ''}")
    parts = tok.split(":")
    if len(parts) not in (1, 3, 4):
        raise line.fail(f"{what} written X or X:UNDER:OVER[:WEIGHT], not {_cut(repr(tok), 40)}")
    for extra in parts[1:]:
        _number(extra, line, f"a tolerance of {what}")
    if star and parts[0] == "*":
        return None
    return _number(parts[0], line, f"{what}{' (or *)' if star else ''}")


def _pair(tok: str, line: _Line, what: str) -> Tuple[str, float]:
    if ":" not in tok:
        raise line.fail(f"{what} written NAME:WEIGHT, not {tok!r}")
    name, value = tok.rsplit(":", 1)
    if not name:
        raise line.fail(f"{what} written NAME:WEIGHT, not {tok!r}")
    return name, _number(value, line, f"the weight of {name}", star=True)


def _build(line: _Line, factory, *args, **kwargs):
    try:
        return factory(*args, **kwargs)
    except (ValueError, TypeError) as exc:
        raise InstanceError(f"{line.source}:{line.lineno}: {exc}") from None


def _plain(tok: str) -> Optional[float]:
    """A finite non-negative number written in ASCII, as :func:`_number` reads it (None:
    anything else, for the line table to read or refuse)."""
    if tok.isascii() and "_" not in tok:
        try:
            x = float(tok)
        except ValueError:
            return None
        if 0.0 <= x < math.inf:
            return x
    return None
