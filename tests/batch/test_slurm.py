"""Batches on Slurm (issue 41 item 5): a job array with a cap on the elements at once
(``coalloc.batch.slurm``, ``solve-batch --slurm-array --max-running K``) and the
documented dask-jobqueue path, against a single-node Slurm the tests start
(:mod:`tests.batch.slurm_fixture`; skipped, saying why, without ``slurm-wlm``, ``munge`` or
root). The plumbing of the array path (chunk files, records, order, resume) also runs on a
stand-in ``sbatch`` (:mod:`tests.batch.fake_slurm`) everywhere. Every answer is compared
with the serial run's, and every solution passes its family's ``verify``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from bench.shared.scaling import answer, family_batch, mixed_batch

import coalloc
from coalloc.batch import BatchError
from coalloc.batch.slurm import SlurmError, _plan, solve_array, solve_array_iter
from coalloc.cli import main

from . import fake_slurm

SEED = 5
ROOT = Path(__file__).resolve().parents[2]


def _batch():
    """Five families mixed: costs about 1,000x apart (CTAAP Fig. 3 beside 0.1 ms
    load-sharing problems), and task mapping and testbed instances on shared models."""
    return (mixed_batch(120, seed=3, small=True) + family_batch("taskmap", 3, small=True)
            + family_batch("testbed", 3, small=True))  # fmt: skip


def _check_same(batch, serial, results):
    assert len(results) == len(batch)
    for i, (problem, ref, got) in enumerate(zip(batch, serial, results)):
        assert not isinstance(got, BatchError), f"instance {i}: {got}"
        assert answer(got) == answer(ref), f"instance {i} differs from the serial run"
        if got.has_solution:  # (a proven infeasible request has none to check)
            report = problem.verify(got).to_dict()
            assert report.get("ok", report.get("feasible")), f"instance {i}: {report}"


@pytest.fixture(scope="module")
def batch_and_serial():
    batch = _batch()
    return batch, coalloc.solve_many(batch, executor="serial", seed=SEED)


@pytest.fixture
def fake_path(tmp_path, monkeypatch):
    (tmp_path / "bin").mkdir()
    folder = fake_slurm.install(str(tmp_path / "bin"))
    monkeypatch.setenv("PATH", folder + os.pathsep + os.environ["PATH"])
    return Path(folder)


def _sbatch_calls(folder: Path) -> list:
    log = folder / "sbatch.log"
    return [json.loads(t) for t in log.read_text().splitlines()] if log.exists() else []


# ------------------------------------------------------------------ plan and arguments
def test_the_plan_keeps_order_and_every_instance_and_spreads_the_work(batch_and_serial):
    batch, _ = batch_and_serial
    entries = [(i, item, None) for i, item in enumerate(batch)]
    chunks = _plan(entries, workers=2, seconds=0.02)
    assert [e[0] for c in chunks for e in c.entries] == list(range(len(batch)))
    assert len(chunks) >= 4  # a short chunk target: several elements
    one = _plan(entries, workers=2, seconds=1e6)  # the batch predicts far below the floor
    assert len(one) == 1


@pytest.mark.parametrize("kwargs, error", [
    ({"max_running": 0}, ValueError), ({"max_running": 1.5}, TypeError),
    ({"chunk_seconds": 0}, ValueError), ({"chunk_seconds": "1"}, TypeError),
    ({"sbatch_args": [1]}, TypeError), ({"folder": 3}, TypeError),
    ({"method": "no-such-method"}, ValueError),
])  # fmt: skip
def test_bad_arguments_are_refused_before_anything_is_submitted(tmp_path, kwargs, error,
                                                                fake_path):  # fmt: skip
    args = {"folder": tmp_path / "arr", **kwargs}
    method = args.pop("method", None)
    with pytest.raises(error):
        solve_array_iter(family_batch("loadshare", 2, small=True), method, **args)
    assert _sbatch_calls(fake_path) == []


# ------------------------------------------------------------------ on a stand-in sbatch
@pytest.mark.slow  # an element is a Python process that imports coalloc
def test_an_array_on_a_stand_in_sbatch_gives_the_serial_answers(batch_and_serial, tmp_path,
                                                                fake_path):  # fmt: skip
    batch, serial = batch_and_serial
    folder = tmp_path / "arr"
    results = solve_array(batch, folder=folder, seed=SEED, max_running=3, chunk_seconds=0.03)
    _check_same(batch, serial, results)
    (call,) = _sbatch_calls(fake_path)
    array = next(a for a in call if a.startswith("--array="))
    assert array.endswith("%3") and int(array[len("--array=0-"):-2]) >= 1  # 2+ elements
    assert not folder.exists()  # a batch without failures leaves nothing behind


@pytest.mark.slow  # an element is a Python process that imports coalloc
def test_a_rerun_reads_the_records_of_the_elements_already_done(batch_and_serial, tmp_path,
                                                                fake_path):  # fmt: skip
    """The records of a run whose caller died stay in the folder: the rerun submits none."""
    from coalloc.batch.slurm import _array_iter, _ArrayOptions

    batch, serial = batch_and_serial
    folder = tmp_path / "arr"
    first = _array_iter(batch, None, _ArrayOptions(folder=folder, seed=SEED, chunk_seconds=0.03,
                                                   params={}, keep=True))  # fmt: skip
    _check_same(batch, serial, list(first))
    assert len(_sbatch_calls(fake_path)) == 1 and any(folder.glob("records-*.pkl"))
    again = solve_array(batch, folder=folder, seed=SEED, chunk_seconds=0.03)
    _check_same(batch, serial, again)
    assert len(_sbatch_calls(fake_path)) == 1  # nothing submitted the second time


def test_an_element_that_fails_names_its_job_and_its_stderr(tmp_path, fake_path, monkeypatch):
    """An element that cannot read its chunk (here: a python that is not there) gives a
    SlurmError record per instance with the job id and the stderr's tail."""
    import coalloc.batch.slurm as slurm

    monkeypatch.setattr(slurm, "GRACE_SECONDS", 0.0)
    monkeypatch.setattr(slurm.sys, "executable", "/nonexistent/python")
    batch = family_batch("loadshare", 3, small=True)
    results = solve_array(batch, folder=tmp_path / "arr", seed=SEED, poll=0.05)
    assert all(isinstance(r, BatchError) and r.exc_type == "SlurmError" for r in results)
    assert "Slurm job 4001_0" in results[0].message
    assert "/nonexistent/python" in results[0].message  # the shell's line on stderr
    assert (tmp_path / "arr" / "logs").is_dir()  # kept: the user reads the logs


