"""The fuzz harness's modules (``fuzz/targets.py``, ``fuzz/make_corpus.py``) for the tests
that check them: imported fresh (another module's fixture may have removed a cached
import's scratch folder), dropped again after, their scratch folder removed."""

from __future__ import annotations

import contextlib
import importlib
import sys
from pathlib import Path
from typing import Any, Iterator, Tuple

ROOT = Path(__file__).resolve().parents[1]
NAMES = ("targets", "make_corpus")


@contextlib.contextmanager
def fuzz_modules() -> Iterator[Tuple[Any, Any]]:
    """``(targets, make_corpus)``, fresh, with ``fuzz/`` on the path while they are used."""
    sys.path.insert(0, str(ROOT / "fuzz"))
    for name in NAMES:
        sys.modules.pop(name, None)
    try:
        targets = importlib.import_module("targets")
        make_corpus = importlib.import_module("make_corpus")
        yield targets, make_corpus
        targets.cleanup()
    finally:
        sys.path.remove(str(ROOT / "fuzz"))
        for name in NAMES:
            sys.modules.pop(name, None)
