"""Every option of the ``coalloc`` command that writes a file goes through the one writer.

The options are found by walking the argument parsers (every subcommand of every group, the
top-level aliases and ``plot`` included): an option that writes is an
:class:`coalloc.cli._common.OutputPath`, and an option that looks like one (its name or help
says it writes) but is not fails :func:`test_no_writing_option_bypasses_the_registry`. Each
registered option must appear in :data:`COMMANDS` (a command line that works), write its file
through :func:`coalloc._shared.jsonio.atomic_output`, and refuse every input of its command:
the same path, the path spelt another way, a symlink to it and a hard link to it, leaving the
input byte-identical and no file behind.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Tuple

import pytest

import coalloc
from coalloc._shared import jsonio
from coalloc.cli import build_parser, main
from coalloc.cli._common import OutputPath

ROOT = Path(__file__).resolve().parents[2]

# ----------------------------------------------------------------- the parsers


def walk(parser: argparse.ArgumentParser, path: Tuple[str, ...] = ()) -> Iterator[tuple]:
    """``(command path, parser)`` of the parser and every subcommand below it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk(sub, path + (name,))


def takes_a_value(action: argparse.Action) -> bool:
    return action.nargs != 0 and not isinstance(
        action, (argparse._SubParsersAction, argparse._HelpAction, argparse._VersionAction)
    )


#: An option whose name says it names an output (``-o``, ``--output``, ``--records``,
#: ``--save``, ``--reserve-to``, ``--log-file`` ...) or whose help says it writes a file.
_OUTPUT_NAME = re.compile(
    r"(^|[-_])(o|out|outputs?|records?|save|write|dump|export|log|logfile|picture|figure|"
    r"plot|png|svg|pdf|csv|jsonl|target|dest)($|[-_])|[-_](to|file|path|dir)$"
)
_OUTPUT_HELP = re.compile(r"\b(write|save|dump|export)\b|\bwritten (to|here)\b|\bto write\b")


def looks_like_output(action: argparse.Action) -> bool:
    names = [action.dest, *(s.lstrip("-") for s in action.option_strings)]
    return any(_OUTPUT_NAME.search(n.lower()) for n in names) or bool(
        _OUTPUT_HELP.search((action.help or "").lower())
    )


def writing_options(parser: argparse.ArgumentParser) -> Dict[Tuple[Tuple[str, ...], str], str]:
    """``{(command path, option): dest}`` of every registered writing option."""
    found = {}
    for path, p in walk(parser):
        for action in p._actions:
            if isinstance(action, OutputPath):
                found[path, action.option_strings[-1]] = action.dest
    return found


WRITING = writing_options(build_parser())


def test_no_writing_option_bypasses_the_registry():
    unregistered = [
        f"coalloc {' '.join(path)} {action.option_strings or action.dest}"
        for path, p in walk(build_parser())
        for action in p._actions
        if takes_a_value(action)
        and not isinstance(action, OutputPath)
        and looks_like_output(action)
    ]
    assert not unregistered, (
        "options that look like they write a file but are not OutputPath options (add them "
        f"with coalloc.cli._common.add_output_option): {unregistered}"
    )


def test_the_detector_flags_an_unregistered_writer():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers().add_parser("run")
    sub.add_argument("--save-to")
    sub.add_argument("--log-file")
    sub.add_argument("--trace", help="write the trace to this file")
    sub.add_argument("-o")
    sub.add_argument("--timeout", type=float, help="seconds")
    sub.add_argument("--result", help="result file of 'coalloc solve -o'")
    flagged = {
        a.dest for _, p in walk(parser) for a in p._actions
        if takes_a_value(a) and looks_like_output(a)
    }  # fmt: skip
    assert flagged == {"save_to", "log_file", "trace", "o"}


def test_every_group_has_its_writing_options():
    commands = {path for path, _ in WRITING}
    groups = {path[0] for path in commands}
    assert {*coalloc.FAMILIES, "plot"} <= groups
    assert (("collective", "solve"), "--reserve-to") in WRITING
    assert (("collective", "simulate"), "--records") in WRITING
    assert {"solve", "demo", "generate", "solve-batch", "map"} <= {
        path[0] for path in commands if len(path) == 1
    }


# ------------------------------------------------------------------- command lines

Case = Tuple[List[str], Dict[str, Path]]  # argv (without the writing option), inputs


def _run(argv: list) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main([str(a) for a in argv])
    assert status == 0, (argv, out.getvalue())