@pytest.mark.slow  # an element is a Python process that imports coalloc
def test_the_cli_runs_an_array_and_resumes_it(tmp_path, fake_path):
    files = []
    for i, problem in enumerate(family_batch("ctaap", 6, small=True)):
        path = tmp_path / f"inst{i}.json"
        coalloc.write_instance(path, *problem)
        files.append(str(path))
    serial, out = tmp_path / "serial.jsonl", tmp_path / "array.jsonl"
    argv = ["ctaap", "solve-batch", *files, "--seed", str(SEED), "--quiet"]
    assert main([*argv, "-o", str(serial), "--jobs", "1"]) == 0
    assert main([*argv, "-o", str(out), "--slurm-array", "--max-running", "2",
                 "--resume"]) == 0  # fmt: skip
    assert _lines(out) == _lines(serial)
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:2]) + lines[2][:10])  # a crash: 2 lines and a cut one
    assert main([*argv, "-o", str(out), "--slurm-array", "--resume"]) == 0
    assert _lines(out) == _lines(serial)
    assert len(_sbatch_calls(fake_path)) == 2


def test_the_cli_refuses_slurm_options_that_do_not_fit(tmp_path, capsys):
    base = ["ctaap", "solve-batch", "x.json", "-o", str(tmp_path / "o.jsonl")]
    assert main([*base, "--max-running", "2"]) == 2
    assert "--max-running applies to --slurm-array only" in capsys.readouterr().err
    assert main([*base, "--slurm-array", "--processes"]) == 2
    assert "drop --processes" in capsys.readouterr().err


def _lines(path: Path) -> dict:
    out = {}
    for text in path.read_text().splitlines():
        line = json.loads(text)
        for key in ("timings", "sha256"):
            line.pop(key, None)
        out[line["index"]] = line
    return out


# ------------------------------------------------------------------ on a real Slurm
@pytest.mark.slow
def test_a_mixed_batch_as_a_capped_job_array_gives_the_serial_answers(
    local_slurm, batch_and_serial, tmp_path
):
    batch, serial = batch_and_serial
    seen = []  # elements running at once, as squeue lists them while the batch runs
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            out = local_slurm.run("squeue", "-h", "-r", "-t", "RUNNING", "-o", "%i").stdout
            seen.append(len(out.split()))
            time.sleep(0.2)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        results = solve_array(batch, folder=tmp_path / "arr", seed=SEED, max_running=1,
                              chunk_seconds=0.02, poll=0.2)  # fmt: skip
    finally:
        stop.set()
        watcher.join(timeout=30)
    _check_same(batch, serial, results)
    assert max(seen) <= 1  # the cap held
    assert not (tmp_path / "arr").exists()


@pytest.mark.slow
def test_an_array_slurm_refuses_or_never_starts_is_an_error(local_slurm, tmp_path):
    batch = family_batch("loadshare", 2, small=True)
    with pytest.raises(SlurmError, match="sbatch refused the array"):
        solve_array(batch, folder=tmp_path / "arr", sbatch_args=["--mem=100000000"])
    # accepted, but pending for a reason no wait resolves: an error, then cancelled
    with pytest.raises(SlurmError, match="can never start"):
        solve_array(batch, folder=tmp_path / "arr", sbatch_args=["--cpus-per-task=4096"])
    assert not local_slurm.run("squeue", "-h").stdout.strip()


