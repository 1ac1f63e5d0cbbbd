"""Every numeric option of every ``coalloc`` subcommand takes ASCII decimal numbers only
(issue 30, deliverable 5).

argparse's ``type=int`` and ``type=float`` read ``1_0``, Unicode digits (``١٢``), ``inf``
and ``nan``; a count of ``-1`` or ``10**30`` then turns into a different run, a hang or a
traceback. Walking the parsers (as ``test_writer_cli.py`` does) finds every numeric option;
each bad value must end the command with ONE line on standard error and exit status 2, before
any file is read.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from typing import Iterator, Tuple

import pytest

from coalloc.cli import _common as common
from coalloc.cli import build_parser, main

BAD_ANYWHERE = ["1_0", "١٢", "inf", "nan", "-inf", "10**30", "1e400", "", " 5", "0x10", "1" * 400]


def walk(parser: argparse.ArgumentParser, path: Tuple[str, ...] = ()) -> Iterator[tuple]:
    """``(command path, parser)`` of the parser and every subcommand below it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk(sub, path + (name,))


NUMERIC_TYPES = (common.Integer, common.Real)


def is_numeric(action: argparse.Action) -> bool:
    return isinstance(action.type, NUMERIC_TYPES) or action.type in (common.jobs, common.chunksize)


def looks_numeric(action: argparse.Action) -> bool:
    """An option that takes a number, whatever its type says: a numeric default (a string
    one too, such as ``--limit "0"``), or a metavar such as ``SECONDS`` or ``N``."""
    d = action.default
    if isinstance(d, (int, float)) and not isinstance(d, bool):
        return True
    if isinstance(d, str):
        try:
            float(d)
            return True
        except ValueError:
            pass
    return action.metavar in ("SECONDS", "N", "COUNT", "K")


def minimal_argv(path: Tuple[str, ...], parser: argparse.ArgumentParser, skip) -> list:
    """The command ``path`` with a value for every positional and required option."""
    argv = list(path)
    for action in parser._actions:
        if action is skip or isinstance(action, argparse._SubParsersAction):
            continue
        value = action.choices[0] if action.choices else "no-such-file.json"
        if isinstance(value, tuple):
            value = value[0]
        if not action.option_strings:
            if action.nargs in ("?", "*"):
                continue
            argv.append(str(value))
        elif action.required:
            argv += [action.option_strings[-1], str(value)]
    return argv


def numeric_options():
    out = []
    for path, parser in walk(build_parser()):
        for action in parser._actions:
            if is_numeric(action):
                out.append((path, action.option_strings[-1], action))
    return out


NUMERIC = numeric_options()
IDS = [" ".join(p) + " " + opt for p, opt, _ in NUMERIC]


def test_the_walk_finds_the_numeric_options():
    found = {(" ".join(p), opt) for p, opt, _ in NUMERIC}
    for expected in [("ctaap solve", "--seed"), ("collective simulate", "--slot-seconds"),
                     ("collective simulate", "--limit"), ("testbed generate", "--size"),
                     ("loadshare gap", "--time-limit"), ("solve-batch", "--jobs"),
                     ("plot loadshare", "--every"), ("taskmap generate", "--c")]:  # fmt: skip
        assert expected in found, expected
    assert len(NUMERIC) > 60


def test_no_numeric_option_uses_argparse_int_or_float():
    """A new option written with ``type=int`` or ``type=float`` (or a numeric option
    without a type) fails here: it must take one of the strict types of ``_common``."""
    loose = []
    for path, parser in walk(build_parser()):
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
                continue
            if action.type in (int, float) or (looks_numeric(action) and not is_numeric(action)
                                                and action.nargs != 0):  # fmt: skip
                loose.append((" ".join(path), action.option_strings or action.dest))
    assert not loose, loose


PARSER = build_parser()


def run(argv, capsys, parse=None) -> Tuple[int, str]:
    """Exit status and standard error of ``coalloc ARGV`` (``parse``: only parse it, with
    the one parser built above; the failures looked at here happen while parsing)."""
    with pytest.raises(SystemExit) as exc:
        (parse or main)(argv)
    err = capsys.readouterr().err
    return exc.value.code, err


def check_refused(argv, option, capsys, parse=None) -> None:
    code, err = run(argv, capsys, parse)
    assert code == 2, (argv, code, err)
    lines = err.splitlines()
    assert len(lines) == 1, (argv, err)  # one line: no usage block, no traceback
    assert lines[0].startswith("coalloc: error: ") and "Traceback" not in err
    assert option in lines[0], (argv, err)  # the message names the option


@pytest.mark.parametrize("path,option,action", NUMERIC, ids=IDS)
def test_every_numeric_option_refuses_non_decimal_numbers(path, option, action, capsys):
    parser = dict(walk(PARSER))[path]
    base = minimal_argv(path, parser, action)
    bad = list(BAD_ANYWHERE)
    if isinstance(action.type, common.Integer) or action.type is common.jobs:
        bad += ["1" + "0" * 30, "2.5", "1e3"]  # beyond 64 bits; not integers
    if getattr(action.type, "count", False) or action.type is common.jobs:
        bad += ["-1" if action.type is not common.jobs else "-2"]
    for value in bad:
        check_refused(base + [f"{option}={value}"], option, capsys, PARSER.parse_args)


