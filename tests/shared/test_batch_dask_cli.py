"""A Dask cluster started from the command line (issue 24 item 3): ``dask scheduler`` and
two ``dask worker`` processes on localhost, a batch mixing the five families solved on them
as on the serial loop, and ``coalloc solve-batch --scheduler`` writing what a thread run
writes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bench.shared.scaling import FAMILIES, answer, family_batch

import coalloc
from coalloc.cli import main
from coalloc.ctaap.generators import fig2
from tests._optional import skip_unless_ci

ROOT = Path(__file__).resolve().parents[2]
SEED = 21


def _dask_command() -> list:
    try:
        import distributed  # noqa: F401
    except ImportError:
        skip_unless_ci("dask.distributed not installed (pip install coalloc[dask]; CI installs it)")
    here = shutil.which("dask", path=os.path.dirname(sys.executable)) or shutil.which("dask")
    if here is None:
        skip_unless_ci("the 'dask' command is not on the PATH (pip install coalloc[dask])")
    return [here]


def _stop(procs) -> None:
    for proc in reversed(procs):  # the workers first, then the scheduler
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """``(scheduler file, client)`` of a scheduler and two single-thread workers, each its
    own process started by the ``dask`` command, on 127.0.0.1 and free ports (port 0)."""
    dask = _dask_command()
    import distributed

    root = tmp_path_factory.mktemp("dask")
    info = root / "scheduler.json"
    here = Path(coalloc.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(here), str(ROOT)])}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
    procs = [subprocess.Popen(
        [*dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
         "--scheduler-file", str(info)], cwd=root, **quiet,
    )]  # fmt: skip
    client = None
    try:
        deadline = time.monotonic() + 60
        while not info.exists() and time.monotonic() < deadline:
            assert procs[0].poll() is None, "the scheduler exited"
            time.sleep(0.1)
        assert info.exists(), "the scheduler wrote no scheduler file within 60 s"
        for k in range(2):
            procs.append(subprocess.Popen(
                [*dask, "worker", "--scheduler-file", str(info), "--host", "127.0.0.1",
                 "--nworkers", "1", "--nthreads", "1", "--no-dashboard", "--name", f"w{k}",
                 "--local-directory", str(root / f"w{k}")], cwd=root, **quiet,
            ))  # fmt: skip
        client = distributed.Client(scheduler_file=str(info), timeout=60)
        client.wait_for_workers(2, timeout=60)
        yield info, client
    finally:
        if client is not None:
            client.close()
        _stop(procs)


@pytest.mark.slow  # three processes start and import coalloc
def test_a_batch_of_the_five_families_on_a_command_line_cluster_matches_serial(cluster):
    _, client = cluster
    parts = [family_batch(family, 5, seed=8, small=True) for family in FAMILIES]
    batch = [p[i] for i in range(5) for p in parts]  # mixed: every family, in turn
    serial = [answer(r) for r in coalloc.solve_many(batch, executor="serial", seed=SEED)]
    executor = client.get_executor()
    for chunksize in (1, "auto"):
        got = coalloc.solve_many(batch, executor=executor, seed=SEED, chunksize=chunksize)
        assert [answer(r) for r in got] == serial
    workers = client.scheduler_info()["workers"].values()
    assert sorted(w["name"] for w in workers) == ["w0", "w1"]
    assert all(w["host"] == "127.0.0.1" for w in workers)


@pytest.mark.slow
def test_solve_batch_on_the_cluster_from_the_command_line(cluster, tmp_path, capsys):
    info, client = cluster
    files = []
    for i in range(4):
        path = tmp_path / f"inst{i}.json"
        coalloc.write_instance(path, *fig2(1 + i % 3, n_tasks=20, n_clusters=4, seed=30 + i))
        files.append(str(path))
    threads, dask = tmp_path / "threads.jsonl", tmp_path / "dask.jsonl"
    argv = ["ctaap", "solve-batch", *files, "--seed", str(SEED), "--quiet"]
    assert main([*argv, "-o", str(threads)]) == 0
    address = json.loads(info.read_text())["address"]
    for where in (address, str(info)):  # the address, or the scheduler file
        assert main([*argv, "--scheduler", where, "-o", str(dask)]) == 0

        def lines(path):
            out = [json.loads(t) for t in path.read_text().splitlines()]
            for line in out:
                line.pop("timings")
            return out

        assert lines(dask) == lines(threads)
    capsys.readouterr()
    assert main([*argv, "--scheduler", address, "--processes", "-o", str(dask)]) == 2
    assert "drop --processes" in capsys.readouterr().err


@pytest.mark.slow
def test_large_requests_on_a_command_line_cluster_go_spilled_and_match_serial(cluster, monkeypatch):
    """h50pool: the workers of a command-line cluster on this machine share the caller's
    folder, so a chunk of CTAAP Fig. 3 requests (4 MB of arrays each) goes as a process
    pool's does, its arrays written straight to a file the worker maps and removes; the
    answers and the ``verify`` reports are the serial run's."""
    from coalloc.batch import shipping

    _, client = cluster
    spilled = []
    original = shipping.spill

    def spill(obj, folder):
        out = original(obj, folder)
        if out.path is not None:
            spilled.append(out.path)
        return out

    monkeypatch.setattr(shipping, "spill", spill)
    batch = family_batch("ctaap", 3, seed=6)
    serial = coalloc.solve_many(batch, executor="serial", seed=SEED)
    got = coalloc.solve_many(batch, executor=client.get_executor(), seed=SEED, chunksize=1)
    assert [answer(r) for r in got] == [answer(r) for r in serial]
    for item, mine, alone in zip(batch, got, serial):
        assert item.verify(mine).to_dict() == item.verify(alone).to_dict()
    assert len(spilled) >= 3  # every request's arrays through a file (the records too)
    assert not any(os.path.exists(path) for path in spilled)  # read and removed