@pytest.mark.slow
def test_a_held_element_that_loses_its_chunk_is_reported_with_its_job_id(local_slurm,
                                                                          tmp_path):  # fmt: skip
    folder = tmp_path / "arr"
    batch = family_batch("loadshare", 2, small=True)
    records = solve_array_iter(batch, folder=folder, seed=SEED, sbatch_args="--hold", poll=0.2)
    got = []
    reader = threading.Thread(target=lambda: got.extend(records), daemon=True)
    reader.start()
    deadline = time.monotonic() + 60
    job = ""
    while not job and time.monotonic() < deadline:
        job = local_slurm.run("squeue", "-h", "-o", "%F").stdout.strip()
        time.sleep(0.1)
    assert job, "the held array never showed in squeue"
    for chunk in folder.glob("chunk-*.pkl"):
        chunk.unlink()
    assert local_slurm.run("scontrol", "release", job).returncode == 0
    reader.join(timeout=120)
    assert not reader.is_alive(), "the batch did not end"
    assert len(got) == 2 and all(r.exc_type == "SlurmError" for r in got)
    assert f"Slurm job {job}_0" in got[0].message and "FileNotFoundError" in got[0].message


@pytest.mark.slow
def test_the_cli_array_survives_a_killed_caller_and_a_rerun_submits_nothing(local_slurm,
                                                                             tmp_path):  # fmt: skip
    files = []
    for i, problem in enumerate(family_batch("ctaap", 8, small=True)):
        path = tmp_path / f"inst{i}.json"
        coalloc.write_instance(path, *problem)
        files.append(str(path))
    serial, out = tmp_path / "serial.jsonl", tmp_path / "array.jsonl"
    argv = ["ctaap", "solve-batch", *files, "--seed", str(SEED), "--quiet"]
    assert main([*argv, "-o", str(serial), "--jobs", "1"]) == 0
    # the folder holding the coalloc in use (src/ in a checkout, site-packages for an installed
    # wheel: CI's src/ has no compiled modules), and the checkout for bench/
    here = Path(coalloc.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(here), str(ROOT)])}
    cmd = [sys.executable, "-m", "coalloc", *argv, "-o", str(out), "--slurm-array",
           "--max-running", "1", "--resume"]  # fmt: skip
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    folder = Path(str(out) + ".slurm")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if local_slurm.run("squeue", "-h", "-n", "coalloc-batch").stdout.strip():
            break  # submitted
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)  # the caller dies; the array runs on
    proc.wait(timeout=30)
    deadline = time.monotonic() + 120
    while local_slurm.run("squeue", "-h").stdout.strip() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not local_slurm.run("squeue", "-h").stdout.strip(), "the array did not finish"
    jobs = _jobs(local_slurm)
    assert jobs, "the array was never submitted"
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert _lines(out) == _lines(serial)
    assert _jobs(local_slurm) == jobs  # the rerun read the records: nothing submitted
    assert not folder.exists()


def _jobs(local_slurm) -> set:
    """The array jobs slurmctld remembers (finished ones too, for MinJobAge = 300 s)."""
    out = local_slurm.run("scontrol", "-o", "show", "job").stdout
    return {w for w in out.split() if w.startswith("ArrayJobId=")}


@pytest.mark.slow
def test_the_documented_dask_jobqueue_path_gives_the_serial_answers(local_slurm,
                                                                    batch_and_serial,
                                                                    tmp_path):  # fmt: skip
    jobqueue = pytest.importorskip("dask_jobqueue", reason="pip install dask-jobqueue")
    from distributed import Client

    batch, serial = batch_and_serial
    cluster = jobqueue.SLURMCluster(cores=1, processes=1, memory="1GB", walltime="00:10:00",
                                    log_directory=str(tmp_path), python=sys.executable)  # fmt: skip
    try:
        cluster.scale(jobs=2)
        with Client(cluster) as client:
            client.wait_for_workers(2, timeout=120)
            results = coalloc.solve_many(batch, executor=client.get_executor(), seed=SEED)
    finally:
        cluster.close(timeout=30)
    _check_same(batch, serial, results)


def test_a_lost_element_s_lines_are_solved_again_on_resume(tmp_path):
    """A ``SlurmError`` line (an element that ended without records) is not an answer:
    ``--resume`` treats it as not done, like a cancelled instance."""
    from coalloc.batch import instance_seed
    from coalloc.cli._common import _file_digest, _lines_done

    path = tmp_path / "inst.json"
    coalloc.write_instance(path, *family_batch("ctaap", 1, small=True)[0])
    digest = _file_digest(str(path))
    out = tmp_path / "out.jsonl"
    lost = {"index": 0, "file": str(path), "ok": False, "status": "error",
            "seed": instance_seed(SEED, 0), "sha256": digest,
            "error": {"type": "SlurmError", "message": "Slurm job 7_0 ended without results"}}
    solved = {**lost, "ok": True, "status": "feasible", "error": None}
    out.write_text(json.dumps(lost) + "\n")
    assert _lines_done(str(out)) == set()
    out.write_text(json.dumps(solved) + "\n")
    assert _lines_done(str(out)) == {(digest, instance_seed(SEED, 0))}
