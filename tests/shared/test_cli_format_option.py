"""Issue 39: ``--format`` forces the reader in every family's commands that read instance
files, from one shared place (:func:`coalloc.cli._common.add_format`).

Each forced format reads its file (the answer is the one content detection gives), and a
file that does not parse as the forced format ends the command with one line, exit 2, that
says what the file looked like and what the command expected ("X looks like ...; CMD
expects ..."); a malformed file *of* the forced format keeps its reader's own message.
"""

from __future__ import annotations

import argparse
import json
import re

import pytest

from coalloc import collective, ctaap, loadshare, testbed
from coalloc.cli import _common as common
from coalloc.cli import build_parser, main
from coalloc.taskmap import ResourceGraph, TaskGraph
from coalloc.taskmap.graphfiles import write_metis_graph
from coalloc.taskmap.io import write_instance as write_taskmap_instance
from coalloc.taskmap.io import write_resource_graph, write_task_graph

SCOTCH = "0\n3 6\n0 000\n2 1 2\n2 0 2\n2 0 1\n"
TOP = "node a pc\nnode b pc\nlink l a b 100 0 0\n"
PTOP = (
    "node pc1 pc:1 - fast:1\nnode pc2 pc:1 -\nnode sw switch:1 -\n"
    "link l1 pc1:e0 sw:p1 1000 0 0 ethernet\nlink l2 pc2:e0 sw:p2 1000 0 0 ethernet\n"
)
CSV_POOL = "node,cores,ram\nn0,4,8\nn1,2,2\nn2,8,16\n"


@pytest.fixture
def files(tmp_path):
    """One file of every format a command reads, each named so that its suffix says nothing."""
    t = tmp_path
    # ctaap
    request, offer = ctaap.generators.fig2(1, n_tasks=8, seed=3)
    ctaap.write_instance(t / "ctaap.dat", request, offer)
    # testbed
    (t / "exp.txt").write_text(TOP)
    (t / "bed.txt").write_text(PTOP)
    testbed.write_instance(t / "tb.dat", testbed.read_top(t / "exp.txt"),
                           testbed.read_ptop(t / "bed.txt"))  # fmt: skip
    # collective: a request and the same pool as JSON, CSV and .npz
    (t / "pool.csv").write_text(CSV_POOL)
    pool = collective.read_pool_csv(str(t / "pool.csv"))
    collective.write_pool(t / "pool.dat", pool)
    collective.io.write_pool_snapshot(str(t / "snap.npz"), pool)
    (t / "snap.bin").write_bytes((t / "snap.npz").read_bytes())
    (t / "table.bin").write_text(CSV_POOL)
    req = collective.CollectiveRequest(600.0, 2, earliest_start=0.0, latest_start=3600.0,
                                       minimum={"cores": 2.0}, total={"cores": 6.0})  # fmt: skip
    collective.write_request(t / "req.dat", req)
    # GAP: OR-Library text and JSON
    inst = loadshare.generate_gap("d", 3, 8, seed=1)
    loadshare.write_gap(t / "gap.dat", [inst], multi=False)
    (t / "gapj.dat").write_text(json.dumps(loadshare.gap_to_dict(inst)))
    # task mapping: METIS, Scotch and JSON task graphs, a resource graph
    tasks = TaskGraph([1.0, 2.0, 1.0], [[0, 1, 1], [1, 0, 1], [1, 1, 0]])
    resources = ResourceGraph.from_edges([0, 3.0, 3.0], [[0, 1], [0, 2]], [50.0, 50.0])
    write_metis_graph(t / "metis.dat", tasks)
    (t / "scotch.dat").write_text(SCOTCH)
    write_task_graph(t / "tasks.dat", tasks)
    write_resource_graph(t / "res.json", resources)
    write_taskmap_instance(t / "tm.json", tasks, resources)
    return t


def _run(argv, capsys):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err.strip().splitlines()


#: (argv with {name} for the fixture's files, the forced format): each reads.
READS = [
    (["ctaap", "solve", "{ctaap.dat}"], "json"),
    (["testbed", "assign", "{exp.txt}", "{bed.txt}"], "emulab"),
    (["testbed", "assign", "{tb.dat}"], "json"),
    (["collective", "solve", "{req.dat}", "{pool.dat}"], "json"),
    (["collective", "solve", "{req.dat}", "{table.bin}"], "csv"),
    (["collective", "solve", "{req.dat}", "{snap.bin}"], "npz"),
    (["loadshare", "gap", "{gap.dat}"], "orlib"),
    (["loadshare", "gap", "{gapj.dat}"], "json"),
    (["taskmap", "map", "{metis.dat}", "{res.json}"], "metis"),
    (["taskmap", "map", "{scotch.dat}", "{res.json}"], "scotch"),
    (["taskmap", "map", "{tasks.dat}", "{res.json}"], "json"),
]

