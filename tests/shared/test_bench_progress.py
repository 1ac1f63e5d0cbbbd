"""Every benchmark script reports progress through the one helper (issue 16, item 4)."""

from __future__ import annotations

import argparse
import ast
import io
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPTS = sorted(
    p
    for p in (ROOT / "bench").glob("*/*.py")
    if not p.name.startswith("_") and not p.name.startswith("test_") and "argparse" in p.read_text()
)


def test_there_are_benchmark_scripts():
    assert len(SCRIPTS) >= 15


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_script_uses_the_shared_progress_and_quiet(path):
    tree = ast.parse(path.read_text())
    calls = {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    assert "add_quiet" in calls, f"{path.name}: no --quiet option"
    assert "bar" in calls, f"{path.name}: no progress bar from bench.shared._progress"
    # no hand-written carriage-return counters
    strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
    assert not any(isinstance(s, str) and "\r" in s for s in strings), path.name


class _FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_quiet_turns_the_bar_off_and_non_terminal_hides_it(monkeypatch):
    from bench.shared import _progress

    monkeypatch.setattr(_progress, "_QUIET", [False])
    ap = argparse.ArgumentParser()
    _progress.add_quiet(ap)
    assert ap.parse_args([]).quiet is False
    monkeypatch.setattr("sys.stderr", io.StringIO())  # not a terminal: hidden
    with _progress.bar(range(3)) as b:
        assert b.disable
    term = _FakeTerminal()
    monkeypatch.setattr("sys.stderr", term)  # a terminal: shown, with a time estimate
    with _progress.bar(range(3), desc="work") as b:
        assert not b.disable
        list(b)
    assert "work" in term.getvalue() and "3/3" in term.getvalue()
    assert ap.parse_args(["--quiet"]).quiet is True
    with _progress.bar(range(3)) as b:  # --quiet: off even on a terminal
        assert b.disable
    assert sum(_progress.bar(range(4))) == 6
