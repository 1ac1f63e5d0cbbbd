"""The contract audit's command-line sample (:mod:`bench.shared.contract_audit`): an
instance written to files, ``python -m coalloc ...`` in a fresh process in text mode with
``-o`` and with ``--json``, whose printed status must equal the written one
(:func:`cli_check`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, List, Optional

from bench.shared.audit_cases import ROOT


def _cli_argv(kind: str, inst: Any, d: Path) -> List[str]:
    from coalloc import collective as co
    from coalloc import ctaap as ct
    from coalloc import loadshare as ls
    from coalloc import taskmap as tm
    from coalloc import testbed as tb

    if kind == "ctaap":
        ct.write_instance(d / "i.json", *inst)
        return ["ctaap", "solve", str(d / "i.json")]
    if kind == "taskmap":
        tm.io.write_instance(d / "i.json", *inst)
        return ["taskmap", "map", str(d / "i.json")]
    if kind == "collective":
        co.io.write_request(d / "r.json", inst.request)
        co.io.write_pool(d / "p.json", inst.pool)
        return ["collective", "solve", str(d / "r.json"), str(d / "p.json")]
    if kind == "testbed":
        tb.io.write_top(d / "e.top", inst.top)
        tb.io.write_ptop(d / "b.ptop", inst.ptop)
        return ["testbed", "assign", str(d / "e.top"), str(d / "b.ptop")]
    if kind == "loadshare":
        ls.io.write_problem(d / "g.json", inst.problem)
        return ["loadshare", "share", str(d / "g.json")]
    ls.io.write_gap(d / "g.txt", [inst.instance])
    argv = ["loadshare", "gap", str(d / "g.txt")]
    if inst.instance.sense:
        argv += ["--sense", inst.instance.sense]
    return argv


#: The timed command lines' walls as a user times them (the whole fresh process, text mode):
#: ``(kind, method, limit, seconds)`` per timed :func:`cli_check`, for a report.
WALLS: List[tuple] = []

#: Judge those walls too: one over ``limit + max(0.05, 0.05 limit)`` is a violation. Off by
#: default: a fresh process's start-up (the interpreter, the imports, the parser: 0.5-0.7 s
#: on a quiet 2-core VM, over 1 s under load) is over the audit's 0.5 s by itself (issue 40,
#: h58tail: every family's CLI; see bench/testbed/ISSUE36.md).
CLI_WALL_CHECK = False


HAS_OUTPUT = {"ctaap", "taskmap", "collective", "loadshare", "gap"}
HAS_JSON = {"ctaap", "taskmap", "collective", "testbed", "loadshare"}
WORDS = {"optimal": r"\boptimal\b", "feasible": r"(?<![-\w])feasible\b",
         "infeasible": r"\binfeasible\b", "time_limit": r"\btime[ _]limit\b",
         "no_solution": r"\bno[ _]solution\b", "error": r"\berror\b"}  # fmt: skip


def _printed(text: str) -> set:
    """Status words on the lines where a command states its outcome (its first line, the
    ``status``/``quality`` lines, a testbed command's ``#`` lines)."""
    lines, inside = [], False
    for ln in text.splitlines():
        if re.match(r"^(Nodes|Edges):", ln):
            inside = True
        elif re.match(r"^End (Nodes|Edges)", ln):
            inside = False
        elif ln.strip() and not inside:
            lines.append(ln)
    head = [ln for ln in lines if re.match(r"^\s*(#|quality\b|status\b)", ln)]
    first = next((ln for ln in lines if not ln.startswith("#")), None)
    if first is not None and not first[:1].isspace():
        head.insert(0, first)
    return {s for s, rx in WORDS.items() if re.search(rx, "\n".join(head))}


def _status_of(doc: Any) -> Optional[str]:
    if isinstance(doc, dict):
        if isinstance(doc.get("status"), str):
            return doc["status"]
        for key in ("result", "results"):
            if key in doc:
                return _status_of(doc[key])
    if isinstance(doc, list) and doc:
        return _status_of(doc[0])
    return None


def _docs(text: str) -> List[Any]:
    text = text.strip()
    if not text:
        return []
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        return [json.loads(ln) for ln in text.splitlines() if ln.strip().startswith("{")]


def cli_check(kind: str, inst: Any, method: str, limit: Optional[float]) -> List[str]:
    """One fresh process in text mode (``-o`` where the command writes a file) and one with
    ``--json``: the printed status must be the written one; exit 0 exactly with an answer."""
    import coalloc  # the coalloc in use (the checkout's src/ or another tree) runs the CLI

    src = str(Path(coalloc.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([src, str(ROOT)]))
    out: List[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        argv = _cli_argv(kind, inst, d) + ["--method", method, "--seed", "0"]
        if limit is not None:
            argv += ["--time-limit", repr(limit)]
        cmd = [sys.executable, "-m", "coalloc"]
        text_argv = argv + (["-o", str(d / "out.json")] if kind in HAS_OUTPUT else [])
        t0 = time.perf_counter()
        p = subprocess.run(cmd + text_argv, capture_output=True, text=True, env=env, timeout=300)
        wall = time.perf_counter() - t0
        if limit is not None:
            WALLS.append((kind, method, limit, wall))
            if CLI_WALL_CHECK and wall > limit + max(0.05, 0.05 * limit):
                out.append(f"CLI took {wall:.2f} s as a process at --time-limit {limit:g}")
        printed = _printed(p.stdout)
        written = None
        if kind in HAS_OUTPUT:
            docs = _docs((d / "out.json").read_text()) if (d / "out.json").exists() else []
            written = _status_of(docs[0]) if docs else None
            if written is None:
                out.append(f"CLI: no status in -o (rc={p.returncode}: {p.stderr.strip()[-120:]})")
            else:
                doc = docs[0].get("result", docs[0]) if isinstance(docs[0], dict) else {}
                holds = isinstance(doc, dict) and doc.get(type(inst).SOLUTION_FIELD) is not None
                # one rule (docs/architecture.md): 0 exactly with an answer, a proven
                # infeasible GAP included (it exited 0 before issue 36's follow-up)
                if (p.returncode == 0) != holds:
                    out.append(f"CLI exits {p.returncode} with a written result that "
                               f"{'holds' if holds else 'holds no'} answer")  # fmt: skip
        if kind in HAS_JSON:
            q = subprocess.run(cmd + argv + ["--json"], capture_output=True, text=True, env=env,
                               timeout=300)  # fmt: skip
            docs = _docs(q.stdout)
            js = _status_of(docs[0]) if docs else None
            if js is None:
                out.append(f"CLI --json: no status (rc={q.returncode}: {q.stderr.strip()[-120:]})")
            else:
                if written is None:
                    written = js
                elif limit is None and js != written:
                    out.append(f"CLI --json says {js!r}, -o wrote {written!r}")
                doc = docs[0].get("result", docs[0]) if isinstance(docs[0], dict) else {}
                for old in ("lower_bound", "bound_gap"):
                    if isinstance(doc, dict) and old in doc:
                        out.append(f"CLI --json has {old!r}")
        if kind not in HAS_OUTPUT and limit is not None:  # two runs: each may stop elsewhere
            if len(printed) != 1:
                out.append(f"CLI prints {sorted(printed) or 'no status'} (one status expected)")
        elif written is not None and printed != {written}:
            out.append(f"CLI prints {sorted(printed) or 'no status'}, writes {written!r}")
    return out