@pytest.mark.parametrize("path,option,action", NUMERIC, ids=IDS)
def test_every_numeric_option_takes_its_default_spelled_out(path, option, action):
    """The strict types still read what a person writes: the default, in decimal."""
    if action.default is None:
        value = "1"
    else:
        value = repr(action.default) if isinstance(action.default, float) else str(action.default)
    parsed = action.type(value)
    assert parsed == (1 if action.default is None else action.default)
    if isinstance(action.default, str):  # a word the type also takes ("auto" chunks)
        assert type(action.type("2")) is int and action.type("2") == 2
    else:
        assert type(parsed) in (int, float)


@pytest.mark.parametrize("value", ["1_0", "١٢", "inf", "nan", "Infinity", "NaN", "1e400",
                                   "-Infinity", "1" + "0" * 45, "[1, 1e400]",
                                   '{"a": NaN}'])  # fmt: skip
def test_param_values_are_json_numbers_only(value, capsys):
    with pytest.raises(argparse.ArgumentTypeError):
        common.param(f"iterations={value}")
    check_refused(["ctaap", "solve", "x.json", "-p", f"iterations={value}"], "-p/--param", capsys)


@pytest.mark.parametrize("text,expected", [
    ("iterations=10", 10), ("th_c=0.1", 0.1), ("scoring=\"2m\"", "2m"),
    ("formulation=pairwise", "pairwise"), ("x=[1, 2.5]", [1, 2.5]), ("flag=true", True),
    ("big=18446744073709551615", 2**64 - 1), ("neg=-3", -3), ("e=1e-9", 1e-9),
])  # fmt: skip
def test_param_values_keep_their_meaning(text, expected):
    assert common.param(text)[1] == expected


@pytest.mark.parametrize("argv", [
    ["nosuch"], ["ctaap"], ["ctaap", "solve"], ["ctaap", "solve", "x", "--no-such-option"],
    ["ctaap", "solve", "x", "--method", "nosuch"], ["solve-batch", "a", "-j", "0", "-o", "x"],
])  # fmt: skip
def test_every_parse_failure_is_one_line(argv, capsys):
    code, err = run(argv, capsys)
    assert code == 2 and len(err.splitlines()) == 1 and err.startswith("coalloc: error: "), err


def test_help_is_unchanged(capsys):
    """``--help`` prints argparse's usage and options as before, with status 0."""
    reference = argparse.ArgumentParser(prog="coalloc ctaap solve")
    with pytest.raises(SystemExit) as exc:
        main(["ctaap", "solve", "--help"])
    out = capsys.readouterr().out
    assert exc.value.code == 0
    assert out.startswith("usage: coalloc ctaap solve [-h]") and "options:" in out
    assert "--seed SEED" in out and "--time-limit SECONDS" in out
    assert type(reference).format_help is type(build_parser()).format_help


def test_the_installed_command_prints_one_line():
    """The same through a real process: nothing but the one line on stderr, exit 2."""
    proc = subprocess.run(
        [sys.executable, "-m", "coalloc", "loadshare", "generate", "a", "-o", "x.txt",
         "--count", "١٢"], capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2, proc
    assert proc.stderr.count("\n") == 1 and "--count" in proc.stderr, proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize("kind,text,value", [
    (common.count(), "12", 12), (common.count(0), "0", 0), (common.count(), "+7", 7),
    (common.SEED, str(2**64 - 1), 2**64 - 1), (common.seconds(), "0.5", 0.5),
    (common.seconds(), "1e-3", 1e-3), (common.Real(0.0), "0", 0.0), (common.Real(), "-2.5", -2.5),
    (common.Real(1.0), "16", 16.0), (common.Real(), ".5", 0.5), (common.Real(), "5.", 5.0),
])  # fmt: skip
def test_the_strict_types_read_decimal_numbers(kind, text, value):
    got = kind(text)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("kind,text", [
    (common.count(), "0"), (common.count(0), "-1"), (common.SEED, str(2**64)),
    (common.seconds(), "0"), (common.seconds(), "-1"), (common.Real(1.0), "0.99"),
    (common.Real(0.0), "-1e-300"), (common.count(1, 10), "11"), (common.Real(), "1e"),
    (common.Real(), "e5"), (common.Real(), "1.2.3"), (common.count(), "٣"),
])  # fmt: skip
def test_the_strict_types_refuse_out_of_range(kind, text):
    with pytest.raises(argparse.ArgumentTypeError):
        kind(text)


def test_a_multi_line_message_is_printed_on_one_line(monkeypatch, capsys):
    """A library's message spread over lines (OR-Tools' 'incompatible function arguments')
    still ends the command with one line."""
    from coalloc.loadshare import cli as loadshare_cli

    def fails(args):
        raise TypeError("(): incompatible function arguments.\n    1. (arg0: int) -> None\n")

    monkeypatch.setattr(loadshare_cli, "_cmd_generate", fails)
    assert main(["loadshare", "generate", "a", "-o", "x.txt"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "incompatible function arguments. 1. (arg0" in err, err
