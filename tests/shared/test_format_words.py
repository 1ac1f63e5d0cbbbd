"""The ``--format`` words of each command are asked of the family's spec (issue 37).

Each :class:`~coalloc._shared.family.FileFormat` and ``LineFormat`` says what its files hold
(``holds``); a command that reads a kind of file offers the words of the formats that hold it
(:func:`coalloc._shared.formats_line.format_words`, ``cli._common.add_format_of``). Referees:
the choices and help of every command as they were when the CLIs wrote their tuples by hand
(``BEFORE``), and a format added to a spec, seen in the commands that read its kind.
"""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from coalloc._shared.family import families, register_family
from coalloc._shared.formats_line import LineFormat, format_words
from coalloc.cli import build_parser

_HELP = (
    ('read PROBLEM as this format (loadshare: a coalition load-sharing problem (Hovey '
     '& Jung) (coalloc.loadshare.instance JSON); json: JSON; orlib: OR-Library GAP '
     'text); default: recognised by its content, whatever its name'),
    ('read the GAP file as this format (json: JSON; orlib: OR-Library GAP text); '
     'default: recognised by its content, whatever its name'),
    ('read the POOL file (a request or an instance is JSON) as this format (json: '
     'JSON; csv: a CSV pool; npz: a pool snapshot (.npz)); default: recognised by its '
     'content, whatever its name'),
    ('read the instance file as this format (json: JSON); default: recognised by its '
     'content, whatever its name'),
    ('read the task graph (TASKS) as this format (json: JSON; metis: a METIS graph; '
     'scotch: a Scotch graph); default: recognised by its content, whatever its name'),
    ('read the topology files (TOP PTOP, or one INSTANCE) as this format (emulab: '
     'Emulab .top text (an experiment) or Emulab .ptop text (a testbed); json: JSON); '
     'default: recognised by its content, whatever its name'),
)

#: Every command's ``--format`` choices and help at main 605f77f, when the family CLIs still
#: wrote their tuples by hand (dumped from ``build_parser()`` before the change).
BEFORE = {
    ('collective', 'simulate'): (('json', 'csv', 'npz'), _HELP[2]),
    ('collective', 'solve'): (('json', 'csv', 'npz'), _HELP[2]),
    ('collective', 'verify'): (('json', 'csv', 'npz'), _HELP[2]),
    ('ctaap', 'solve'): (('json',), _HELP[3]),
    ('ctaap', 'verify'): (('json',), _HELP[3]),
    ('loadshare', 'gap'): (('json', 'orlib'), _HELP[1]),
    ('loadshare', 'verify'): (('loadshare', 'json', 'orlib'), _HELP[0]),
    ('map',): (('json', 'metis', 'scotch'), _HELP[4]),
    ('plot', 'collective'): (('json', 'csv', 'npz'), _HELP[2]),
    ('plot', 'ctaap'): (('json',), _HELP[3]),
    ('plot', 'taskmap'): (('json', 'metis', 'scotch'), _HELP[4]),
    ('plot', 'testbed'): (('emulab', 'json'), _HELP[5]),
    ('solve',): (('json',), _HELP[3]),
    ('taskmap', 'map'): (('json', 'metis', 'scotch'), _HELP[4]),
    ('taskmap', 'verify'): (('json', 'metis', 'scotch'), _HELP[4]),
    ('testbed', 'assign'): (('emulab', 'json'), _HELP[5]),
    ('testbed', 'verify'): (('emulab', 'json'), _HELP[5]),
    ('verify',): (('json',), _HELP[3]),
}  # fmt: skip


def _format_options(parser=None, path=()):
    """``{command path: --format action}`` of the whole command line."""
    parser = build_parser() if parser is None else parser
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.update(_format_options(sub, (*path, name)))
        elif "--format" in action.option_strings:
            found[path] = action
    return found


def test_every_command_keeps_its_choices_and_help():
    """(A sixth family's commands come beside these: only the commands of before are held.)"""
    options = _format_options()
    now = {path: (tuple(options[path].choices), options[path].help)
           for path in BEFORE if path in options}  # fmt: skip
    assert now == BEFORE


@pytest.mark.parametrize(("family", "holds", "words"), [
    ("collective", ("pool",), ("json", "csv", "npz")),
    ("collective", ("workload",), ("swf",)),
    ("taskmap", ("taskgraph", "instance"), ("json", "metis", "scotch")),
    ("testbed", ("top", "ptop", "instance"), ("emulab", "json")),
    ("testbed", ("instance", "top"), ("json", "emulab")),
    ("loadshare", ("instance", "gap"), ("loadshare", "json", "orlib")),
    ("ctaap", ("instance",), ("json",)),
])  # fmt: skip
def test_format_words_in_the_order_asked(family, holds, words):
    assert format_words(family, *holds) == words
    assert format_words(families()[family], *holds) == words


