"""``coalloc -h``, a bare ``coalloc``, mistyped commands and the top-level aliases build the
top level from the light listing (``cli.LAZY_TOP``, ``cli._listing``): what they print,
parse and refuse is the whole parser's, and ``coalloc -h`` imports no family."""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

import coalloc.cli as cli
from coalloc import FAMILIES
from coalloc._shared.family import families
from coalloc.cli import _listing

from .test_cli_lazy import _imported  # (one probe of a fresh interpreter's imports)


def _family_modules(mods):
    return sorted({m.split(".")[1] for m in mods if m.split(".")[1] in FAMILIES})


@pytest.mark.slow
@pytest.mark.parametrize("argv, needed", [(["-h"], []), ([], []), (["--version"], []),
                                          (["bogus"], []), (["solve", "-h"], ["ctaap"]),
                                          (["map", "-h"], ["taskmap"])])  # fmt: skip
def test_the_top_level_imports_only_the_family_it_runs(argv, needed):
    assert _family_modules(_imported(argv)) == needed


def _run(argv, lazy, monkeypatch):
    """(stdout, stderr, exit status) of ``coalloc argv`` in this process."""
    monkeypatch.setattr(cli, "LAZY_TOP", lazy)
    monkeypatch.setenv("COLUMNS", "80")
    out, err = io.StringIO(), io.StringIO()
    status = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli.main(argv)
        except SystemExit as exc:
            status = exc.code
    return out.getvalue(), err.getvalue(), status


_COMMANDS = [
    ["-h"], ["--help"], [], ["--version"], ["bogus"], ["bogus", "-h"], ["-h", "plot"],
    ["solve", "-h"], ["solve"], ["solve-batch", "-h"], ["demo", "-h"], ["generate", "-h"],
    ["verify", "-h"], ["verify"], ["verify", "a"], ["map", "-h"], ["map"],
    ["solve", "/nonexistent/x.json"], ["map", "/nonexistent/x.json"],
    ["solve", "x.json", "--method", "nope"], ["demo", "--seed", "x"],
]  # fmt: skip


@pytest.mark.parametrize("argv", _COMMANDS, ids=" ".join)
def test_help_errors_and_status_are_the_whole_parsers(argv, monkeypatch):
    monkeypatch.setattr(cli, "LAZY_TOP", True)
    assert cli._top_is_light(argv)  # (the light path is the one compared)
    lazy = _run(argv, True, monkeypatch)
    whole = _run(argv, False, monkeypatch)
    assert lazy == whole
    assert lazy[0] or lazy[1]  # something was printed: the comparison compares something


def _parsed(argv, lazy, monkeypatch):
    monkeypatch.setattr(cli, "LAZY_TOP", lazy)
    args = cli.build_parser(argv).parse_args(argv)
    return {k: (getattr(v, "__qualname__", v) if callable(v) else v) for k, v in vars(args).items()}


@pytest.mark.parametrize("argv", [
    ["solve", "i.json", "--method", "greedy", "--seed", "3", "--json"],
    ["demo"], ["verify", "i.json", "r.json", "--json"], ["generate", "fig2", "-o", "x.json"],
    ["solve-batch", "a.json", "b.json", "-o", "o.jsonl", "-j", "2"],
    ["map", "t.json", "r.json", "--seed", "2"],
])  # fmt: skip
def test_an_alias_parses_as_with_the_whole_parser(argv, monkeypatch):
    assert _parsed(argv, True, monkeypatch) == _parsed(argv, False, monkeypatch)


def test_the_listing_is_a_copy_of_the_families_own_lines():
    assert _listing.SUMMARIES == {name: spec.summary for name, spec in families().items()
                                  if name in FAMILIES}  # fmt: skip
    assert tuple(_listing.SUMMARIES) == tuple(FAMILIES)
    for family, lines in _listing.ALIASES.items():
        sub = argparse.ArgumentParser().add_subparsers()
        __import__(families()[family].cli, fromlist=["x"]).add_commands(sub, aliases=True)
        assert tuple((a.dest, a.help) for a in sub._choices_actions) == lines, family


def test_a_family_registered_at_run_time_gets_the_whole_parser(monkeypatch):
    from coalloc._shared import family as fam

    monkeypatch.setattr(cli, "LAZY_TOP", True)
    assert cli._top_is_light(["-h"])
    monkeypatch.setitem(fam._REGISTRY, "toy", families()["testbed"])
    assert not cli._top_is_light(["-h"])
    assert not cli._top_is_light(["plot", "-h"])  # (plot's help lists every family's)
    monkeypatch.setattr(cli, "LAZY_TOP", False)
    monkeypatch.delitem(fam._REGISTRY, "toy")
    assert not cli._top_is_light(["-h"])
