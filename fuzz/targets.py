"""Fuzz targets for every family's file readers and for the CLI (issue 15 item 7).

Each target takes the bytes of one file and checks the readers' contract:

* the file is read (and, when the instance is small, solved with the family's default fast
  method, and the result passes the family's verify), or
* it is refused with an :class:`~coalloc.InstanceError` (or ``ValueError``/``TypeError``) whose
  message names the file.

Anything else (another exception, a message without the file name, a solved result that
verify rejects, a CLI exit code other than 0, 1 or 2, a traceback on stderr) raises
:class:`Finding`. The targets are plain functions, so the corpus can be replayed without
atheris (``python fuzz/run.py --replay``); :mod:`run` drives them with atheris.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import tempfile
from typing import Callable, Dict

import coalloc
from coalloc import cli, collective, loadshare, testbed
from coalloc._shared.family import families, kind_of_format
from coalloc._shared.jsonio import InstanceError, load_json
from coalloc.collective import _spec as _collective_spec
from coalloc.collective import io as cio
from coalloc.ctaap import io as ctaap_io
from coalloc.formats import check_document
from coalloc.loadshare import _spec as _loadshare_spec
from coalloc.loadshare import io as lio
from coalloc.taskmap import _spec as _taskmap_spec
from coalloc.taskmap import io as tio
from coalloc.testbed import _spec as _testbed_spec

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")


class Finding(AssertionError):
    """An input that broke the contract of a reader or of the CLI."""


# Scratch files: under $COALLOC_FUZZ_TMP (ci/fuzz.sh removes it), else in memory if possible.
_PARENT = os.environ.get("COALLOC_FUZZ_TMP") or ("/dev/shm" if os.path.isdir("/dev/shm") else None)
if _PARENT:
    os.makedirs(_PARENT, exist_ok=True)
_DIR = tempfile.mkdtemp(prefix="coalloc-fuzz-", dir=_PARENT)


def cleanup() -> None:
    """Remove the scratch folder of the targets."""
    shutil.rmtree(_DIR, ignore_errors=True)


def _write(name: str, data: bytes) -> str:
    path = os.path.join(_DIR, name)
    with open(path, "wb") as fh:
        fh.write(data)
    return path


def _refused(exc: BaseException, path: str) -> None:
    """A refusal must be an InstanceError/ValueError/TypeError naming the file."""
    if not isinstance(exc, (InstanceError, ValueError, TypeError)):
        raise Finding(f"unexpected {type(exc).__name__}: {exc}") from exc
    text = str(exc)
    if os.path.basename(path) not in text:
        raise Finding(f"{type(exc).__name__} does not name the file: {text!r}") from exc
    if "\n" in text.strip() or len(text) > 2000:
        raise Finding(f"the message is not one short line: {text[:300]!r}") from exc


def _read(reader: Callable, path: str):
    try:
        return reader(path)
    except RecursionError as exc:
        raise Finding(f"RecursionError: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - classified by _refused
        _refused(exc, path)
        return None


def _solve_verify(inst, small: bool) -> None:
    """Solve a small instance with the default method; a success must pass verify."""
    if not small:
        return
    try:
        result = inst.solve(seed=0)
    except (ValueError, TypeError) as exc:  # a model the solver refuses cleanly
        if "Traceback" in str(exc):
            raise Finding(str(exc)) from exc
        return
    if result.success:
        report = inst.verify(result)
        if not report.ok:
            raise Finding(f"{inst.family}: a solved result fails verify: {report}")


# ------------------------------------------------------------------------ partner files


def _partners() -> Dict[str, str]:
    """Fixed valid files that a fuzzed file is paired with (a .top with a fuzzed .ptop...)."""
    out = {}
    r, o = coalloc.generators.fig2(1, n_tasks=6, n_clusters=3, seed=1)
    out["ctaap"] = os.path.join(_DIR, "p-ctaap.json")
    ctaap_io.write_instance(out["ctaap"], r, o)
    res = coalloc.solve(r, o, seed=0)
    out["ctaap_result"] = os.path.join(_DIR, "p-ctaap-result.json")
    ctaap_io.write_result(out["ctaap_result"], res)
    tasks, rg = small_taskmap()
    out["tasks"] = os.path.join(_DIR, "p-tasks.json")
    out["resources"] = os.path.join(_DIR, "p-resources.json")
    tio.write_task_graph(out["tasks"], tasks)
    tio.write_resource_graph(out["resources"], rg)
    pool, req = _collective_small()
    out["pool"] = os.path.join(_DIR, "p-pool.json")
    out["request"] = os.path.join(_DIR, "p-request.json")
    cio.write_pool(out["pool"], pool)
    cio.write_request(out["request"], req)
    top, ptop = testbed.parse_top(TOP), testbed.parse_ptop(PTOP)
    out["top"] = os.path.join(_DIR, "p.top")
    out["ptop"] = os.path.join(_DIR, "p.ptop")
    testbed.write_top(out["top"], top)
    testbed.write_ptop(out["ptop"], ptop)
    prob = _loadshare_small()
    out["problem"] = os.path.join(_DIR, "p-problem.json")
    lio.write_problem(out["problem"], prob)
    out["swf"] = os.path.join(_DIR, "p-jobs.swf")
    with open(out["swf"], "w", encoding="ascii") as fh:
        fh.write(SWF)
    out["gap"] = os.path.join(_DIR, "p-gap.txt")
    lio.write_gap(out["gap"], [loadshare.generate_gap("a", 2, 4, seed=0),
                               loadshare.generate_gap("d", 3, 3, seed=1)])  # fmt: skip
    out["out"] = os.path.join(_DIR, "p-output")  # what a fuzzed command may write
    out["top_ok"] = os.path.join(_DIR, "p-ok.top")  # an experiment PTOP's PCs can host
    testbed.write_top(out["top_ok"], testbed.parse_top(TOP_OK))
    return out


#: The small instances of the fuzzers' seeds and partner files are the families' own (each
#: family's spec draws its ``fuzz_seeds`` from them): one definition, here and there.
small_taskmap = _taskmap_spec.small
_collective_small = _collective_spec.small
_loadshare_small = _loadshare_spec.small
PTOP, TOP = _testbed_spec.SMALL_PTOP, _testbed_spec.SMALL_TOP

SWF = """\
; Version: 2.2
1 0 5 100 4 -1 -1 4 120 -1 1 1 1 1 1 -1 -1 -1
2 10 0 50 2 -1 2048 2 60 4096 1 1 1 1 1 -1 -1 -1
3 400 0 300 1 -1 -1 1 600 -1 1 1 1 1 1 -1 -1 -1
"""

TOP_OK = """\
node a pc ?+mem:1024
node b pc3000
link ab a b 100000 0 0
"""

_P: Dict[str, str] = {}


def partner(key: str) -> str:
    """The path of a fixed valid partner file (created on first use)."""
    if not _P:
        _P.update(_partners())
    return _P[key]


# ----------------------------------------------------------------------------- targets


def t_taskmap(data: bytes) -> None:
    path = _write("fuzz-taskmap.json", data)
    # the same bytes as a task graph, a resource graph and a combined instance
    tasks = _read(tio.read_task_graph, path)
    res = _read(tio.read_resource_graph, path)
    got = _read(tio.read_instance, path)
    if tasks is not None:
        rg = tio.read_resource_graph(partner("resources"))
        _solve_verify(coalloc.taskmap.Instance(tasks, rg), tasks.n <= 60)
    if res is not None:
        _solve_verify(coalloc.taskmap.Instance(tio.read_task_graph(partner("tasks")), res),
                      res.n_nodes <= 60)  # fmt: skip
    if got is not None:
        _solve_verify(coalloc.taskmap.Instance(*got), got[0].n <= 60 and got[1].n_nodes <= 60)


def _collective_small_enough(pool) -> bool:
    return pool.n_nodes * pool.n_properties * max(len(pool.times), 1) <= 5000


def t_collective_json(data: bytes) -> None:
    path = _write("fuzz-collective.json", data)
    pool = _read(cio.read_pool, path)
    req = _read(cio.read_request, path)
    inst = _read(cio.read_instance, path)
    _read(cio.read_workload, path)
    if pool is not None:
        _solve_verify(collective.Instance(cio.read_request(partner("request")), pool),
                      _collective_small_enough(pool))  # fmt: skip
    if req is not None:
        _solve_verify(collective.Instance(req, cio.read_pool(partner("pool"))),
                      req.count <= 50)  # fmt: skip
    if inst is not None:
        _solve_verify(
            collective.Instance(inst[1], inst[0]),
            _collective_small_enough(inst[0]) and inst[1].count <= 50,
        )


# ------------------------------------------------------------------ the line formats' targets
#
# One target per line format of a registered family's spec (``FamilySpec.line_formats``,
# its ``target`` name): the bytes are read with the declared reader (a refusal names the
# file); what it reads, a format with a writer writes back and reads again; and, where a
# family's solver takes it, what is read is solved on a partner file and verified (the
# follow-ups below, by format name). A line format added to a spec is fuzzed by that alone.


def _after_csv_pool(pool, path) -> None:
    _solve_verify(collective.Instance(cio.read_request(partner("request")), pool),
                  _collective_small_enough(pool))  # fmt: skip


def _after_swf(jobs, path) -> None:
    try:
        cio.swf_requests(
            jobs[:50], memory_property="mem", procs_property="cores", source=path
        )  # as the command line passes it
    except Exception as exc:  # noqa: BLE001
        _refused(exc, path)


def _after_top(top, path) -> None:
    _solve_verify(testbed.Instance(top, testbed.read_ptop(partner("ptop"))),
                  len(top.nodes) <= 40)  # fmt: skip


def _after_ptop(ptop, path) -> None:
    _solve_verify(testbed.Instance(testbed.read_top(partner("top")), ptop),
                  len(ptop.nodes) <= 60)  # fmt: skip


def _after_gap(insts, path) -> None:
    if insts:
        g = insts[0]
        if g.m * g.n <= 200:
            try:
                res = loadshare.solve_gap(g, "heuristic", iterations=200, with_bound=False)
            except (ValueError, TypeError):
                return
            if res.success and not loadshare.verify_gap(g, res.assignment).ok:
                raise Finding(f"a GAP greedy result fails verify: {res}")


def _after_task_graph(tasks, path) -> None:
    rg = tio.read_resource_graph(partner("resources"))
    _solve_verify(coalloc.taskmap.Instance(tasks, rg), tasks.n <= 60)


def _after_snapshot(pool, path) -> None:
    _after_csv_pool(pool, path)


#: What is done with a line file once read, by format name (none: read and written back).
AFTER: Dict[str, Callable] = {
    "csv.pool": _after_csv_pool, "swf.log": _after_swf, "emulab.top": _after_top,
    "emulab.ptop": _after_ptop, "orlib.gap": _after_gap, "metis.graph": _after_task_graph,
    "scotch.graph": _after_task_graph, "coalloc.collective.pool-snapshot": _after_snapshot,
}  # fmt: skip


def registered_line_formats() -> list:
    """``(family, LineFormat)`` of every registered family's line formats, in the registry's
    order (``FamilySpec.line_formats``): one fuzz target each (``LineFormat.target``)."""
    return [(name, fmt) for name, spec in families().items() for fmt in spec.line_formats]


def line_target(fmt) -> Callable[[bytes], None]:
    """The fuzz target of one line format: read, written back and read again, then the
    format's follow-up (:data:`AFTER`)."""
    suffix = fmt.suffixes[0] if fmt.suffixes else ".txt"

    def target(data: bytes) -> None:
        path = _write(f"fuzz-{fmt.target}{suffix}", data)
        got = _read(fmt.read, path)
        if got is None:
            return
        if fmt.write is not None:
            again = os.path.join(_DIR, f"again-{fmt.target}{suffix}")
            try:
                fmt.write(again, got)
                fmt.read(again)
            except Exception as exc:  # noqa: BLE001 - what the reader took must write back
                raise Finding(f"{fmt.name}: what the reader took does not write and read back: "
                              f"{type(exc).__name__}: {exc}") from exc  # fmt: skip
        follow = AFTER.get(fmt.name)
        if follow is not None:
            follow(got, path)

    target.__name__ = f"t_{fmt.target}"
    target.__doc__ = f"A {fmt.description} file ({fmt.name}): :func:`line_target`."
    return target