def test_format_words_refuses_a_kind_no_format_holds():
    with pytest.raises(ValueError, match="no format with a --format word holds 'graph'"):
        format_words("taskmap", "graph")
    with pytest.raises(ValueError, match="no format with a --format word holds 'resourcegraph'"):
        format_words("taskmap", "resourcegraph")  # declared, but no --format word
    with pytest.raises(ValueError, match="holds must name at least one"):
        format_words("taskmap")


def test_every_declared_word_reaches_a_command_of_its_family():
    offered = {}
    for path, action in _format_options().items():
        family = next((p for p in path if p in families()), None)
        offered.setdefault(family, set()).update(action.choices)
    for name, spec in families().items():
        for fmt in (*spec.formats, *spec.line_formats):
            if fmt.option:
                assert fmt.holds, fmt.name
                if fmt.option != "swf":  # the SWF log is read by bench scripts and the API
                    assert fmt.option in offered[name], (name, fmt.name)


def test_the_gap_readers_formats_are_the_specs():
    from coalloc.loadshare.io import GAP_FILE_FORMATS

    assert GAP_FILE_FORMATS == format_words("loadshare", "gap")


def test_a_format_added_to_a_spec_reaches_every_command_that_reads_its_kind():
    spec = families()["collective"]
    extra = LineFormat("toy.pool", "a toy pool", option="toypool", detect=("text",),
                       read=lambda path: None, holds=("pool",))  # fmt: skip
    register_family(dataclasses.replace(spec, line_formats=(*spec.line_formats, extra)))
    try:
        options = _format_options()
    finally:
        register_family(spec)
    reading = {p for p, a in options.items() if "toypool" in a.choices}
    assert reading == {("collective", "solve"), ("collective", "verify"),
                       ("collective", "simulate"), ("plot", "collective")}  # fmt: skip
    assert "toypool: a toy pool" in options["collective", "solve"].help
    assert "toypool" not in _format_options()["collective", "solve"].choices


# ------------------------------------------------------------------ the owner's hint


def test_a_line_file_of_another_family_names_the_family_that_reads_it():
    from coalloc._shared.sniff import Sniffed, wrong_kind

    metis = Sniffed("metis", "a METIS graph (header '3 3')")
    text = str(wrong_kind("g.txt", metis, "ctaap solve", "a CTAAP instance"))
    assert text.endswith(": metis.graph files belong to 'coalloc taskmap' "
                         "(see 'coalloc taskmap -h')"), text  # fmt: skip
    # its own family's command, plain text (claimed by no one format) and a hint given: none
    assert "belong" not in str(wrong_kind("g.txt", metis, "taskmap map", "a task graph"))
    assert "belong" not in str(wrong_kind("g.txt", metis, "plot taskmap", "a task graph"))
    plain = Sniffed("text", "text (first line 'x')")
    assert "belong" not in str(wrong_kind("g.txt", plain, "ctaap solve", "a CTAAP instance"))
    assert str(wrong_kind("g.txt", metis, "ctaap solve", "X", "do Y")).endswith(": do Y")


def test_the_hint_reads_the_specs_detection(tmp_path, capsys):
    from coalloc.cli import main
    from coalloc.testbed import generators, io

    path = tmp_path / "exp.txt"
    io.write_ptop(str(path), generators.deterlab(6, 2, seed=1))
    assert main(["ctaap", "solve", str(path)]) == 2
    err = capsys.readouterr().err
    assert "emulab.ptop files belong to 'coalloc testbed'" in err, err
    spec = families()["testbed"]
    renamed = tuple(dataclasses.replace(f, name=f.name + "2") for f in spec.line_formats)
    register_family(dataclasses.replace(spec, line_formats=renamed))  # the same detection
    try:
        assert main(["ctaap", "solve", str(path)]) == 2
        assert "emulab.ptop2 files belong to 'coalloc testbed'" in capsys.readouterr().err
    finally:
        register_family(spec)


# ------------------------------------------------------------------ a new word is read too


def _with_line_format(family, fmt):
    spec = families()[family]
    register_family(dataclasses.replace(spec, line_formats=(*spec.line_formats, fmt)))
    return spec


