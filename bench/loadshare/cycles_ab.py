"""Issue 40: the GAP heuristic with and without core cycles (``solve_gap(..., cycles=K)``),
interleaved at equal time on the published instances.

For every instance of ``--sets`` (or ``--only``), seed and ``--limits`` T, the default
call ``solve_gap(method="heuristic", time_limit=T, seed=s)`` and the same call with
``cycles=K`` run one after the other (the order alternating by seed, so a change of load
hits both alike); every answer is checked by ``verify_gap``. Printed: per instance the
median gap over the seeds (``100 (z - best known) / best known``) of each, then per family
(gap1-12, Chu-Beasley a-d, Yagiura c/d/e) and T the mean and the worst of those medians,
and the load average at the start and the end. ``--iterations N`` runs untimed calls of N
tabu iterations instead (the answer then depends on the seed alone, not on the load).
A preset of :mod:`bench.loadshare.knob_ab` (its B side ``call.cycles=K``); every other
option is knob_ab's.

    PYTHONPATH=src:. python -m bench.loadshare.cycles_ab --data /work/peers/gapdata \\
        --sets chu1997 --limits 1 --seeds 0 1 2 3 4 --cycles 2
    PYTHONPATH=src:. python -m bench.loadshare.cycles_ab --sets yagiura2004 \\
        --only d10400 d20400 d40400 --limits 10 --seeds 0 1 2 3 4
"""

from __future__ import annotations

import sys

from bench.loadshare import knob_ab
from coalloc.cli._common import count


def main(argv=None) -> None:
    """``--cycles K`` (default 2) becomes knob_ab's ``--b call.cycles=K``; every other
    option, ``--help`` and ``--quiet`` included, is knob_ab's (its bars and its checks)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    k = 2
    if "--cycles" in argv:
        at = argv.index("--cycles")
        k = count()(argv[at + 1]) if at + 1 < len(argv) else count()("")
        del argv[at : at + 2]
    knob_ab.main([*argv, "--b", f"call.cycles={k}"])


if __name__ == "__main__":
    main()