def _ctaap_instance(d: Path, name: str = "inst.json", seed: int = 0) -> Path:
    path = d / name
    _run(["ctaap", "generate", "fig2", "--n-tasks", "6", "--seed", seed, "-o", path])
    return path


def _taskmap_graphs(d: Path) -> Tuple[Path, Path]:
    from coalloc.taskmap import generators
    from coalloc.taskmap.io import write_resource_graph, write_task_graph

    tasks, resources = generators.table1_instance(1.0, seed=0)
    tp, rp = d / "tasks.json", d / "resources.json"
    write_task_graph(tp, tasks)
    write_resource_graph(rp, resources)
    return tp, rp


def _taskmap_instance(d: Path, name: str) -> Path:
    path = d / name
    _run(["taskmap", "generate", "--seed", len(name), "-o", path])
    return path


def _collective_pool_request(d: Path) -> Tuple[Path, Path]:
    pool, req = d / "pool.json", d / "request.json"
    _run(["collective", "generate", "pool", "--nodes", "30", "-o", pool])  # feasible
    _run(["collective", "generate", "request", "--nodes", "30", "--count", "2", "-o", req])
    return pool, req


def _collective_instance(d: Path, name: str, seed: int) -> Path:
    path = d / name
    _run(["collective", "generate", "instance", "--nodes", "12", "--count", "2", "--seed",
          seed, "-o", path])  # fmt: skip
    return path


def _loadshare_problem(d: Path, name: str = "problem.json", seed: int = 0) -> Path:
    path = d / name
    _run(["loadshare", "generate", "paper", "--nodes", "12", "--seed", seed, "-o", path])
    return path


def _testbed_files(d: Path) -> Tuple[Path, Path]:
    top, ptop = d / "exp.top", d / "bed.ptop"
    _run(["testbed", "generate", "top", "--size", "4", "-o", top])
    _run(["testbed", "generate", "deterlab", "--size", "8", "--switches", "2", "-o", ptop])
    return top, ptop


def case_ctaap_solve(d: Path) -> Case:
    inst = _ctaap_instance(d)
    return ["ctaap", "solve", inst], {"instance": inst}


def case_ctaap_demo(d: Path, monkeypatch) -> Case:
    from coalloc.ctaap import cli as ctaap_cli

    demo = d / "demo.json"
    demo.write_bytes(ctaap_cli._demo_file().read_bytes())
    monkeypatch.setattr(ctaap_cli, "_demo_file", lambda: demo)  # the package's own file
    return ["ctaap", "demo"], {"the built-in demo instance": demo}


def case_ctaap_generate(d: Path) -> Case:
    return ["ctaap", "generate", "fig2", "--n-tasks", "6"], {}


def case_ctaap_solve_batch(d: Path) -> Case:
    a, b = _ctaap_instance(d, "a.json", 1), _ctaap_instance(d, "b.json", 2)
    return ["ctaap", "solve-batch", a, b, "-j", "1", "--quiet"], {"files": a, "files ": b}


def case_taskmap_map(d: Path) -> Case:
    tp, rp = _taskmap_graphs(d)
    return ["taskmap", "map", tp, rp], {"tasks": tp, "resources": rp}


def case_taskmap_generate(d: Path) -> Case:
    return ["taskmap", "generate"], {}


def case_taskmap_solve_batch(d: Path) -> Case:
    a, b = _taskmap_instance(d, "a.json"), _taskmap_instance(d, "bb.json")
    return ["taskmap", "solve-batch", a, b, "-j", "1", "--quiet"], {"files": a, "files ": b}


def case_collective_solve(d: Path) -> Case:
    pool, req = _collective_pool_request(d)
    return ["collective", "solve", req, pool], {"request": req, "pool": pool}


def case_collective_simulate(d: Path) -> Case:
    pool = d / "pool.json"
    _run(["collective", "generate", "pool", "--nodes", "12", "-o", pool])
    swf = d / "w.swf"
    swf.write_text(
        "; two jobs of the Standard Workload Format\n"
        "1 0 0 600 2 -1 -1 2 900 -1 1 1 1 1 1 -1 -1 -1\n"
        "2 60 0 300 1 -1 -1 1 900 -1 1 1 1 1 1 -1 -1 -1\n"
    )
    return ["collective", "simulate", pool, swf], {"pool": pool, "workload": swf}


def case_collective_generate(d: Path) -> Case:
    return ["collective", "generate", "instance", "--nodes", "12", "--count", "2"], {}


