"""The ``coalloc`` command's top-level listing, without importing any family.

``coalloc -h``, a bare ``coalloc`` and a mistyped command print (or name) every top-level
command: the five families' groups, the CTAAP commands and the task mapper's ``map`` one
step away, ``plot``, ``docs`` and ``schema``. Building those subcommands for real imports
every family (their command-line modules, their solvers: 0.8-0.9 s of CPU); printing their
one-line help needs none of it. This table holds those lines; each is a copy of what the
family declares (its ``FamilySpec.summary``, the ``help`` of its alias subcommands), and
``tests/shared/test_cli_top_lazy.py`` asserts that every copy equals its source, and that
the help, the parse and the errors of the lazy top-level parser equal the whole parser's.
"""

from __future__ import annotations

from typing import Dict, Tuple

__all__ = ["SUMMARIES", "ALIASES", "alias_family"]

#: Family -> its one-line summary (``FamilySpec.summary``; ``coalloc <family> -h``'s
#: description), in ``coalloc.FAMILIES``'s order.
SUMMARIES: Dict[str, str] = {
    "ctaap": "co-allocation of a request graph onto clustered offers (Kravtsov et al.)",
    "taskmap": "mapping task graphs onto resource graphs (Taura & Chien)",
    "collective": "collective co-allocation with advance reservations (Cankar et al.)",
    "testbed": "mapping .top experiments onto .ptop testbeds (assign+, assign)",
    "loadshare": "coalition load sharing (DMCF-GGA, Hovey & Jung) and the generalized "
    "assignment problem",
}

#: The families whose commands stay one step away at the top level, each with its alias
#: subcommands (name, one-line help) in the order its ``add_commands(sub, aliases=True)``
#: adds them.
ALIASES: Dict[str, Tuple[Tuple[str, str], ...]] = {
    "ctaap": (
        ("solve", "solve a CTAAP instance file"),
        ("solve-batch", "solve many instance files in parallel, one JSON line per instance"),
        ("demo", "solve the built-in example instance"),
        ("generate", "write an instance of the paper's experiments"),
        ("verify", "check a result file against its instance; print its bound, gap and "
                   "per-cluster table"),  # fmt: skip
    ),
    "taskmap": (("map", "map a task graph onto a resource graph (Taura & Chien)"),),
}


def alias_family(word: str) -> str:
    """The family whose top-level alias ``word`` is (``"solve"`` -> ``"ctaap"``), else ``""``.

    >>> alias_family("map"), alias_family("plot")
    ('taskmap', '')
    """
    return next((f for f, names in ALIASES.items() if any(n == word for n, _ in names)), "")
