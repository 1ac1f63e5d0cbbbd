"""Issue 37, the plots split into named steps: the same picture before and after.

The taskmap picture of a dense cluster (``plot_mapping(..., aggregate=True)``, whose
``_plot_groups`` now takes one ``_Occupancy`` record and runs four named steps) and the
testbed's ``plot_mapping`` (its refusal, trunks and virtual links now steps of their own)
are drawn by their modules as they were at ``--rev`` (read with ``git show``, loaded beside
the current ones) and as they are, and the two SVG files compared byte for byte
(matplotlib's ``svg.hashsalt`` fixed, no date). No picture is a benchmark: they are
compared, not timed.

Run (about a minute)::

    PYTHONPATH=src:. python -m bench.shared.issue37_pictures
"""

from __future__ import annotations

import argparse
import importlib
import io
import pathlib
import sys
import tempfile

from bench.shared import issue37_steps
from bench.shared._progress import add_quiet, bar
from coalloc.cli._common import count

#: Module -> its file.
MODULES = {"coalloc.taskmap.plot": "src/coalloc/taskmap/plot.py",
           "coalloc.testbed.plot": "src/coalloc/testbed/plot.py"}  # fmt: skip


def _old(module: str, rev: str, folder: pathlib.Path):
    """``module`` as it was at ``rev`` (:func:`bench.shared.issue37_steps._old`, which reads
    its file from this script's ``MODULES``)."""
    return issue37_steps._old(module, rev, folder, modules=MODULES)


def _cases(seeds: int):
    """``(name, module, draw(mod) -> Figure)`` of every picture compared."""
    from coalloc import taskmap, testbed
    from coalloc.testbed import generators as tg

    for seed in range(seeds):
        tasks, res = taskmap.generators.table1_instance(seed=seed)
        m = taskmap.map_tasks(tasks, res, seed=seed).mapping
        for labels in (None, True, False):
            yield (f"taskmap table1 seed {seed} labels={labels}", "coalloc.taskmap.plot",
                   lambda mod, t=tasks, r=res, m=m, lb=labels, s=seed: mod.plot_mapping(
                       t, r, m, aggregate=True, labels=lb, seed=s))  # fmt: skip
        for pcs, switches, ring in ((20, 2, 6), (40, 3, 12)):
            ptop, top = tg.deterlab(pcs, switches, seed=seed), tg.ring(ring)
            result = testbed.assign(top, ptop, seed=seed)
            for kw in ({}, {"show_unused": False}, {"labels": False}):
                yield (f"testbed deterlab({pcs}, {switches}) ring({ring}) seed {seed} {kw}",
                       "coalloc.testbed.plot",
                       lambda mod, t=top, p=ptop, r=result, k=kw: mod.plot_mapping(
                           t, p, r, **k))  # fmt: skip


def _svg(fig) -> str:
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    return buf.getvalue()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default="72a0cd9", help="the revision before (default 72a0cd9)")
    ap.add_argument("--seeds", type=count(), default=3, help="seeds per generator (default 3)")
    add_quiet(ap)
    args = ap.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "issue37"
    with tempfile.TemporaryDirectory() as tmp:
        old = {m: _old(m, args.rev, pathlib.Path(tmp)) for m in MODULES}
        new = {m: importlib.import_module(m) for m in MODULES}
        cases = list(_cases(args.seeds))
        differ = [name for name, module, draw in bar(cases, desc="pictures", unit="picture")
                  if _svg(draw(old[module])) != _svg(draw(new[module]))]  # fmt: skip
    print(f"{len(cases) - len(differ)} of {len(cases)} pictures the same SVG as at {args.rev}")
    for name in differ:
        print(f"DIFFERS: {name}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
