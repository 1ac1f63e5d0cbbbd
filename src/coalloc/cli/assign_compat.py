"""``coalloc-assign`` / ``coalloc testbed assign-compat``: a drop-in for Emulab's ``assign``.

It takes ``assign``'s command line (``[-s SEED] [options] PTOP TOP [NAME=VALUE ...]``, the
``.ptop`` first), maps with the package's default method (:func:`coalloc.testbed.assign`),
checks the mapping with :func:`coalloc.testbed.verify_mapping` and prints what ``assign``
prints and what Emulab's wrappers read: ``seed = N``, the prechecks, the ``BEST SCORE``,
``With V violations`` and ``Violations:`` lines, then ``Nodes:`` ... ``End Nodes``,
``Edges:`` ... ``End Edges`` (each physical link followed by its ``(srcmac,dstmac)``) and
``End solution``. Exit status as ``assign``'s: 0 a mapping without violations, 1 none
found (retryable), 2 impossible (a ``***`` line says why), 255 bad input or command line.
See ``coalloc docs testbed`` ("assign-compat").
"""

from __future__ import annotations

import getopt
import os
import re
import sys
import time
from typing import IO, Any, Dict, List, Optional, Sequence, Tuple

__all__ = ["main", "run", "EXIT_OK", "EXIT_RETRYABLE", "EXIT_UNRETRYABLE", "EXIT_FATAL",
           "VIOLATION_NAMES"]  # fmt: skip

#: assign's exit statuses (``common.h``): success, retryable, unretryable, fatal (-1).
EXIT_OK, EXIT_RETRYABLE, EXIT_UNRETRYABLE, EXIT_FATAL = 0, 1, 2, 255
#: assign's getopt string (its text-format build, plus ``-W``/``-f`` of the XML build).
OPTIONS = "s:v:l:t:rpPTdH:oguc:nx:y:FDRS:W:f:"
#: The counters of assign's ``Violations:`` block, in its order, with their labels.
VIOLATION_NAMES = (
    ("unassigned", "unassigned:  "), ("pnode_load", "pnode_load:  "),
    ("no_connect", "no_connect:  "), ("link_users", "link_users:  "),
    ("bandwidth", "bandwidth:   "), ("desires", "desires:     "), ("vclass", "vclass:      "),
    ("delay", "delay:       "), ("trivial_mix", "trivial mix: "), ("subnodes", "subnodes:    "),
    ("max_types", "max_types:   "), ("endpoints", "endpoints:   "),
)  # fmt: skip
#: verify_mapping's constraints -> the assign counter they count in.
_COUNTER_OF = {
    "unassigned": "unassigned", "unknown_pnode": "unassigned",
    "type": "pnode_load", "slots": "pnode_load", "one_type_at_a_time": "pnode_load",
    "additive": "desires", "desire": "desires", "policy": "desires",
    "vclass": "vclass", "type_limit": "max_types",
    "bandwidth": "bandwidth", "trunk_bandwidth": "bandwidth", "interface_bandwidth": "bandwidth",
    "interface_shared": "link_users", "trivial_on_two_nodes": "trivial_mix",
    "trivial_not_ok": "trivial_mix",
}  # fmt: skip

_USAGE = """assign [options] ptopfile topfile [cparams]
Options:
  -l <time>   - Limit runtime.
  -s <seed>   - Set the seed.
  -v <viz>    - Produce graphviz files with given prefix (accepted, ignored).
  -r          - Don't allow trivial links.
  -p -d -P -T -o -g -F -D -R - accepted, no effect (annealer switches).
  -H <float>  - Try <float> times harder (accepted, no effect).
  -t <float>  - Start the temperature at <float> (accepted, no effect).
  -u          - Print a summary of the solution.
  -c <float>  - Connected pnode finding (accepted, no effect).
  -n          - Don't map - just do the prechecks.
  -x <file>   - Specify a text ptop file
  -y <file>   - Specify a text top file
  -S <str>    - Vnode packing strategy, 'balance' or 'pack' (accepted, no effect).
  -f <T>[/<T>] - File formats: only 'text' is read.
  cparams     - NAME=VALUE configuration parameters (accepted, no effect).
(coalloc's drop-in for Emulab's assign: the mapping is coalloc.testbed's default method)"""

