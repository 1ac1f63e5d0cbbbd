"""The line formats are declared in the families' specs (issue 37): ``LineFormat``.

Each family's ``spec.line_formats`` says how its files that are no JSON document are read,
written (where the package writes them), recognised (the kinds ``sniff`` gives them) and
forced (the ``--format`` word). The shared ``--format`` table and ``coalloc schema --all``
read these declarations; every ``--format`` word a family's commands accept is one its spec
declares. Referees: ``sniff`` (content detection, written apart from the declarations),
the readers and writers themselves (round trips), the table of words as it was written by
hand before (main at 96b5a1d).
"""

from __future__ import annotations

import argparse

import pytest

from coalloc._shared.family import FamilySpec, families
from coalloc._shared.formats_line import LineFormat, format_options, line_formats
from coalloc._shared.sniff import sniff
from coalloc.cli import _common as common
from coalloc.cli import build_parser, main

CSV_POOL = "node,cores,ram\nn0,4,8\nn1,2,2\nn2,8,16\n"
SWF = ("1 0 5 600 2 -1 -1 2 1200 -1 1 1 1 1 1 -1 -1 -1\n"
       "2 10 5 300 1 -1 -1 1 600 -1 1 1 1 1 1 -1 -1 -1\n")
SCOTCH = "0\n3 6\n0 000\n2 1 2\n2 0 2\n2 0 1\n"


def _pool():
    from coalloc.collective import generators

    return generators.table1_pool(6, n_slots=4, seed=1)


def _metis_tasks():
    from coalloc.taskmap import TaskGraph

    return TaskGraph([1.0, 2.0, 3.0], [[0, 1, 0], [1, 0, 2], [0, 2, 0]])


def _made():
    """Format name -> the object its writer writes (None: a sample file's text, the
    package writes no such file)."""
    from coalloc.loadshare import generate_gap
    from coalloc.testbed import generators as tb

    return {
        "csv.pool": CSV_POOL,
        "coalloc.collective.pool-snapshot": _pool(),
        "swf.log": SWF,
        "emulab.top": tb.random_topology(8, seed=2),
        "emulab.ptop": tb.deterlab(10, 2, seed=2),
        "orlib.gap": [generate_gap("a", 3, 6, seed=4)],
        "metis.graph": _metis_tasks(),
        "scotch.graph": SCOTCH,
    }


MADE = _made()
FORMATS = line_formats()


def test_every_line_format_is_tried_here():
    """A new line format needs a file here (its writer's, or a sample)."""
    assert set(MADE) == set(FORMATS)
    assert all(isinstance(f, LineFormat) and f.schema is None for f in FORMATS.values())


def _file(tmp_path, name):
    fmt = FORMATS[name]
    path = tmp_path / ("f" + (fmt.suffixes[0] if fmt.suffixes else ".txt"))
    made = MADE[name]
    if isinstance(made, str):
        path.write_text(made)
    else:
        assert fmt.write is not None, name
        fmt.write(str(path), made)
    return path


@pytest.mark.parametrize("name", sorted(MADE))
def test_a_file_of_the_format_is_detected_as_declared_and_read(name, tmp_path):
    fmt = FORMATS[name]
    path = _file(tmp_path, name)
    assert sniff(str(path)).kind in fmt.detect, (name, sniff(str(path)))
    assert fmt.read(str(path)) is not None
    assert fmt.option in common.format_table()
    assert set(fmt.detect) <= set(common.format_table()[fmt.option][1])


@pytest.mark.parametrize("name", sorted(n for n, f in FORMATS.items() if f.write is not None))
def test_what_the_package_writes_reads_back_the_same(name, tmp_path):
    fmt = FORMATS[name]
    path = _file(tmp_path, name)
    again = tmp_path / ("again" + path.suffix)
    fmt.write(str(again), fmt.read(str(path)))
    if name == "coalloc.collective.pool-snapshot":  # a zip: compare what it holds
        from coalloc.collective.io import pool_to_dict

        assert pool_to_dict(fmt.read(str(again))) == pool_to_dict(fmt.read(str(path)))
        assert pool_to_dict(fmt.read(str(again))) == pool_to_dict(MADE[name])
    else:
        assert again.read_bytes() == path.read_bytes(), name


#: The ``--format`` words and the kinds each accepts, as ``cli/_common.py`` wrote them by
#: hand before they were read from the specs.
WORDS_BEFORE = {
    "json": {"json"}, "loadshare": {"json"}, "orlib": {"orlib-gap", "text"},
    "metis": {"metis"}, "scotch": {"scotch"}, "emulab": {"top", "ptop", "emulab", "text"},
    "csv": {"text"}, "npz": {"npz"}, "swf": {"swf"},
}  # fmt: skip


def test_the_format_table_is_read_from_the_specs_and_keeps_every_word():
    table = common.format_table()
    assert table == format_options()
    # every word of before, with its kinds (a sixth family's words come beside them)
    assert {w: set(table[w][1]) for w in WORDS_BEFORE if w in table} == WORDS_BEFORE


def _commands(parser, path=()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))
    yield path, parser


def _declared_words(family):
    spec = families()[family]
    return {f.option for f in (*spec.formats, *spec.line_formats) if f.option}


def test_every_format_a_family_command_accepts_is_declared_by_its_spec():
    """``coalloc FAMILY ...`` and ``coalloc plot FAMILY``: each ``--format`` choice is a word
    of the family's own formats."""
    seen = 0
    for path, parser in _commands(build_parser()):
        family = next((p for p in path if p in families()), None)
        for action in parser._actions:
            if "--format" in action.option_strings and family is not None:
                assert set(action.choices) <= _declared_words(family), (path, action.choices)
                seen += 1
    assert seen >= 10


def test_a_line_format_is_no_json_format_of_the_spec():
    spec = families()["taskmap"]
    with pytest.raises(TypeError, match="line format goes in line_formats"):
        FamilySpec("taskmap", spec.title, spec.summary, spec.kinds,
                   formats=(*spec.formats, *spec.line_formats))  # fmt: skip
    with pytest.raises(ValueError, match="option and detect must be given"):
        LineFormat("x.text", "x", read=str)


def test_schema_all_lists_the_line_formats(capsys):
    assert main(["schema", "--all"]) == 0
    out = capsys.readouterr().out
    for name, fmt in FORMATS.items():
        assert f"{name} " in out and f"(--format {fmt.option})" in out