def case_collective_solve_batch(d: Path) -> Case:
    a, b = _collective_instance(d, "a.json", 1), _collective_instance(d, "b.json", 2)
    return ["collective", "solve-batch", a, b, "-j", "1", "--quiet"], {"files": a, "files ": b}


def case_testbed_generate(d: Path) -> Case:
    return ["testbed", "generate", "top", "--size", "4"], {}


def case_loadshare_share(d: Path) -> Case:
    prob = _loadshare_problem(d)
    return ["loadshare", "share", prob], {"problem": prob}


def case_loadshare_gap(d: Path) -> Case:
    gap = d / "gap.txt"
    _run(["loadshare", "generate", "a", "--agents", "2", "--items", "6", "-o", gap])
    return ["loadshare", "gap", gap], {"file": gap}


def case_loadshare_generate(d: Path) -> Case:
    return ["loadshare", "generate", "a", "--agents", "2", "--items", "6"], {}


def case_loadshare_solve_batch(d: Path) -> Case:
    a, b = _loadshare_problem(d, "a.json", 1), _loadshare_problem(d, "b.json", 2)
    return ["loadshare", "solve-batch", a, b, "-j", "1", "--quiet"], {"files": a, "files ": b}


def case_plot_ctaap(d: Path) -> Case:
    inst = _ctaap_instance(d)
    res = d / "result.json"
    _run(["ctaap", "solve", inst, "-o", res])
    return ["plot", "ctaap", inst, res], {"instance": inst, "result": res}


def case_plot_taskmap(d: Path) -> Case:
    tp, rp = _taskmap_graphs(d)
    res = d / "mapping.json"
    _run(["taskmap", "map", tp, rp, "-o", res])
    return (["plot", "taskmap", tp, rp, res],
            {"tasks": tp, "resources": rp, "result": res})  # fmt: skip


def case_plot_collective(d: Path) -> Case:
    pool, req = _collective_pool_request(d)
    res = d / "result.json"
    _run(["collective", "solve", req, pool, "-o", res])
    return (["plot", "collective", req, pool, res],
            {"request": req, "pool": pool, "result": res})  # fmt: skip


def case_plot_testbed(d: Path) -> Case:
    top, ptop = _testbed_files(d)
    res = d / "assign.json"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["testbed", "assign", str(top), str(ptop), "--json"]) == 0
    res.write_text(out.getvalue())
    return (["plot", "testbed", top, ptop, res],
            {"top": top, "ptop": ptop, "result": res})  # fmt: skip


def case_plot_loadshare(d: Path) -> Case:
    prob = _loadshare_problem(d)
    res = d / "share.json"
    _run(["loadshare", "share", prob, "-o", res])
    return ["plot", "loadshare", prob, res, "--loads"], {"problem": prob, "result": res}


#: Command -> how to build a working command line and its input files.
def case_collective_explain(d: Path) -> Case:
    """A rejected request (two nodes of 3 cores on a pool with one): a picture to draw."""
    from coalloc import collective as co

    inst = d / "no.json"
    co.io.write_instance(str(inst), co.ResourcePool([[4.0], [2.0]], ["cores"]),
                         co.CollectiveRequest(600, 2, minimum={"cores": 3}))  # fmt: skip
    return ["collective", "explain", inst], {"files": inst}  # (the labels: their dest)


def case_testbed_explain(d: Path) -> Case:
    """An experiment that cannot map (three pc nodes on a testbed of two PCs)."""
    top, ptop = d / "no.top", d / "no.ptop"
    top.write_text("node x pc\nnode y pc\nnode z pc\n")
    ptop.write_text("node sw switch:1\nnode a pc:1\nnode b pc:1\n"
                    "link la a sw 100 0 0\nlink lb b sw 100 0 0\n")  # fmt: skip
    return ["testbed", "explain", top, ptop], {"files": top, "files ": ptop}


