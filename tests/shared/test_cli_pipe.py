"""A ``coalloc`` command piped into a reader that stops early ends quietly (issue 16).

``coalloc demo | head -1`` printed ``coalloc: error: [Errno 32] Broken pipe`` (or the
interpreter's "Exception ignored ... BrokenPipeError" at exit) because the command caught
every OSError. The children below get a pipe whose reading end is already closed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import coalloc
from coalloc.cli import EXIT_BROKEN_PIPE

SRC = str(Path(coalloc.__file__).resolve().parents[1])


def _run_into_closed_pipe(args):
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the command writes anything
    try:
        child = subprocess.run(
            [sys.executable, "-m", "coalloc", *args], stdout=write, stderr=subprocess.PIPE,
            text=True, env=env, timeout=120,
        )  # fmt: skip
    finally:
        os.close(write)
    return child


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ["demo"],  # short output: the pipe breaks at the final flush
        ["docs", "formats"],  # longer than the pipe's buffer: it breaks inside print()
        ["taskmap", "generate", "--c", "2", "-o", "{tmp}/t.json"],
    ],
    ids=["demo", "docs", "taskmap-generate"],
)
def test_closed_pipe_ends_quietly(args, tmp_path):
    child = _run_into_closed_pipe([a.replace("{tmp}", str(tmp_path)) for a in args])
    assert child.stderr == ""
    assert child.returncode == EXIT_BROKEN_PIPE


def test_main_in_process_reports_a_broken_pipe(monkeypatch, capsys):
    """The handler runs when print() itself meets the closed pipe (no file descriptor here)."""
    from coalloc import cli

    class ClosedPipe:
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert cli.main(["docs", "formats"]) == EXIT_BROKEN_PIPE
    assert capsys.readouterr().err == ""