def t_instances(data: bytes) -> None:
    """Any instance file, read through the list of families (``coalloc.batch.read_problem``:
    its ``"format"`` picks the problem kind, a file without one is a CTAAP instance); a small
    one is solved with its kind's default method and its success must pass verify. Its seeds
    are every family's own (``FamilySpec.fuzz_seeds``): a sixth family is fuzzed here by
    registering."""
    from coalloc.batch import read_problem

    path = _write("fuzz-instance.json", data)
    problem = _read(read_problem, path)
    if problem is not None:
        _solve_verify(problem, len(data) <= 1500)


def registered_formats() -> list:
    """``(family, FileFormat)`` of every registered family's JSON formats, in the registry's
    order (``FamilySpec.formats``): the formats :func:`t_formats` picks from."""
    return [(name, fmt) for name, spec in families().items() for fmt in spec.formats]


def t_formats(data: bytes) -> None:
    """A document of any registered format (the first byte picks it, in
    :func:`registered_formats`' order; the rest is the file): the readers' checker
    (``coalloc.formats.check_document``) takes it or refuses it naming the file; a problem
    kind's format is also read as the batch layer reads it (the kind's ``from_dict``), which
    may refuse more but never takes what the checker refuses, and a small instance read is
    solved and must pass verify. A sixth family's formats are fuzzed here by registering."""
    if not data:
        return
    fmts = registered_formats()
    family, fmt = fmts[data[0] % len(fmts)]
    path = _write(f"fuzz-{fmt.name}.json", data[1:])
    got = _read(load_json, path)
    if got is None:
        return
    doc, name = got
    checked = True
    try:
        check_document(fmt.name, doc, name)
    except RecursionError as exc:
        raise Finding(f"RecursionError: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - classified by _refused
        _refused(exc, path)
        checked = False
    kind = kind_of_format(fmt.name)
    if kind is None:
        return
    problem = _read(lambda p: kind.from_dict(doc, source=name), path)
    if problem is None:
        return
    if not checked:
        raise Finding(f"{family}: {fmt.name}: the reader took a document its checker refuses")
    _solve_verify(problem, len(data) <= 1500)


def _run_cli(argv, path) -> None:
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(argv)
    except SystemExit as exc:
        code = exc.code
    except BaseException as exc:  # noqa: BLE001 - anything else is a finding
        raise Finding(f"coalloc {' '.join(argv)}: {type(exc).__name__}: {exc}") from exc
    text = err.getvalue()
    if code not in (0, 1, 2):
        raise Finding(f"coalloc {' '.join(argv)}: exit code {code!r}; stderr {text[-500:]!r}")
    if "Traceback" in text:
        raise Finding(f"coalloc {' '.join(argv)}: a traceback: {text[-1000:]}")
    named = os.path.basename(path) in text or "usage:" in text
    if code == 2 and not named:
        raise Finding(f"coalloc {' '.join(argv)}: the error does not name the file: {text!r}")


def _cli_commands(p: str) -> list:
    return [
        ["ctaap", "solve", p],
        ["taskmap", "map", p, partner("resources")],
        ["taskmap", "map", partner("tasks"), p],
        ["collective", "solve", partner("request"), p],  # p: a pool (REQUEST POOL)
        ["collective", "solve", p, partner("pool")],  # p: a request
        ["testbed", "assign", p, partner("ptop")],
        ["testbed", "assign", partner("top"), p],
        ["loadshare", "share", p, "--method", "bfd"],
        ["loadshare", "gap", p, "--method", "heuristic"],
        ["collective", "simulate", partner("pool"), p, "--limit", "20"],
    ]


def t_cli(data: bytes) -> None:
    """``coalloc <family> solve`` on a fuzzed input file; the first byte picks the command."""
    if not data:
        return
    path = _write("fuzz-cli-input", data[1:])
    cmds = _cli_commands(path)
    _run_cli(cmds[data[0] % len(cmds)], path)


def t_results(data: bytes) -> None:
    """The verify commands on a fuzzed result file; the first byte picks the family."""
    if not data:
        return
    path = _write("fuzz-result.json", data[1:])
    cmds = [
        ["ctaap", "verify", partner("ctaap"), path],
        ["taskmap", "verify", partner("tasks"), partner("resources"), path],
        ["collective", "verify", partner("request"), partner("pool"), path],
        ["testbed", "verify", partner("top"), partner("ptop"), path],
        ["loadshare", "verify", partner("problem"), path],
    ]
    _run_cli(cmds[data[0] % len(cmds)], path)


#: The numeric and parameter options of the three newer families' commands (issue 30 item
#: 6), each on small valid partner files: ``(command line, option, kind)``, the fuzzed value
#: is given as ``OPTION=VALUE``. ``number``: a strict number type (a value the command takes
#: must be an ASCII decimal numeral); ``param``: ``-p KEY=VALUE`` (a JSON value).
def _option_commands() -> list:
    pool, req, swf = partner("pool"), partner("request"), partner("swf")
    top, ptop, prob, gap, out = (partner(k) for k in ("top_ok", "ptop", "problem", "gap", "out"))
    sim = ["collective", "simulate", pool, swf, "--limit=3"]
    return [
        (["collective", "solve", req, pool], "--seed", "number"),
        (["collective", "solve", req, pool, "--method", "exact"], "--time-limit", "number"),
        (["collective", "solve", req, pool, "--method", "scan"], "-p", "param:max_rounds"),
        (["collective", "solve", req, pool, "--method", "cankar"], "-p", "param:l2"),
        (["collective", "solve", req, pool, "--method", "cankar"], "-p", "param:m_init"),
        (["collective", "solve", req, pool, "--method", "exact"], "-p", "param:enumerate_limit"),
        (sim, "--slot-seconds", "number"),
        (sim, "--procs-per-node", "number"),
        (sim, "--max-wait", "number"),
        (["collective", "simulate", pool, swf], "--limit", "number"),
        (["collective", "generate", "request", "-o", out], "--count", "number"),
        (["testbed", "assign", top, ptop], "--seed", "number"),
        (["testbed", "assign", top, ptop, "--method", "exact"], "--time-limit", "number"),
        (["testbed", "assign", top, ptop], "--exact-bound", "number"),
        (["testbed", "assign", top, ptop, "--method", "exact"], "-p", "param:threads"),
        (["testbed", "assign", top, ptop, "--method", "exact"], "-p", "param:time_limit_s"),
        (["loadshare", "share", prob, "--method", "bfd"], "--coalition-size", "number"),
        (["loadshare", "share", prob, "--method", "bfd"], "--latency", "number"),
        (["loadshare", "share", prob, "--method", "dmcf-gga"], "-p", "param:th_c"),
        (["loadshare", "share", prob, "--method", "dmcf-gga"], "-p", "param:max_generations"),
        (["loadshare", "share", prob, "--method", "dmcf-gga"], "-p", "param:patience"),
        (["loadshare", "share", prob, "--method", "exact"], "--time-limit", "number"),
        (["loadshare", "share", prob, "--method", "exact"], "-p", "param:max_variables"),
        (["loadshare", "gap", gap], "--instance", "number"),
        (["loadshare", "gap", gap], "--seed", "number"),
        (["loadshare", "gap", gap, "--method", "exact"], "--time-limit", "number"),
    ]


_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


def t_options(data: bytes) -> None:
    """An option value of a collective, testbed or load-sharing command: the first byte picks
    the command and option, the rest (UTF-8) is the value. The command exits 0, 1 or 2 with
    no traceback; a refusal (2) is one line ``coalloc: error: ...``; a numeric option never
    takes a value that is not an ASCII decimal numeral (``1_0``, ``١٢``, ``inf``, ``nan``)."""
    if not data:
        return
    cmds = _option_commands()
    argv, option, kind = cmds[data[0] % len(cmds)]
    value = data[1:].decode("utf-8", errors="replace").replace("\x00", "")
    if kind.startswith("param:"):
        argv = [*argv, f"--param={kind[6:]}={value}"]
    else:
        argv = [*argv, f"{option}={value}"]
    code, err = _exit_and_stderr(argv)
    lines = err.strip().splitlines()
    if code == 2 and (len(lines) != 1 or not lines[0].startswith("coalloc: error: ")):
        raise Finding(f"coalloc {' '.join(argv)}: a refusal that is not one line: {err!r}")
    if kind == "number" and code != 2 and not _DECIMAL.fullmatch(value):
        raise Finding(f"coalloc {' '.join(argv)}: took {value!r} as a number (exit {code})")


def _exit_and_stderr(argv) -> tuple:
    """Run ``coalloc ARGV`` in this process: (exit code, stderr); a traceback, another
    exception or an exit code other than 0, 1, 2 is a :class:`Finding`."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(argv)
    except SystemExit as exc:
        code = exc.code
    except BaseException as exc:  # noqa: BLE001 - anything else is a finding
        raise Finding(f"coalloc {' '.join(argv)}: {type(exc).__name__}: {exc}") from exc
    text = err.getvalue()
    if code not in (0, 1, 2):
        raise Finding(f"coalloc {' '.join(argv)}: exit code {code!r}; stderr {text[-500:]!r}")
    if "Traceback" in text:
        raise Finding(f"coalloc {' '.join(argv)}: a traceback: {text[-1000:]}")
    return code, text


TARGETS: Dict[str, Callable[[bytes], None]] = {
    "taskmap": t_taskmap,
    "collective_json": t_collective_json,
    # the line formats' (collective_csv, swf, testbed_top, testbed_ptop, gap, ...): one per
    # LineFormat of a registered spec
    **{fmt.target: line_target(fmt) for _, fmt in registered_line_formats()},
    "instances": t_instances,
    "formats": t_formats,
    "options": t_options,
    "results": t_results,
    "cli": t_cli,
}
