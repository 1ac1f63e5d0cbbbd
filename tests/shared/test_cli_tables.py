"""The family CLIs' options that set a method parameter take their type, choices and range
from the method's constraint table (issue 37 item 4): a value the table refuses ends the
command with the table's own message (one line, exit status 2), before any file is read.
"""

from __future__ import annotations

import argparse
from numbers import Integral

import pytest

from coalloc._shared.constraints import TIME_LIMIT, Interval, Options, describe, invalid_values
from coalloc.cli import _common as common
from coalloc.cli import build_parser

from .test_cli_numbers import check_refused, minimal_argv, walk

PARSER = build_parser()


def table_options():
    out = []
    for path, parser in walk(PARSER):
        for action in parser._actions:
            if isinstance(action.type, common._TableValue) and action.help != argparse.SUPPRESS:
                out.append((path, action.option_strings[-1], action))
    return out


TABLE = table_options()
IDS = [" ".join(p) + " " + opt for p, opt, _ in TABLE]


def test_the_method_parameters_of_every_family_cli_come_from_the_tables():
    found = {(" ".join(p), opt) for p, opt, _ in TABLE}
    for family in ("ctaap", "collective", "taskmap", "testbed"):
        cmd = {"ctaap": "solve", "collective": "solve", "taskmap": "map", "testbed": "assign"}
        assert (f"{family} {cmd[family]}", "--time-limit") in found
        assert (f"{family} {cmd[family]}", "--solver") in found
    for expected in [("loadshare share", "--coalition-size"), ("loadshare gap", "--sense"),
                     ("loadshare gap", "--time-limit"), ("loadshare gap", "--solver"),
                     ("ctaap solve", "--bound-effort")]:  # fmt: skip
        assert expected in found, expected


def cli_refused(kind) -> list:
    """Texts the option must refuse: the table's refused numbers as written on a command
    line, and a word that is no option of it."""
    out = ["no-such-option"] if isinstance(kind, common._TableWord) else []
    for v in invalid_values(kind.constraints):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out.append(repr(v))
    if isinstance(kind, common._TableInteger):
        out.append("2.5")
    return out


@pytest.mark.parametrize("path,option,action", TABLE, ids=IDS)
def test_a_value_the_table_refuses_is_refused_with_its_message(path, option, action, capsys):
    parser = dict(walk(PARSER))[path]
    base = minimal_argv(path, parser, action)
    kind = action.type
    bad = cli_refused(kind)
    assert bad, option
    for value in bad:
        check_refused(base + [f"{option}={value}"], option, capsys, PARSER.parse_args)
    # the message is the table's: the parameter's name and what its entry takes
    code, err = _run(base + [f"{option}={bad[0]}"], capsys)
    assert code == 2 and f"{kind.name} must be {describe(kind.constraints)}" in err, err


def _run(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        PARSER.parse_args(argv)
    return exc.value.code, capsys.readouterr().err


@pytest.mark.parametrize("path,option,action", TABLE, ids=IDS)
def test_the_help_gives_the_table_range_or_choices(path, option, action):
    kind = action.type
    if isinstance(kind, common._TableWord):
        assert action.choices and all(kind(w) == w for w in action.choices)
    else:
        assert describe(kind.constraints) in action.help


def test_the_table_type_reads_what_the_entry_takes():
    t = common.table_type(TIME_LIMIT, "time_limit")
    assert t("2.5") == 2.5 and type(t("2")) is float
    with pytest.raises(argparse.ArgumentTypeError, match=r"time_limit must be .*\(0, inf\)"):
        t("0")
    mixed = common.table_type([Options({"auto"}), Interval(Integral, 0, 5)], "local_search")
    assert mixed("auto") == "auto" and mixed("3") == 3
    for text in ("6", "-1", "2.5", "1_0", "nan", "x"):
        with pytest.raises(argparse.ArgumentTypeError, match="local_search must be"):
            mixed(text)
