"""``coalloc-assign`` against Emulab's real ``assign``: exit codes and output sections.

Each case is a pair of files (Emulab's own ``test.ptop``/``test.top`` from
``tests/testbed/data/emulab`` and small typed variants of them: too many nodes, a node of
degree 3, a trunk too thin for a ring, a zero bandwidth, a policy, a type limit, an unknown
fixed node, a link type only one node has, a missing file). Both programs run as processes
with ``-s 1``; the table shows their exit codes (0 mapped, 1 retryable, 2 impossible, 255
bad input), the first ``***`` or error line of each, and whether both print the sections
(``Nodes:`` ... ``End solution``) when they map. The real ``assign`` is a peer built outside
the project (``../shared/notes/peers.md``): give its path with ``--assign`` or
``$COALLOC_ASSIGN``::

    python -m bench.testbed.assign_compat_codes --assign /work/peers/assign/assign-2016
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.shared._progress import add_quiet, bar, say

DATA = Path(__file__).resolve().parents[2] / "tests" / "testbed" / "data" / "emulab"


def _cases(d: Path) -> list:
    test_ptop, test_top = (DATA / "test.ptop").read_text(), (DATA / "test.top").read_text()
    ring = ("node s1 switch:1\nnode s2 switch:1\nnode a pc:1\nnode b pc:1\nnode c pc:1\n"
            "node d pc:1\n" + "".join(f"link {p}{k} {p}:{p}{k} {s} 100 0 0 ethernet\n"
                                      for p, s in zip("abcd", ["s1", "s1", "s2", "s2"])
                                      for k in range(2))
            + "link t s1 s2 100 0 0 ethernet\n")  # fmt: skip
    files = {
        "test.ptop": test_ptop, "test.top": test_top,
        "five.top": "".join(f"node {v} pc\n" for v in "ABCDE") + "link l A B 100 0 0 ethernet\n",
        "deg3.top": "node A pc\nnode B pc\nnode C pc\nlink l1 A B 100 0 0 ethernet\n"
                    "link l2 A C 100 0 0 ethernet\nlink l3 A C 100 0 0 ethernet\n",
        "ring.ptop": ring,
        "ring.top": "node w pc\nnode x pc\nnode y pc\nnode z pc\n" + "".join(
            f"link l{i} {a} {b} 100 0 0 ethernet\n"
            for i, (a, b) in enumerate(["wx", "xy", "yz", "zw"])),
        "bad.ptop": test_ptop + "link l9 pa S 0 0 0 ethernet\n",
        "pol.ptop": "node S switch:1\nnode pa pc:1 - special:0.5\nnode pb pc:1\n"
                    "link l1 pa S 100 0 0 ethernet\nlink l2 pb S 100 0 0 ethernet\n"
                    "policy desire special disallow\n",
        "pol.top": "node A pc special:0.5\nnode B pc\nlink vl1 A B 100 0 0 ethernet\n",
        "lim.ptop": test_ptop + "set-type-limit pc 2\n",
        "fix.top": test_top + "fix-node A nowhere\n",
        "air.top": "node A pc\nnode B pc\nlink vl1 A B 100 0 0 80211\n",
    }  # fmt: skip
    for name, text in files.items():
        (d / name).write_text(text)
    pairs = [("test.ptop", "test.top"), ("test.ptop", "five.top"), ("test.ptop", "deg3.top"),
             ("ring.ptop", "ring.top"), ("bad.ptop", "test.top"), ("pol.ptop", "pol.top"),
             ("lim.ptop", "test.top"), ("test.ptop", "fix.top"), ("test.ptop", "air.top"),
             ("missing.ptop", "test.top")]  # fmt: skip
    return [(d / p, d / t) for p, t in pairs]


def _first_reason(text: str) -> str:
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("***") or "ptop:" in s.lower() or "top:" in s.lower():
            return s[:70]
    return ""


def _sections(text: str) -> bool:
    lines = text.splitlines()
    return all(x in lines for x in ("Nodes:", "End Nodes", "Edges:", "End Edges", "End solution"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--assign", default=os.environ.get("COALLOC_ASSIGN"),
                    help="path of Emulab's assign binary (default $COALLOC_ASSIGN)")  # fmt: skip
    add_quiet(ap)
    args = ap.parse_args(argv)
    if not args.assign or not os.access(args.assign, os.X_OK):
        say(f"the real assign is missing (--assign or $COALLOC_ASSIGN; got {args.assign!r}): "
            "see ../shared/notes/peers.md")  # fmt: skip
        return 2
    ours = [sys.executable, "-m", "coalloc.cli.assign_compat"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for ptop, top in bar(_cases(Path(tmp)), desc="cases", unit="case"):
            out = {}
            for who, cmd in (("assign", [args.assign]), ("ours", ours)):
                run = subprocess.run([*cmd, "-s", "1", str(ptop), str(top)], capture_output=True,
                                     text=True, cwd=tmp, timeout=300)  # fmt: skip
                out[who] = (run.returncode, _first_reason(run.stdout), _sections(run.stdout))
            rows.append((f"{ptop.name} {top.name}", out))
    say(f"{'case':22s} {'assign':>6s} {'ours':>5s}  sections  first *** / error line "
        "(assign | ours)")  # fmt: skip
    same = 0
    for name, out in rows:
        (rc_a, why_a, sec_a), (rc_o, why_o, sec_o) = out["assign"], out["ours"]
        same += rc_a == rc_o
        sections = "both" if sec_a and sec_o else "-" if not (sec_a or sec_o) else "DIFFER"
        say(f"{name:22s} {rc_a:6d} {rc_o:5d}  {sections:8s}  {why_a} | {why_o}")
    say(f"same exit code in {same} of {len(rows)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