COMMANDS: Dict[Tuple[str, ...], Callable] = {
    ("collective", "explain"): case_collective_explain,  # --plot (issue 38)
    ("testbed", "explain"): case_testbed_explain,
    ("ctaap", "solve"): case_ctaap_solve,
    ("ctaap", "demo"): case_ctaap_demo,
    ("ctaap", "generate"): case_ctaap_generate,
    ("ctaap", "solve-batch"): case_ctaap_solve_batch,
    ("taskmap", "map"): case_taskmap_map,
    ("taskmap", "generate"): case_taskmap_generate,
    ("taskmap", "solve-batch"): case_taskmap_solve_batch,
    ("collective", "solve"): case_collective_solve,
    ("collective", "simulate"): case_collective_simulate,
    ("collective", "generate"): case_collective_generate,
    ("collective", "solve-batch"): case_collective_solve_batch,
    ("testbed", "generate"): case_testbed_generate,
    ("loadshare", "share"): case_loadshare_share,
    ("loadshare", "gap"): case_loadshare_gap,
    ("loadshare", "generate"): case_loadshare_generate,
    ("loadshare", "solve-batch"): case_loadshare_solve_batch,
    ("plot", "ctaap"): case_plot_ctaap,
    ("plot", "taskmap"): case_plot_taskmap,
    ("plot", "collective"): case_plot_collective,
    ("plot", "testbed"): case_plot_testbed,
    ("plot", "loadshare"): case_plot_loadshare,
}

#: The top-level aliases: the main job one step away.
ALIASES = {
    ("solve",): ("ctaap", "solve"),
    ("demo",): ("ctaap", "demo"),
    ("generate",): ("ctaap", "generate"),
    ("solve-batch",): ("ctaap", "solve-batch"),
    ("map",): ("taskmap", "map"),
}

#: The suffix each output wants (pictures: their format; the rest: JSON).
SUFFIX = {
    ("collective", "simulate", "--output"): ".csv",
    ("testbed", "generate", "--output"): ".top",
    ("loadshare", "gap", "--output"): ".jsonl",
    ("loadshare", "generate", "--output"): ".txt",
    ("collective", "explain", "--plot"): ".png",
    ("testbed", "explain", "--plot"): ".png",
}


def _build(command: Tuple[str, ...], d: Path, monkeypatch) -> Case:
    full = ALIASES.get(command, command)
    make = COMMANDS[full]
    argv, inputs = make(d, monkeypatch) if full == ("ctaap", "demo") else make(d)
    argv = [str(a) for a in argv]
    if command in ALIASES:
        argv = list(command) + argv[len(full) :]
    return argv, inputs


def _suffix(command: Tuple[str, ...], option: str) -> str:
    full = ALIASES.get(command, command)
    return ".png" if full[0] == "plot" else SUFFIX.get((*full, option), ".json")


def _needs_matplotlib(command: Tuple[str, ...]) -> None:
    if command[0] == "plot" or command[-1] == "explain":  # explain: only --plot writes
        pytest.importorskip("matplotlib", reason="the [plot] extra (CI installs it)")
        import matplotlib

        matplotlib.use("Agg")


def test_every_writing_option_has_a_command_line():
    missing = sorted({ALIASES.get(c, c) for c, _ in WRITING} - set(COMMANDS))
    assert not missing, f"add a command line for these writing commands to COMMANDS: {missing}"


OPTION_IDS = [f"{' '.join(c)} {o}" for c, o in WRITING]


@pytest.fixture
def written(monkeypatch) -> list:
    """The files the one writer renamed into place, in order."""
    seen: list = []
    real = jsonio._publish

    def spy(buf, target, mode):
        real(buf, target, mode)
        seen.append(target)

    monkeypatch.setattr(jsonio, "_publish", spy)
    return seen


@pytest.mark.slow
@pytest.mark.parametrize("command, option", list(WRITING), ids=OPTION_IDS)
def test_writing_option_writes_through_the_writer(tmp_path, monkeypatch, capsys, written,
                                                  command, option):  # fmt: skip
    _needs_matplotlib(command)
    d = tmp_path / "in"
    d.mkdir()
    argv, inputs = _build(command, d, monkeypatch)
    snapshot = {p: p.read_bytes() for p in inputs.values()}
    out = tmp_path / f"out{_suffix(command, option)}"
    del written[:]  # the inputs were written by the same writer
    status = main(argv + [option, str(out)])
    err = capsys.readouterr().err
    assert status in (0, 1), err  # 1: a solve without a verified solution still writes
    assert out.is_file() and out.stat().st_size > 0
    assert str(out.resolve()) in written
    assert {p: p.read_bytes() for p in inputs.values()} == snapshot
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["in", out.name])


def _reads_nothing(command: Tuple[str, ...]) -> bool:
    return ALIASES.get(command, command)[-1] == "generate"


REFUSALS = [
    (c, o, k)
    for c, o in WRITING
    if not _reads_nothing(c)
    for k in ("same", "respelt", "symlink", "hardlink")
]  # fmt: skip


