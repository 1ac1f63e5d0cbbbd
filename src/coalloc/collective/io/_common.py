"""What the text readers of :mod:`coalloc.collective.io` share: decimal numbers as text files
write them, and the model's refusals turned into :class:`InstanceError` naming the file."""

from __future__ import annotations

import re
from typing import Any, Callable

from ..._shared.jsonio import InstanceError

#: A decimal number as text files write it: ASCII digits only (Python's ``float`` and
#: ``int`` also take ``1_0`` and other scripts' digits, which no trace or CSV means).
DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)


def text_number(text: str) -> float:
    """A decimal number of a text file (``ValueError`` for anything else, ``inf`` and
    ``nan`` included)."""
    t = text.strip()
    if not DECIMAL.fullmatch(t):
        raise ValueError(f"not a decimal number: {text!r}")
    return float(t)


def text_int(text: str) -> int:
    """A decimal integer of a text file, ASCII digits only."""
    t = text.strip()
    if not INTEGER.fullmatch(t):
        raise ValueError(f"not a decimal integer: {text!r}")
    return int(t)


def wrap(source: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` (a model constructor), its ``TypeError``/``ValueError`` an
    :class:`InstanceError` whose message starts with ``source``."""
    try:
        return fn(*args, **kwargs)
    except InstanceError:
        raise
    except (TypeError, ValueError) as exc:
        raise InstanceError(f"{source}: {exc}") from None
