"""Per-phase CPU of the file workflow: a new free-testbed ``.ptop`` text per experiment.

Issue 25 (fourth run): in ``bench.testbed.vs_assign``'s file workflow each experiment
gets a ``.ptop`` text of the testbed as it then is (only the free PCs, each trunk with its
residual bandwidth, a trunk with none left dropped) and a ``.top``, and a warm process
reads both and maps. This script times the phases of that on the bench's DeterLab-like
testbed (``make_generator("deterlab", ...)``: 160 PCs behind 4 switches), over
``--texts`` random states (random PCs in use, a third of the trunks partly or wholly used)
and the first experiments of the bench's workload, one fresh state text per experiment:

* ``read .ptop``: ``parse_ptop`` of the state's text;
* ``read .top``: ``parse_top`` of the experiment's text;
* ``tables``: the per-testbed tables on the freshly read testbed (``problem._testbed_part``);
* ``first solve``: ``assign`` (default method) on it (the router's and the checker's
  per-testbed tables, then the mapping);
* ``mapping``: the same ``assign`` again (every table warm: the mapping alone).

CPU time of this process (``time.process_time``), median per text. Run it with this tree's
and another checkout's ``src`` on ``PYTHONPATH`` (e.g. at the same time) to compare::

    nice python -m bench.testbed.free_texts --texts 200
    PYTHONPATH=/work/main/src:. nice python -m bench.testbed.free_texts --texts 200

The answers of the first solves are hashed (``answers``): equal hashes, same answers.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import statistics
import time

import coalloc.testbed as tb
from bench.shared._progress import add_quiet, bar
from bench.testbed.vs_assign import _typed, free_testbed, make_generator
from coalloc.testbed import problem as tbp


def states(n: int, seed: int):
    """``n`` (free-testbed text, experiment text) pairs of the DeterLab-like bench."""
    ptop, wl = make_generator("deterlab", max(n, 1), seed)
    rng = random.Random(seed)
    pcs = [k for k, x in ptop.nodes.items() if not x.is_switch]
    trunks = [lk.name for lk in ptop.links.values()
              if ptop.nodes[lk.a].is_switch and ptop.nodes[lk.b].is_switch]  # fmt: skip
    out = []
    for k in range(n):
        used = set(rng.sample(pcs, rng.randrange(0, len(pcs) // 2)))
        load = {}
        for t in rng.sample(trunks, len(trunks) // 3):
            bw = ptop.links[t].bw
            load[t] = bw if rng.random() < 0.2 else bw * rng.random()
        ptext = _typed(tb.format_ptop(free_testbed(ptop, used, load)), "ptop")
        out.append((ptext, _typed(tb.format_top(wl[k][2]), "top")))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    add_quiet(ap)
    args = ap.parse_args(argv)
    pairs = states(args.texts, args.seed)
    times = {k: [] for k in ("read .ptop", "read .top", "tables", "first solve", "mapping")}
    digest = hashlib.blake2b(digest_size=8)
    for k, (ptext, ttext) in enumerate(bar(pairs, desc="free texts", unit="text")):
        c0 = time.process_time()
        ptop = tb.parse_ptop(ptext)
        c1 = time.process_time()
        top = tb.parse_top(ttext)
        c2 = time.process_time()
        tbp._testbed_part(ptop)
        c3 = time.process_time()
        r = tb.assign(top, ptop, "assign+", seed=k)
        c4 = time.process_time()
        tb.assign(top, ptop, "assign+", seed=k)
        c5 = time.process_time()
        for name, dt in zip(times, (c1 - c0, c2 - c1, c3 - c2, c4 - c3, c5 - c4)):
            times[name].append(dt * 1000)
        digest.update(repr((r.status, r.mapping, r.routes, r.score)).encode())
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"{len(pairs)} free texts (DeterLab-like, seed {args.seed}), CPU ms, median per "
          f"text; coalloc from {os.path.dirname(tb.__file__)}")  # fmt: skip
    for k, v in med.items():
        print(f"  {k:12} {v:6.2f}")
    total = med["read .ptop"] + med["read .top"] + med["tables"] + med["first solve"]
    print(f"  per experiment (sum of the medians of the first four) {total:.2f}; "
          f"answers {digest.hexdigest()}; load {os.getloadavg()}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
