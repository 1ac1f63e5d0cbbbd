"""Step-1 results of this build against another build of coalloc, bit for bit.

    python bench/ctaap/bit_identity.py --other /path/to/python

runs the same instances through ``--other`` (a Python with another build installed, e.g.
the build before a kernel change; the pre-``ctaap`` layout ``coalloc.solve`` /
``coalloc.generators`` is understood too) in a subprocess, and compares
``result.assignment`` and ``result.weights`` with ``np.array_equal``: fig2(r, seed) for
r in 1..5 and seeds 0..19, fig3(n, seed) for n in (50, 200, 500) and seeds 0..4.
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np


def instances():
    for r in range(1, 6):
        for s in range(20):
            yield f"fig2_r{r}_s{s}", ("fig2", r, s)
    for n in (50, 200, 500):
        for s in range(5):
            yield f"fig3_n{n}_s{s}", ("fig3", n, s)


def dump(path, wrap=lambda items: items):
    try:
        from coalloc.ctaap import generators, solve
    except ImportError:  # the layout before coalloc.ctaap
        from coalloc import generators, solve
    out = {}
    for key, (gen, a, s) in wrap(list(instances())):
        req, off = getattr(generators, gen)(a, seed=s)
        res = solve(req, off, seed=0)
        out[key + "_assignment"] = np.asarray(res.assignment)
        out[key + "_weights"] = np.asarray(res.weights)
    np.savez(path, **out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    try:  # this file also runs as a plain script under the other build (--dump)
        from bench.shared._progress import add_quiet, bar
    except ImportError:
        add_quiet, bar = None, None
    if add_quiet is not None:
        add_quiet(ap)
    ap.add_argument("--other", required=True, help="Python interpreter of the other build")
    ap.add_argument("--dump", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.dump:
        dump(args.dump)
        return
    with tempfile.TemporaryDirectory() as tmp:
        mine, theirs = os.path.join(tmp, "mine.npz"), os.path.join(tmp, "theirs.npz")
        cmd = [os.path.abspath(__file__), "--other", "-", "--dump"]
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        subprocess.run([args.other, *cmd, theirs], check=True, cwd=tmp, env=env)
        dump(mine, lambda items: bar(items, desc="this build", unit="inst"))
        a, b = np.load(mine), np.load(theirs)
        bad = [k for k in a.files if not np.array_equal(a[k], b[k])]
        keys = {k.rsplit("_", 1)[0] for k in a.files}
        print(f"{len(keys)} instances, {len(a.files)} arrays compared; {len(bad)} differ")
        for k in bad:
            print("  differs:", k)
        sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
