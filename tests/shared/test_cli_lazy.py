"""The ``coalloc`` command imports only the family it names (``cli.LAZY_FAMILIES``)."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys

import pytest

import coalloc.cli as cli
from coalloc import FAMILIES
from coalloc._shared.family import families
from coalloc._shared.formats_line import format_options

_PROBE = """
import json, sys
from coalloc.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.startswith("coalloc."))), file=sys.stderr)
"""


def _imported(argv):
    """The ``coalloc.*`` modules a fresh interpreter imports to run ``argv``."""
    out = subprocess.run([sys.executable, "-c", _PROBE.format(argv=list(argv))],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    return json.loads(out.stderr.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("argv", [["testbed", "verify", "--help"], ["ctaap", "solve", "--help"],
                                  ["taskmap", "map", "--help"], ["collective", "solve", "--help"],
                                  ["loadshare", "gap", "--help"], ["plot", "testbed", "--help"]])
def test_a_family_command_imports_no_other_family(argv):
    named = argv[1] if argv[0] == "plot" else argv[0]
    mods = _imported(argv)
    assert f"coalloc.{named}" in mods
    others = [m for m in mods if m.split(".")[1] in FAMILIES and m.split(".")[1] != named]
    assert others == []


def _help(argv, lazy, monkeypatch):
    monkeypatch.setattr(cli, "LAZY_FAMILIES", lazy)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.suppress(SystemExit):
        cli.main(argv)  # --help exits; assign-compat passes it on and returns
    return buf.getvalue()


def _commands():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name in FAMILIES:
        group = sub.choices[name]
        inner = next(a for a in group._actions if a.dest == "subcommand")
        for command in inner.choices:
            yield [name, command, "--help"]
        yield [name, "--help"]
    for name in sub.choices["plot"]._actions[-1].choices:
        yield ["plot", name, "--help"]
    yield ["schema", "--help"]
    yield ["docs", "--help"]


def test_every_help_text_is_the_whole_parsers(monkeypatch):
    commands = list(_commands())
    assert len(commands) > 25
    for argv in commands:
        monkeypatch.setattr(cli, "LAZY_FAMILIES", True)
        assert cli._named_family(argv) is not None
        assert _help(argv, True, monkeypatch) == _help(argv, False, monkeypatch), argv


def test_the_lazy_parser_parses_as_the_whole(monkeypatch):
    argv = ["testbed", "assign", "a.top", "b.ptop", "--method", "exact", "--time-limit", "4"]
    whole, lazy = cli.build_parser().parse_args(argv), cli.build_parser(argv).parse_args(argv)
    assert vars(whole) == vars(lazy)
    assert cli._named_family(["solve", "x"]) is None  # the top level: the whole parser
    monkeypatch.setattr(cli, "LAZY_FAMILIES", False)
    assert cli._named_family(argv) is None


def test_a_format_word_reads_the_same_in_every_family():
    whole = format_options()
    for spec in families().values():
        for word, entry in format_options([spec]).items():
            assert entry == whole[word], (spec.name, word)