def test_a_pool_format_added_to_the_spec_is_read_by_the_collective_commands(tmp_path, capsys):
    """A pool "format" that is a snapshot under another word: ``solve`` and ``verify`` read
    the POOL with the declared reader, and answer as with ``--format npz``."""
    import json

    from coalloc.cli import main
    from coalloc.collective import generators, io

    pool = generators.table1_pool(8, n_slots=6, seed=2)
    request = generators.section42_requests(pool, 2, 1, seed=2)[0][1]
    pool_path, req_path = tmp_path / "pool.bin", tmp_path / "req.json"
    io.write_pool_snapshot(str(pool_path), pool)
    io.write_request(str(req_path), request)
    calls = []

    def read(path):
        calls.append(path)
        return io.read_pool_snapshot(path)

    extra = LineFormat("toy.pool", "a toy pool", option="toypool", detect=("npz",), read=read,
                       holds=("pool",))  # fmt: skip
    answers = {}
    spec = _with_line_format("collective", extra)
    try:
        for word in ("toypool", "npz"):
            out = tmp_path / f"{word}.json"
            argv = ["collective", "solve", str(req_path), str(pool_path), "--format", word,
                    "--seed", "1", "-o", str(out)]  # fmt: skip
            assert main(argv) == 0, capsys.readouterr().err
            answers[word] = {k: v for k, v in json.loads(out.read_text()).items()
                             if k not in ("timings", "params")}  # fmt: skip
            assert main(["collective", "verify", str(req_path), str(pool_path), str(out),
                         "--format", word]) == 0  # fmt: skip
        bad = tmp_path / "bad.bin"
        bad.write_bytes(b"not a pool")
        assert main(["collective", "solve", str(req_path), str(bad), "--format", "toypool"]) == 2
    finally:
        register_family(spec)
    capsys.readouterr()
    assert answers["toypool"] == answers["npz"] and len(calls) >= 2


def test_a_task_graph_format_added_to_the_spec_is_read_by_taskmap_map(tmp_path, capsys):
    import json

    from coalloc.cli import main
    from coalloc.taskmap import generators, io

    resources = generators.table1_instance(4.0, seed=1)[1]
    metis = next(f for f in families()["taskmap"].line_formats if f.option == "metis")
    tasks = metis.sample()  # integer weights, as METIS writes them
    t_path, r_path = tmp_path / "t.metis", tmp_path / "r.json"
    io.write_metis_graph(str(t_path), tasks)
    io.write_resource_graph(str(r_path), resources)
    extra = LineFormat("toy.graph", "a toy graph", option="toygraph", detect=("toy-graph",),
                       read=io.read_metis_graph, holds=("taskgraph",))  # fmt: skip
    answers = {}
    spec = _with_line_format("taskmap", extra)
    try:
        for word in ("toygraph", "metis"):
            out = tmp_path / f"{word}.json"
            assert main(["taskmap", "map", str(t_path), str(r_path), "--format", word,
                         "--seed", "1", "-o", str(out)]) == 0  # fmt: skip
            answers[word] = json.loads(out.read_text())["mapping"]
    finally:
        register_family(spec)
    capsys.readouterr()
    assert answers["toygraph"] == answers["metis"]


def test_topology_formats_added_to_the_spec_are_read_by_testbed_assign(tmp_path, capsys):
    import json

    from coalloc.cli import main
    from coalloc.testbed import generators, io

    top_path, ptop_path = tmp_path / "exp.txt", tmp_path / "bed.txt"
    io.write_top(str(top_path), generators.random_topology(6, seed=3))
    io.write_ptop(str(ptop_path), generators.deterlab(12, 2, seed=3))
    spec = families()["testbed"]
    extra = (LineFormat("toy.top", "a toy experiment", option="toyemu", detect=("top",),
                        read=io.read_top, holds=("top",)),
             LineFormat("toy.ptop", "a toy testbed", option="toyemu", detect=("ptop",),
                        read=io.read_ptop, holds=("ptop",)))  # fmt: skip
    register_family(dataclasses.replace(spec, line_formats=(*spec.line_formats, *extra)))
    answers = {}
    try:
        for word in ("toyemu", "emulab"):
            capsys.readouterr()
            assert main(["testbed", "assign", str(top_path), str(ptop_path), "--format", word,
                         "--seed", "2", "--json"]) == 0  # fmt: skip
            answers[word] = json.loads(capsys.readouterr().out)["mapping"]
        assert main(["testbed", "assign", str(top_path), "--format", "toyemu"]) == 2
        assert "--format toyemu reads two files" in capsys.readouterr().err
    finally:
        register_family(spec)
    assert answers["toyemu"] == answers["emulab"]


def test_a_gap_format_added_to_the_spec_is_read_by_loadshare_gap(tmp_path, capsys):
    import json

    from coalloc.cli import main
    from coalloc.loadshare import generate_gap, io

    path = tmp_path / "gap.txt"
    io.write_gap(str(path), [generate_gap("a", 3, 8, seed=1)])
    extra = LineFormat("toy.gap", "a toy GAP", option="toygap", detect=("orlib-gap",),
                       read=io.read_gap, holds=("gap",))  # fmt: skip
    spec = _with_line_format("loadshare", extra)
    answers = {}
    try:
        for word in ("toygap", "orlib"):
            out = tmp_path / f"{word}.json"
            assert main(["loadshare", "gap", str(path), "--format", word, "--method",
                         "heuristic", "--seed", "1", "-o", str(out)]) == 0  # fmt: skip
            answers[word] = json.loads(out.read_text())["assignment"]
    finally:
        register_family(spec)
    capsys.readouterr()
    assert answers["toygap"] == answers["orlib"]