@pytest.mark.parametrize("command", sorted({c for c, _ in WRITING if _reads_nothing(c)}))
def test_generate_commands_read_no_file(tmp_path, monkeypatch, command):
    from coalloc.cli import files_of

    d = tmp_path / "in"
    d.mkdir()
    argv, inputs = _build(command, d, monkeypatch)
    parser = build_parser()
    _, candidates = files_of(parser, parser.parse_args(argv + ["-o", str(tmp_path / "x")]))
    assert inputs == {} and not [v for _, v in candidates if os.path.exists(v)]


@pytest.mark.parametrize(
    "command, option, kind", REFUSALS, ids=[f"{' '.join(c)} {o} {k}" for c, o, k in REFUSALS]
)
def test_writing_option_refuses_every_input(tmp_path, monkeypatch, capsys, written,
                                            command, option, kind):  # fmt: skip
    d = tmp_path / "in"
    d.mkdir()
    argv, inputs = _build(command, d, monkeypatch)
    assert inputs, "a command that reads files names them in its COMMANDS entry"
    for label, src in inputs.items():
        before = {p.name: p.read_bytes() for p in d.iterdir()}
        if kind == "same":
            target = str(src)
        elif kind == "respelt":
            target = os.path.join(str(src.parent), ".", "..", d.name, src.name)
        elif kind == "symlink":
            target = str(tmp_path / f"sym-{src.name}")
            os.symlink(src, target)
        else:
            target = str(tmp_path / f"hard-{src.name}")
            os.link(src, target)
        extra = sorted(p.name for p in tmp_path.iterdir())
        del written[:]
        capsys.readouterr()
        assert main(argv + [option, target]) == 2, label
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "is also an input" in err[0], err
        assert err[0].startswith("coalloc: error: ") and label.strip() in err[0]
        assert written == []
        assert {p.name: p.read_bytes() for p in d.iterdir()} == before  # byte-identical
        assert sorted(p.name for p in tmp_path.iterdir()) == extra  # nothing new
        if kind == "symlink":
            assert os.readlink(target) == str(src)
        if kind == "hardlink":
            assert os.stat(target).st_ino == os.stat(src).st_ino


def test_two_outputs_naming_one_file_are_refused(tmp_path, capsys):
    d = tmp_path / "in"
    d.mkdir()
    argv, _ = _build(("collective", "solve"), d, None)
    out = tmp_path / "out.json"
    link = tmp_path / "link.json"
    link.symlink_to(out)
    for second in (out, link):
        assert main(argv + ["-o", str(out), "--reserve-to", str(second)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "both name" in err[0]
    assert not out.exists()


def test_standard_output_is_not_an_input(tmp_path, capsys):
    d = tmp_path / "in"
    d.mkdir()
    argv, _ = _build(("ctaap", "solve-batch"), d, None)
    assert main(argv + ["-o", "-"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 and all('"ok":true' in line for line in lines)


# ---------------------------------------------------------------- killed mid-way

_BATCH_CHILD = textwrap.dedent(
    """
    import sys, time
    import coalloc.cli._batch as common  # the batch runner's module: it looks the line up

    real = common._batch_line

    def slow(index, name, record):  # the first line is written; the second never comes
        if index == 1:
            print("wrote one line", flush=True)
            time.sleep(600)
        return real(index, name, record)

    common._batch_line = slow
    from coalloc.cli import main

    main(sys.argv[1:])
    """
)


@pytest.mark.slow
def test_command_killed_mid_write_keeps_the_old_output_and_leaves_nothing(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    argv, _ = _build(("ctaap", "solve-batch"), d, None)
    out = tmp_path / "results.jsonl"
    out.write_bytes(b"the old results\n")
    # the child imports the coalloc this process runs (installed, or a source tree with
    # its compiled modules), not the checkout's src/ (no compiled modules in a fresh clone)
    here = Path(coalloc.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(here), str(ROOT)])}
    child = subprocess.Popen(
        [sys.executable, "-c", _BATCH_CHILD, *argv, "-o", str(out)],
        stdout=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    line = child.stdout.readline()
    if "wrote one line" not in line:
        child.kill()
        child.wait()
        pytest.fail(f"the command did not reach its second line: {line!r}")
    os.kill(child.pid, signal.SIGKILL)
    assert child.wait() == -signal.SIGKILL
    child.stdout.close()
    assert out.read_bytes() == b"the old results\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "results.jsonl"]