_INT_PREFIX = re.compile(r"\s*([+-]?[0-9]+)", re.ASCII)
_FLOAT_PREFIX = re.compile(r"\s*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


class _Fatal(Exception):
    """Bad input or command line: the message (may be empty: the usage) and exit 255."""


def _usage(out: IO[str]) -> int:
    print(_USAGE, file=out)
    return EXIT_FATAL


def _c_int(text: str) -> Optional[int]:
    """What C's ``sscanf("%d")`` reads from ``text`` (a leading integer), or None."""
    m = _INT_PREFIX.match(text)
    return int(m.group(1)) if m and len(m.group(1)) < 20 else None


def _c_float(text: str) -> Optional[float]:
    """What C's ``sscanf("%lf")`` reads from ``text`` (a leading number), or None."""
    m = _FLOAT_PREFIX.match(text)
    return float(m.group(0)) if m else None


def _options(argv: Sequence[str]) -> Dict[str, Any]:
    """assign's command line read as its getopt loop reads it (GNU getopt: options may
    follow the files); raises :class:`_Fatal` (the usage) on anything assign refuses."""
    try:
        opts, rest = getopt.gnu_getopt(list(argv), OPTIONS)
    except getopt.GetoptError:
        raise _Fatal("") from None
    cfg: Dict[str, Any] = {"seed": 0, "limit": None, "no_trivial": False, "summary": False,
                           "prechecks_only": False, "ptop": "", "top": ""}  # fmt: skip
    for flag, value in opts:
        if flag == "-s":
            seed = _c_int(value)
            if seed is None:
                raise _Fatal("")
            cfg["seed"] = seed
        elif flag == "-l":
            limit = _c_float(value)
            if limit is None:
                raise _Fatal("")
            cfg["limit"] = limit if limit > 0 else None  # (assign: 0 is no limit)
        elif flag in ("-t", "-H", "-c"):
            if _c_float(value) is None:
                raise _Fatal("")
        elif flag == "-S":
            if value not in ("balance", "pack"):
                raise _Fatal("")
        elif flag in ("-x", "-y"):
            if not value:
                raise _Fatal("")
            cfg["ptop" if flag == "-x" else "top"] = value
        elif flag == "-f":
            if any(part != "text" for part in value.split("/", 1)) or not value:
                raise _Fatal("*** Only the text formats are read (-f text), not " + value)
        elif flag == "-r":
            cfg["no_trivial"] = True
        elif flag == "-u":
            cfg["summary"] = True
        elif flag == "-n":
            cfg["prechecks_only"] = True
        # -v -W -p -P -T -d -o -g -F -D -R: accepted, no effect on this mapper
    for key in ("ptop", "top"):
        if not cfg[key] and rest:
            cfg[key] = rest.pop(0)
    for extra in rest:  # assign's configuration parameters NAME=VALUE (no effect here)
        name, _, value = extra.partition("=")
        if not name or not value:
            raise _Fatal(f"*** Expected a configuration parameter, got {extra}")
    if not cfg["ptop"] or not cfg["top"]:
        raise _Fatal("")
    if cfg["seed"] == 0:  # as assign: $ASSIGN_SEED, else the time and the process id
        env = _c_int(os.environ.get("ASSIGN_SEED", ""))
        cfg["seed"] = env if env else int(time.time()) + os.getpid()
    cfg["seed"] &= 0xFFFFFFFF  # (srandom's unsigned seed: a negative one wraps)
    return cfg


def _read(cfg: Dict[str, Any]) -> Tuple[Any, Any]:
    from .. import testbed as tb
    from .._shared.jsonio import InstanceError

    for key in ("ptop", "top"):
        if not os.path.isfile(cfg[key]):
            raise _Fatal(f"*** Unable to open {key} file {cfg[key]}")
    try:  # each file by its content: a swap (TOP PTOP, coalloc testbed's order) is named
        top, ptop = tb.io.read_topologies(
            cfg["top"], cfg["ptop"], order="PTOP TOP", command="coalloc-assign"
        )
    except InstanceError as exc:  # one line naming the file, the line and the token
        raise _Fatal(" ".join(str(exc).split())) from None
    files = {"ptop": ptop}
    if cfg["no_trivial"] and any(lk.trivial_ok for lk in top.links.values()):
        from dataclasses import replace

        top = tb.VirtualTopology(
            top.nodes.values(),
            [replace(lk, flags=lk.flags - {"trivial_ok"}) for lk in top.links.values()],
            vclasses=top.vclasses, fixed=top.fixed, hints=top.hints,
        )  # fmt: skip
    return files["ptop"], top


def _type_precheck(top: Any, ptop: Any) -> List[str]:
    """assign's type precheck: the ``***`` lines of what fails (empty when it passes).

    Each type's slots over the testbed (a count ``*`` is 10000, as assign counts it) must
    cover the slots the experiment's nodes of that type ask for, and a ``set-type-limit``
    must allow that many; a vclass needs one member type the testbed offers.
    """
    slots: Dict[str, float] = {}
    for p in ptop.nodes.values():
        for table in (p.types, p.static):
            for t, n in table.items():
                slots[t] = slots.get(t, 0.0) + (10000.0 if n == float("inf") else n)
    wanted: Dict[str, float] = {}
    used_vclasses = []
    for v in top.nodes.values():
        if v.type in top.vclasses:
            if v.type not in used_vclasses:
                used_vclasses.append(v.type)
        else:
            wanted[v.type] = wanted.get(v.type, 0.0) + v.slots
    lines = []
    for t in sorted(wanted):
        n = _num(wanted[t])
        if t not in slots:
            lines.append(f"  *** No available physical nodes of type {t} found ({n} requested)")
            continue
        if slots[t] < wanted[t]:
            lines.append(f"  *** {n} nodes of type {t} requested, but only {_num(slots[t])} "
                         f"available nodes of type {t} found")  # fmt: skip
        limit = ptop.type_limits.get(t)
        if limit is not None and limit < wanted[t]:
            lines.append(f"  *** {n} nodes of type {t} requested, but you are only allowed "
                         f"to use {limit}")  # fmt: skip
    for name in sorted(used_vclasses):
        if not any(slots.get(t, 0) > 0 for t in top.vclasses[name][1]):
            lines.append(f"  *** No available physical nodes can satisfy vclass {name}")
    return lines


def _num(x: float) -> str:
    """A number as C++'s ``ostream`` prints a double by default (``%g``)."""
    return f"{x:g}"


def _mac(lk: Any) -> str:
    """``(srcmac,dstmac)`` of a physical link: the ``mac[/iface]`` after each end's ``:``
    in the ``.ptop`` line, in the line's order, ``(null)`` where none was given."""
    return f"({lk.a_iface or '(null)'},{lk.b_iface or '(null)'})"


def _edge_line(name: str, route: Any, kind: str, pnode: Optional[str], ptop: Any) -> str:
    """One line of assign's ``Edges:`` section."""
    if route is None:
        return f"{name} Mapping Failed"
    if route == "trivial" or kind == "trivial":
        lb = f"{pnode}:loopback ({pnode}/null,(null))"
        return f"{name} trivial {lb} {lb} "
    links = [ptop.links[p] for p in route]
    if kind == "interswitch":
        return f"{name} interswitch " + "".join(f" {lk.name} {_mac(lk)}" for lk in links)
    first, last = links[0], links[-1]  # (direct: one link, printed twice as assign does)
    return f"{name} {kind} {first.name} {_mac(first)} {last.name} {_mac(last)}"


def _counters(report: Any, nv_unassigned: int) -> Dict[str, int]:
    counts = {name: 0 for name, _ in VIOLATION_NAMES}
    counts["unassigned"] = nv_unassigned
    for v in getattr(report, "violations", ()) or ():
        key = _COUNTER_OF.get(v.get("constraint"), "no_connect")
        if key == "unassigned" and nv_unassigned:
            continue  # (already counted)
        counts[key] += 1
    return counts


def _summary(top: Any, ptop: Any, result: Any) -> List[str]:
    """assign's ``-u`` summary: each physical node in use, its virtual nodes and bandwidth."""
    load: Dict[str, int] = {}
    acting: Dict[str, str] = {}
    for v, p in result.mapping.items():
        load[p] = load.get(p, 0) + 1
        acting.setdefault(p, top.nodes[v].type)
    bw: Dict[str, float] = {}
    for e, route in result.routes.items():
        if route == "trivial":
            continue
        lk_bw = top.links[e].bw
        for p in route:
            bw[p] = bw.get(p, 0.0) + (ptop.links[p].bw if lk_bw is None else lk_bw)
    lines = ["Summary:"]
    used = 0
    for name, p in ptop.nodes.items():
        mine = [lk for lk in ptop.interfaces(name) if bw.get(lk.name)]
        if not load.get(name) and not (p.is_switch and mine):
            continue
        used += 0 if p.is_switch else 1
        total = sum(bw.get(lk.name, 0.0) for lk in mine)
        kind = acting.get(name, "(null)")  # (as assign: a switch hosting nothing has no type)
        lines.append(f"{name} {load.get(name, 0)} vnodes, {_num(total)} nontrivial BW, "
                     f"0 trivial BW, type={kind}")  # fmt: skip
        for lk in mine:
            other = lk.b if lk.a == name else lk.a
            if p.is_switch and not ptop.nodes[other].is_switch:
                continue
            lines.append(f"    {_num(bw[lk.name])} {lk.name}")
    lines += [f"Total physical nodes used: {used}", "End summary"]
    return lines


def run(argv: Sequence[str], out: Optional[IO[str]] = None) -> int:
    """Run the drop-in on ``argv`` (assign's arguments), printing to ``out``.

    Parameters
    ----------
    argv : sequence of str
        ``[-s SEED] [options] PTOP TOP [NAME=VALUE ...]`` as ``assign`` takes them.
    out : text stream, optional
        Where assign's output goes (standard output by default).

    Returns
    -------
    int
        0 mapped without violations, 1 no mapping found (retryable), 2 impossible (a
        ``***`` line says why), 255 bad input or command line.

    Examples
    --------
    >>> import io, os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, "t.ptop"), "w") as f:
    ...     _ = f.write("node sw switch:1\\nnode a pc:1\\nnode b pc:1\\n"
    ...                 "link la a:eth0 sw 100 0 0 ethernet\\nlink lb b sw 100 0 0 ethernet\\n")
    >>> with open(os.path.join(d, "t.top"), "w") as f:
    ...     _ = f.write("node x pc\\nnode y pc\\nlink l x y 100 0 0 ethernet\\n")
    >>> buf = io.StringIO()
    >>> run(["-s", "1", os.path.join(d, "t.ptop"), os.path.join(d, "t.top")], buf)
    0
    >>> print(buf.getvalue()[buf.getvalue().index("Nodes:"):], end="")
    Nodes:
    x a
    y b
    End Nodes
    Edges:
    l intraswitch la (eth0,(null)) lb ((null),(null))
    End Edges
    End solution
    """
    out = sys.stdout if out is None else out
    try:
        cfg = _options(argv)
    except _Fatal as exc:
        if str(exc):
            print(exc, file=out)
            return EXIT_FATAL
        return _usage(out)
    print(f"seed = {cfg['seed']}", file=out)
    try:
        ptop, top = _read(cfg)
    except _Fatal as exc:
        print(exc, file=out)
        return EXIT_FATAL
    try:
        return _map(cfg, top, ptop, out)
    except (ValueError, TypeError) as exc:  # what the files hold that the mapper refuses
        print(f"*** Internal error: {' '.join(str(exc).split())}", file=out)
        return EXIT_FATAL


#: Seconds ``coalloc-assign`` gives the explanation it prints after a failure.
EXPLAIN_SECONDS = 5.0


def _map(cfg: Dict[str, Any], top: Any, ptop: Any, out: IO[str]) -> int:
    from .. import testbed as tb
    from ..testbed.reasons import reason_text

    def say(*lines: str) -> None:
        for line in lines:
            print(line, file=out)

    def explain_failure() -> None:
        """After assign's own failure lines, one more in its style: the minimal conflict
        and the nearest experiment that maps (:func:`coalloc.testbed.explain_mapping`)."""
        budget = EXPLAIN_SECONDS if cfg["limit"] is None else min(EXPLAIN_SECONDS, cfg["limit"])
        found = tb.explain_mapping(top, ptop, time_limit=max(0.1, budget))
        if found is not None:
            say(f"*** Why: {found.sentence}")

    say(f"Physical Graph: {len(ptop.nodes)}", f"Virtual Graph: {len(top.nodes)}")
    for p in top.fixed.values():  # as assign: a fixed node on an unknown node is fatal
        if p not in ptop.nodes:
            say(f"*** Fixed physical node: {p} not available.",
                "*** Some fixed nodes failed to map")  # fmt: skip
            return EXIT_UNRETRYABLE
    say("Type precheck:")
    failed = _type_precheck(top, ptop)
    if failed:
        say(*failed, "*** Type precheck failed!")
        explain_failure()
        return EXIT_UNRETRYABLE
    say("Type precheck passed.")
    params = {} if cfg["limit"] is None else {"time_limit": cfg["limit"]}
    t0 = time.process_time()
    result = tb.assign(top, ptop, seed=cfg["seed"], **params)
    seconds = time.process_time() - t0
    reason = result.reason or {}
    constraint = reason.get("constraint")
    say("Node mapping precheck:")
    if result.mapping is None and constraint == "no_candidate":
        why = reason.get("why") or {}
        for v in reason.get("vnodes", ()):
            fails = why.get(v, "no physical node fits") if isinstance(why, dict) else why
            say(f"  *** No possible mapping for {v}", f"      fails: {fails}")
        say("*** Node mapping precheck failed!")
        explain_failure()
        return EXIT_UNRETRYABLE
    say("Node mapping precheck succeeded", "Policy precheck:")
    if result.mapping is None and constraint == "policy":
        say(f"  *** {reason_text(reason)}", "*** Policy precheck failed!")
        explain_failure()
        return EXIT_UNRETRYABLE
    say("Policy precheck succeeded")
    if result.mapping is None and constraint == "fixed":
        say(f"*** Fixed node: Could not map {reason_text(reason)}",
            "*** Some fixed nodes failed to map")  # fmt: skip
        explain_failure()
        return EXIT_UNRETRYABLE
    if result.mapping is None and result.status == "infeasible":
        say(f"*** No mapping is possible: {reason_text(reason)}")
        explain_failure()
        return EXIT_UNRETRYABLE
    if cfg["prechecks_only"]:
        say("Doing only prechecks, exiting early")
        return EXIT_OK

    mapping = result.mapping or {}
    report = None
    if result.mapping is not None:
        report = tb.verify_mapping(top, ptop, result.mapping, result.routes)
    unassigned = sum(1 for v in top.nodes if v not in mapping)
    counts = _counters(report, unassigned)
    violated = sum(counts.values())
    iters = sum(int(x) for x in (result.iterations or {}).values())
    score = result.score if result.score is not None else float(unassigned)
    if result.mapping is None:
        say(f"*** {result.message or reason_text(reason)}")
        explain_failure()
    say(f"   BEST SCORE:  {_num(score)} in {iters} iters and {_num(seconds)} seconds",
        f"With {violated} violations", f"Iters to find best score:  {iters}",
        f"Violations: {violated}")  # fmt: skip
    say(*(f"  {label}{counts[name]}" for name, label in VIOLATION_NAMES))
    say("Nodes:")
    for v in top.nodes:
        say(f"{v} {mapping[v]}" if v in mapping else f"unassigned: {v}")
    say("End Nodes", "Edges:")
    for e, lk in top.links.items():
        route = result.routes.get(e) if result.mapping is not None else None
        say(_edge_line(e, route, result.kinds.get(e, ""), mapping.get(lk.a), ptop))
    say("End Edges", "End solution")
    if cfg["summary"] and result.mapping is not None:
        say(*_summary(top, ptop, result))
    return EXIT_OK if violated == 0 else EXIT_RETRYABLE


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The ``coalloc-assign`` console command: :func:`run` on the command line.

    As ``assign``: SIGINT and SIGUSR1 end it with ``*** Killed with signal N - exiting!``
    and status 2 (unretryable); a reader of its output that stops early ends it quietly
    (status 141, as a process killed by SIGPIPE).

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        assign's exit status (see :func:`run`).
    """
    import signal

    def killed(signum: int, frame: Any) -> None:
        raise _Killed(signum)

    import threading

    handled = [getattr(signal, n) for n in ("SIGINT", "SIGUSR1") if hasattr(signal, n)]
    if threading.current_thread() is not threading.main_thread():
        handled = []  # (signal handlers belong to the main thread)
    before = {sig: signal.signal(sig, killed) for sig in handled}
    try:
        status = run(sys.argv[1:] if argv is None else argv)
        sys.stdout.flush()
        return status
    except _Killed as exc:
        print(f"*** Killed with signal {exc.args[0]} - exiting!", flush=True)
        return EXIT_UNRETRYABLE
    except BrokenPipeError:  # the reader went away: nothing more to say (as coalloc's)
        from . import _broken_pipe

        return _broken_pipe()
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


class _Killed(Exception):
    """A signal that ends the run as assign's handler ends it."""


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
