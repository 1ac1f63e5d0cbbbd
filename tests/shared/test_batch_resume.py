"""``coalloc <family> solve-batch ... -o OUT --resume`` (issue 24 item 4): lines appended as
they arrive, and a rerun after a crash or Ctrl-C skips the instances already in OUT (same
file content and seed), so that the file ends as one uninterrupted run writes it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import coalloc
from coalloc._shared.jsonio import OutputIsInputError, atomic_output, protect_inputs
from coalloc.batch import instance_seed
from coalloc.cli import main
from coalloc.ctaap.generators import fig2

SEED = 5
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("instances")
    paths = []
    for i in range(6):
        path = root / f"inst{i}.json"
        coalloc.write_instance(path, *fig2(1 + i % 3, n_tasks=20, n_clusters=4, seed=50 + i))
        paths.append(str(path))
    return paths


def _answers(path: Path) -> dict:
    """index -> the line without its timings (what an uninterrupted run must match)."""
    out = {}
    for text in path.read_text().splitlines():
        line = json.loads(text)
        line.pop("timings", None)
        line.pop("sha256", None)
        out[line["index"]] = line
    return out


def _argv(files, out):
    return ["ctaap", "solve-batch", *files, "-j", "2", "--seed", str(SEED), "-o", str(out),
            "--quiet"]  # fmt: skip


def test_a_rerun_completes_what_a_crash_left_and_skips_the_rest(files, tmp_path, capsys):
    whole = tmp_path / "whole.jsonl"
    assert main(_argv(files, whole)) == 0  # one uninterrupted run (atomic, as ever)
    reference = _answers(whole)
    assert sorted(reference) == list(range(len(files)))

    out = tmp_path / "resumed.jsonl"
    assert main(_argv(files[:3], out) + ["--resume"]) == 0  # a first run of 3 of them
    first = out.read_text().splitlines()
    assert [json.loads(t)["sha256"] for t in first] == [
        coalloc.cli._common._file_digest(f) for f in files[:3]
    ]
    with open(out, "a") as fh:  # a killed writer's last line, cut short
        fh.write(first[0][: len(first[0]) // 2])
    capsys.readouterr()
    assert main(_argv(files, out) + ["--resume"]) == 0
    said = capsys.readouterr().out
    assert "solved 3/3 instances" in said and "3 instances already there, skipped" in said
    lines = out.read_text().splitlines()
    assert lines[:3] == first  # kept as they were; the partial line is gone
    assert len(lines) == len(files)
    assert _answers(out) == reference  # same answers, each instance once, its own seed
    for index, line in _answers(out).items():
        assert line["seed"] == instance_seed(SEED, index)

    before = out.read_bytes()
    assert main(_argv(files, out) + ["--resume"]) == 0  # nothing left to do
    assert out.read_bytes() == before
    assert "solved 0/0 instances" in capsys.readouterr().out


def test_another_seed_or_changed_file_is_solved_again(files, tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    assert main(_argv(files[:2], out) + ["--resume"]) == 0
    argv = _argv(files[:2], out) + ["--resume"]
    argv[argv.index("--seed") + 1] = str(SEED + 1)
    capsys.readouterr()
    assert main(argv) == 0
    assert "solved 2/2 instances" in capsys.readouterr().out  # the key holds the seed
    changed = tmp_path / "changed.json"
    coalloc.write_instance(changed, *fig2(2, n_tasks=20, n_clusters=4, seed=99))
    assert main(_argv([str(changed), files[1]], out) + ["--resume"]) == 0
    assert "solved 1/1 instances" in capsys.readouterr().out  # only the new content
    assert len(out.read_text().splitlines()) == 5


def test_resume_needs_an_output_file(files, capsys):
    assert main(["ctaap", "solve-batch", files[0], "-o", "-", "--resume"]) == 2
    assert "--resume" in capsys.readouterr().err


def test_the_append_mode_of_the_writer_cuts_a_partial_line_and_refuses_inputs(tmp_path):
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": 2')  # killed mid-line
    with atomic_output(path, append=True) as fh:
        fh.write('{"c": 3}\n')
    assert path.read_bytes() == b'{"a": 1}\n{"c": 3}\n'
    no_newline = tmp_path / "one.jsonl"
    no_newline.write_bytes(b"partial")
    with atomic_output(no_newline, append=True) as fh:
        fh.write("x\n")
    assert no_newline.read_bytes() == b"x\n"
    with protect_inputs([("instance", str(path))]), pytest.raises(OutputIsInputError):
        with atomic_output(tmp_path / "." / "lines.jsonl", append=True) as fh:
            fh.write("never\n")
    assert path.read_bytes() == b'{"a": 1}\n{"c": 3}\n'


_KILLED = textwrap.dedent(
    """
    import sys, time
    import coalloc.cli._batch as common  # the batch runner's module: it looks the line up

    real = common._batch_line

    def slow(index, name, record):  # two lines are written; the third never comes
        if index == 2:
            print("wrote two lines", flush=True)
            time.sleep(600)
        return real(index, name, record)

    common._batch_line = slow
    from coalloc.cli import main

    main(sys.argv[1:])
    """
)


@pytest.mark.slow
def test_a_killed_batch_is_finished_by_a_rerun(files, tmp_path, capsys):
    whole = tmp_path / "whole.jsonl"
    assert main(_argv(files, whole)) == 0
    out = tmp_path / "results.jsonl"
    here = Path(coalloc.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(here), str(ROOT)])}
    argv = _argv(files, out)[:-1] + ["--resume", "-j", "1"]
    child = subprocess.Popen([sys.executable, "-c", _KILLED, *argv], stdout=subprocess.PIPE,
                             text=True, env=env)  # fmt: skip
    try:
        said = child.stdout.readline()
        assert "wrote two lines" in said, said
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait() == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
    assert len(out.read_text().splitlines()) == 2  # flushed as they arrived
    assert main(_argv(files, out) + ["--resume"]) == 0
    assert "solved 4/4 instances" in capsys.readouterr().out
    assert _answers(out) == _answers(whole)