#: (argv, a wrong forced format, what the file looks like).
WRONG = [
    (["ctaap", "solve", "{metis.dat}"], "json", "looks like a METIS graph"),
    (["testbed", "assign", "{bed.txt}", "{exp.txt}"], "emulab",
     "looks like a physical topology (.ptop)"),
    (["testbed", "assign", "{exp.txt}"], "json", "looks like a virtual topology (.top)"),
    (["collective", "solve", "{req.dat}", "{pool.dat}"], "npz", "looks like a JSON document"),
    (["collective", "solve", "{req.dat}", "{snap.bin}"], "json", "looks like a zip archive"),
    (["collective", "solve", "{req.dat}", "{snap.bin}"], "csv", "looks like a zip archive"),
    (["loadshare", "gap", "{gapj.dat}"], "orlib", "looks like a JSON document"),
    (["loadshare", "gap", "{metis.dat}"], "json", "looks like a METIS graph"),
    (["taskmap", "map", "{tasks.dat}", "{res.json}"], "metis", "looks like a JSON document"),
    (["taskmap", "map", "{scotch.dat}", "{res.json}"], "metis", "looks like a Scotch graph"),
]  # fmt: skip


def _argv(template, t):
    return [str(t / a[1:-1]) if a.startswith("{") else a for a in template]


@pytest.mark.parametrize("template,fmt", READS, ids=lambda x: x if isinstance(x, str) else x[0])
def test_each_forced_format_reads_as_content_detection_does(files, capsys, template, fmt):
    argv = _argv(template, files)
    rc_auto, out_auto, _ = _run([*argv, "--seed", "1"], capsys)
    rc, out, err = _run([*argv, "--seed", "1", "--format", fmt], capsys)
    assert rc == rc_auto and rc in (0, 1), err
    assert _answer(out) == _answer(out_auto)  # the same first line (the answer)


def _answer(out: str) -> str:
    """The first line of a command's output, its timings left out."""
    first = out.splitlines()[0]
    return re.sub(r"\bin [0-9.]+ m?s\b", "in T", first)


@pytest.mark.parametrize("template,fmt,looks", WRONG, ids=lambda x: x if isinstance(x, str)
                         else x[0])  # fmt: skip
def test_a_wrong_forced_format_is_one_line_and_exit_2(files, capsys, template, fmt, looks):
    argv = _argv(template, files)
    rc, out, err = _run([*argv, "--format", fmt], capsys)
    assert rc == 2 and not out
    assert len(err) == 1, err
    line = err[0]
    assert line.startswith("coalloc: error: ") and looks in line, line
    command = " ".join(template[:2])
    assert f"; {command} expects " in line and f"as --format {fmt} says" in line, line


def test_a_malformed_file_of_the_forced_format_keeps_its_readers_message(files, capsys):
    bad = files / "bad.dat"
    bad.write_text("3 3\n2 3\n1 3\n")  # a METIS header promising 3 vertex lines, 2 given
    rc, _, err = _run(["taskmap", "map", bad, files / "res.json", "--format", "metis"], capsys)
    assert rc == 2 and len(err) == 1
    assert "looks like" not in err[0] and f"{bad}" in err[0], err[0]


def test_forced_formats_with_the_wrong_number_of_files(files, capsys):
    rc, _, err = _run(["testbed", "assign", files / "exp.txt", "--format", "emulab"], capsys)
    assert rc == 2 and "--format emulab reads two files, TOP PTOP" in err[0]
    rc, _, err = _run(["testbed", "assign", files / "tb.dat", files / "bed.txt", "--format",
                       "json"], capsys)  # fmt: skip
    assert rc == 2 and "--format json reads one coalloc.testbed.instance file" in err[0]


def _commands(parser, prefix=()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*prefix, name))
    yield prefix, parser


#: The commands that read instance files, each with the formats its --format offers.
FORMAT_COMMANDS = {
    ("ctaap", "solve"): ["json"],
    ("ctaap", "verify"): ["json"],
    ("plot", "ctaap"): ["json"],
    ("testbed", "assign"): ["emulab", "json"],
    ("testbed", "verify"): ["emulab", "json"],
    ("plot", "testbed"): ["emulab", "json"],
    ("collective", "solve"): ["json", "csv", "npz"],
    ("collective", "verify"): ["json", "csv", "npz"],
    ("collective", "simulate"): ["json", "csv", "npz"],
    ("plot", "collective"): ["json", "csv", "npz"],
    ("loadshare", "gap"): ["json", "orlib"],
    ("loadshare", "verify"): ["loadshare", "json", "orlib"],
    ("taskmap", "map"): ["json", "metis", "scotch"],
    ("taskmap", "verify"): ["json", "metis", "scotch"],
    ("plot", "taskmap"): ["json", "metis", "scotch"],
}


def test_every_reading_command_takes_the_one_shared_option():
    commands = dict(_commands(build_parser()))
    help_of = common.add_format(argparse.ArgumentParser(), ["json"], "X").help
    shared = help_of.split("); ", 1)[1]  # "default: recognised by its content, ..."
    for path, formats in FORMAT_COMMANDS.items():
        (action,) = [a for a in commands[path]._actions if "--format" in a.option_strings]
        assert list(action.choices) == formats, path
        assert action.default is None and action.help.endswith(shared), path


def test_add_format_refuses_an_unknown_name():
    with pytest.raises(ValueError, match="formats must be among"):
        common.add_format(argparse.ArgumentParser(), ["yaml"], "X")
