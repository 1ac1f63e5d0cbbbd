"""coalloc.solve_many: order, determinism across executors, error isolation, laziness, CLI.

The Dask tests come last in this file: they start a local cluster whose threads live until
the end of the module, and the process-pool tests before them fork.
"""

import concurrent.futures as cf
import inspect
import io
import itertools
import json
import os
import pathlib
import pickle
import warnings

import numpy as np
import pytest

import coalloc
from coalloc import BatchError, solve_many, solve_many_iter
from coalloc.batch import ProgressBar, instance_seed
from coalloc.cli import main
from coalloc.ctaap.generators import fig2, random_instance
from tests._optional import skip_unless_ci

SEED = 11


def _instances():
    out = [fig2(1 + k % 5, seed=100 + k) for k in range(6)]
    out.append(random_instance(40, 4, edge_probability=0.2, seed=7))  # sparse
    out.append(fig2(2, n_tasks=20, seed=3))
    return out


@pytest.fixture(scope="module")
def batch():
    return _instances()


@pytest.fixture(scope="module")
def reference(batch):
    """The answers of coalloc.solve, one instance at a time, with the documented seeds."""
    return [
        coalloc.solve(req, off, seed=instance_seed(SEED, i)) for i, (req, off) in enumerate(batch)
    ]


@pytest.fixture(scope="module")
def files(batch, tmp_path_factory):
    root = tmp_path_factory.mktemp("instances")
    paths = []
    for i, (req, off) in enumerate(batch):
        path = root / f"inst{i}.json"
        coalloc.write_instance(path, req, off)
        paths.append(str(path))
    return paths


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad")
    malformed = root / "malformed.json"
    malformed.write_text('{"request": {"properties": {"cpu": [1, 2]}}, "offer": {}}')
    return {"missing": str(root / "missing.json"), "malformed": str(malformed)}


def same_answers(results, reference, batch):
    """Every result is a verified allocation identical to the reference one."""
    assert len(results) == len(reference)
    for i, (res, ref, (req, off)) in enumerate(zip(results, reference, batch)):
        assert isinstance(res, coalloc.SolveResult), (i, res)
        assert res.success and res.seed == ref.seed
        np.testing.assert_array_equal(res.assignment, ref.assignment, err_msg=f"instance {i}")
        assert res.n_allocated == ref.n_allocated
        assert coalloc.verify(req, off, res.assignment).feasible


def mismatched_instance():
    """An instance that raises inside the solver: property names differ."""
    return coalloc.Request({"cpu": [1, 1]}), coalloc.Offer({"mem": [2]}, capacity=[2])


# ---------------------------------------------------------------- seeds and determinism


def test_instance_seed_is_the_spawned_child():
    children = np.random.SeedSequence(SEED).spawn(4)
    assert [instance_seed(SEED, i) for i in range(4)] == [
        int(c.generate_state(1, np.uint32)[0]) for c in children
    ]
    assert len({instance_seed(SEED, i) for i in range(100)}) == 100
    with pytest.raises(ValueError, match="index"):
        instance_seed(0, -1)


def test_serial_matches_solve(batch, reference):
    assert len({r.n_allocated for r in reference}) > 2  # the instances differ
    same_answers(solve_many(batch, executor="serial", seed=SEED), reference, batch)


@pytest.mark.parametrize("n_jobs, chunksize", [(1, 1), (2, 1), (2, 3), (3, 2), (-1, 5)])
def test_threads_match_serial_whatever_the_split(batch, reference, n_jobs, chunksize):
    results = solve_many(batch, n_jobs=n_jobs, chunksize=chunksize, seed=SEED)
    same_answers(results, reference, batch)


def test_other_method_and_params(batch):
    results = solve_many(batch[:4], "ctaap", n_jobs=2, seed=SEED, local_search=0, bound=True)
    for i, res in enumerate(results):
        ref = coalloc.solve(*batch[i], seed=instance_seed(SEED, i), local_search=0, bound=True)
        np.testing.assert_array_equal(res.assignment, ref.assignment)
        assert res.params["local_search"] == 0 and res.bound == ref.bound
    greedy = solve_many(batch[:3], "greedy", n_jobs=2, seed=SEED)
    assert [r.method for r in greedy] == ["greedy"] * 3


def test_explicit_seeds(batch):
    seeds = [5, 5, 0, 123, None, 7, 8, 2**40]
    results = solve_many(batch, n_jobs=2, seed=seeds)
    for (req, off), s, res in zip(batch, seeds, results):
        if s is None:
            continue
        np.testing.assert_array_equal(res.assignment, coalloc.solve(req, off, seed=s).assignment)
        assert res.seed == s
    # a None seed draws fresh entropy and the result records it (issue 23): it replays
    again = coalloc.solve(*batch[4], seed=results[4].seed)
    np.testing.assert_array_equal(results[4].assignment, again.assignment)
    with pytest.raises(ValueError, match="seed: got 2 per-instance seeds for 8"):
        solve_many(batch, seed=[1, 2])
    # an unsized iterable that outlives its seeds stops with the same error
    with pytest.raises(ValueError, match="only 2 per-instance seeds"):
        solve_many(iter(batch), seed=[1, 2], n_jobs=1)


def test_seed_none_is_reported_and_reproducible(batch):
    results = solve_many(batch[:3], seed=None, n_jobs=2)
    for (req, off), res in zip(batch, results):
        assert isinstance(res.seed, int)
        again = coalloc.solve(req, off, seed=res.seed)
        np.testing.assert_array_equal(res.assignment, again.assignment)


def test_results_in_input_order_when_completion_order_differs():
    """A big instance first and small ones after: the small ones finish first."""
    big = random_instance(300, 5, seed=1)
    small = [fig2(1, n_tasks=10, seed=s) for s in range(6)]
    batch = [big, *small]
    results = solve_many(batch, n_jobs=2, seed=3)
    assert [r.n_tasks for r in results] == [300] + [10] * 6
    serial = solve_many(batch, executor="serial", seed=3)
    for a, b in zip(results, serial):
        np.testing.assert_array_equal(a.assignment, b.assignment)


# ---------------------------------------------------------------- inputs and errors


def test_file_paths_read_in_the_worker(batch, reference, files):
    mixed = [files[0], *batch[1:4], *(os.path.abspath(f) for f in files[4:6])]
    mixed += [pathlib.Path(f) for f in files[6:]]
    results = solve_many(mixed, n_jobs=2, seed=SEED)
    same_answers(results, reference, batch)


def test_error_isolation(batch, reference, bad_files):
    items = [
        batch[0],
        bad_files["missing"],
        batch[1],
        bad_files["malformed"],
        42,
        mismatched_instance(),
        (batch[2][0],),
        batch[3],
    ]
    for executor in ("serial", "threads"):
        results = solve_many(items, executor=executor, n_jobs=None, seed=SEED, chunksize=2)
        assert [r.ok for r in results if isinstance(r, BatchError)] == [False] * 5
        assert [r.success for r in results] == [True, False, True] + [False] * 4 + [True]
        for i in (0, 2):
            assert results[i].seed == instance_seed(SEED, i)
        np.testing.assert_array_equal(results[0].assignment, reference[0].assignment)
        err = results[1]
        assert (err.index, err.exc_type, err.source) == (1, "InstanceError", bad_files["missing"])
        assert "cannot read" in err.message and "missing.json" in str(err)
        assert results[3].exc_type == "InstanceError" and "capacity" in results[3].message
        assert results[4].exc_type == "TypeError" and "got int" in results[4].message
        assert results[5].exc_type == "ValueError" and "property names" in results[5].message
        assert results[5].source is None and "Traceback" in results[5].traceback
        assert results[6].exc_type == "TypeError"
        again = coalloc.solve(*batch[3], seed=instance_seed(SEED, 7))
        np.testing.assert_array_equal(results[7].assignment, again.assignment)
        assert results[4].seed == instance_seed(SEED, 4)


def test_on_error_raise(batch, bad_files):
    items = [batch[0], batch[1], bad_files["missing"], 42, batch[2]]
    with pytest.raises(BatchError, match="instance 2 .*missing.json.*cannot read") as info:
        solve_many(items, n_jobs=2, seed=SEED, on_error="raise")
    assert info.value.index == 2 and info.value.exc_type == "InstanceError"
    with pytest.raises(BatchError, match="instance 1"):
        solve_many([batch[0], mismatched_instance()], executor="serial", on_error="raise")


def test_batch_error_pickles_and_compares():
    err = BatchError(3, "ValueError", "bad", source="a.json", seed=9, traceback="tb")
    back = pickle.loads(pickle.dumps(err))
    assert back == err and back.traceback == "tb" and str(back) == str(err)
    assert back.to_dict() == {
        "index": 3, "exc_type": "ValueError", "message": "bad", "source": "a.json", "seed": 9,
    }  # fmt: skip
    assert not back.ok and not back.success and isinstance(back, Exception)


def test_empty_batch():
    assert solve_many([]) == []
    assert solve_many(iter([]), executor="processes") == []


# ---------------------------------------------------------------- laziness and progress


@pytest.mark.parametrize("chunksize", [1, "auto"])
def test_lazy_consumption_of_an_endless_generator(batch, chunksize):
    from coalloc.batch.run import _CostChunks

    pulled = []

    def endless():
        for k in itertools.count():
            pulled.append(k)
            yield batch[k % len(batch)]

    it = solve_many_iter(endless(), n_jobs=2, max_in_flight=3, seed=SEED, chunksize=chunksize)
    assert pulled == []  # nothing happens before the first next()
    first = list(itertools.islice(it, 10))
    # the window (3 chunks; an "auto" chunk also looks one instance ahead), never the
    # whole (infinite) input
    most = 3 if chunksize == 1 else 3 * _CostChunks.MAX + 1
    assert len(pulled) <= 10 + most
    it.close()
    for i, res in enumerate(first):
        ref = coalloc.solve(*batch[i % len(batch)], seed=instance_seed(SEED, i))
        np.testing.assert_array_equal(res.assignment, ref.assignment)


def test_window_counts_chunks(batch):
    pulled = []

    def gen():
        for k, inst in enumerate(batch):
            pulled.append(k)
            yield inst

    it = solve_many_iter(gen(), n_jobs=1, max_in_flight=2, chunksize=2, seed=SEED)
    next(it)
    assert len(pulled) <= 2 * 2 + 2
    assert len(list(it)) == len(batch) - 1


def test_progress_callback(batch):
    calls = []
    results = solve_many(batch, n_jobs=2, chunksize=3, progress=lambda d, t: calls.append((d, t)))
    assert len(results) == len(batch)
    assert calls[-1] == (len(batch), len(batch))
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    calls.clear()
    solve_many(iter(batch), executor="serial", chunksize=1,
               progress=lambda d, t: calls.append((d, t)))  # fmt: skip
    assert calls == [(k, None) for k in range(1, len(batch) + 1)]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_draws_and_closes():
    out = _Terminal()
    bar = ProgressBar(out)  # on a terminal: drawn by tqdm with count, rate and estimate
    bar(0, 4)
    bar(2, 4)
    bar(4, 4)
    bar.close()
    text = out.getvalue()
    assert "4/4" in text and "100%" in text and text.endswith("\n")
    assert "inst/s" in text
    out = io.StringIO()  # not a terminal: nothing drawn
    bar = ProgressBar(out)
    bar(3, None)
    bar.close()
    assert out.getvalue() == ""
    out = _Terminal()
    bar = ProgressBar(out, disable=True)  # off
    bar(3, 5)
    bar.close()
    assert out.getvalue() == ""


def test_caller_executor_is_left_running(batch, reference):
    with cf.ThreadPoolExecutor(2) as pool:
        same_answers(solve_many(batch, executor=pool, seed=SEED), reference, batch)
        assert pool.submit(int, "5").result() == 5


# ---------------------------------------------------------------- bad arguments


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"method": "nope"}, ValueError, "method must be one of"),
        ({"n_jobs": 0}, ValueError, "n_jobs"),
        ({"n_jobs": -2}, ValueError, "n_jobs"),
        ({"n_jobs": 1.5}, TypeError, "n_jobs"),
        ({"n_jobs": True}, TypeError, "n_jobs"),
        ({"executor": object()}, TypeError, r"executor must be one of \[.*\] or a concurrent"),
        ({"executor": "gpu"}, ValueError, r"executor must be one of \['threads', 'processes'"),
        ({"backend": "gpu"}, ValueError, r"backend must be one of \('compiled', 'numpy'\)"),
        ({"executor": "serial", "n_jobs": 2}, ValueError, "n_jobs"),
        ({"chunksize": 0}, ValueError, "chunksize"),
        ({"max_in_flight": 0}, ValueError, "max_in_flight"),
        ({"on_error": "ignore"}, ValueError, "on_error"),
        ({"progress": 3}, TypeError, "progress"),
        ({"seed": -1}, ValueError, "seed"),
        ({"seed": "abc"}, TypeError, "seed"),
        ({"seed": [1, 2.5]}, TypeError, r"seed\[1\]"),
        ({"bound": "yes"}, TypeError, "bound"),
        ({"beta_rr": 1.1}, TypeError, r"takes no parameter\(s\) \['beta_rr'\]"),
    ],
)
def test_bad_arguments_fail_before_any_work(batch, kwargs, error, words):
    pulled = []

    def gen():
        for inst in batch:
            pulled.append(inst)
            yield inst

    with pytest.raises(error, match=words):
        solve_many_iter(gen(), **kwargs)
    with pytest.raises(error, match=words):
        solve_many(gen(), **kwargs)
    assert pulled == []


def test_bad_instances_argument_and_executor_conflicts(batch):
    with pytest.raises(TypeError, match="instances"):
        solve_many(5)
    with pytest.raises(TypeError, match="instances"):
        solve_many("inst.json")  # one path is not a batch

    class LooksLikeClient:
        def submit(self, fn, *args):
            raise AssertionError("must not be called")

    with pytest.raises(TypeError, match="client.get_executor"):
        solve_many(batch, executor=LooksLikeClient())
    with cf.ThreadPoolExecutor(1) as pool:
        with pytest.raises(TypeError, match="disagree: pass executor= only"):
            solve_many(batch, executor=pool, backend="threads")
    with pytest.raises(TypeError, match="disagree"):
        solve_many(batch, executor="serial", backend="processes")


def test_backend_is_the_kernels_and_its_old_executor_meaning_is_deprecated():
    from coalloc import collective

    insts = [collective.Instance(*reversed(collective.generators.random_instance(12, 3, seed=s)))
             for s in range(3)]  # fmt: skip
    # the old spelling of the executor still works, with a warning, and gives the same answers
    plain = solve_many(insts, "scan", executor="serial", seed=2)
    with pytest.warns(DeprecationWarning, match="pass executor='serial'"):
        old = solve_many(insts, "scan", backend="serial", seed=2)
    assert len(solve_many(insts, "scan", backend=None, executor="serial")) == 3  # old default
    with pytest.warns(DeprecationWarning, match="pass executor='threads'"):
        old_iter = list(solve_many_iter(insts, "scan", backend="threads", n_jobs=2, seed=2))
    for a, b, c in zip(plain, old, old_iter):
        assert a.to_dict()["resources"] == b.to_dict()["resources"] == c.to_dict()["resources"]
    # backend= is the kernels' choice, passed to the method (the NumPy twins here)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        twins = solve_many(insts, "scan", executor="serial", backend="numpy", seed=2)
    assert [r.params["backend"] for r in twins] == ["numpy"] * 3
    assert [r.params["backend"] for r in plain] == ["compiled"] * 3
    for a, b in zip(plain, twins):
        assert a.to_dict()["resources"] == b.to_dict()["resources"]
    # the signatures and the names show the executor only
    for func in (solve_many, solve_many_iter, coalloc.solve_many):
        assert "executor" in inspect.signature(func).parameters
        assert "backend" not in inspect.signature(func).parameters
    assert coalloc.batch.EXECUTORS == ("threads", "processes", "serial")
    with pytest.warns(DeprecationWarning, match="EXECUTORS"):
        assert coalloc.batch.BACKENDS == coalloc.batch.EXECUTORS


# ---------------------------------------------------------------- processes and pickling


def test_model_and_results_pickle(batch):
    req, off = random_instance(25, 3, edge_probability=0.3, seed=2)
    asym = coalloc.Request({"cpu": [1, 2, 3]}, bandwidth=[[0, 5, 0], [1, 0, 0], [0, 0, 0]])
    for obj in (req, asym):
        back = pickle.loads(pickle.dumps(obj))
        assert (back.n, back.symmetric) == (obj.n, obj.symmetric)
        assert (back.bandwidth != obj.bandwidth).nnz == 0
        assert back.bandwidth.indices.dtype == np.int64
        for name, values in obj.properties.items():
            np.testing.assert_array_equal(back.properties[name], values)
        assert (back.bandwidth_transpose != obj.bandwidth_transpose).nnz == 0
    off2 = pickle.loads(pickle.dumps(off))
    np.testing.assert_array_equal(off2.capacity, off.capacity)
    np.testing.assert_array_equal(off2.bandwidth, off.bandwidth)
    res = coalloc.solve(req, off, seed=4)
    res2 = pickle.loads(pickle.dumps(res))
    assert res2.to_dict() == res.to_dict()
    np.testing.assert_array_equal(res2.weights, res.weights)
    again = coalloc.solve(*pickle.loads(pickle.dumps((req, off))), seed=4)
    np.testing.assert_array_equal(again.assignment, res.assignment)


def test_processes_match_serial(batch, reference, files, bad_files):
    items = [*batch[:4], files[4], bad_files["malformed"], *batch[6:]]
    results = solve_many(items, executor="processes", n_jobs=2, chunksize=2, seed=SEED)
    err = results[5]
    assert isinstance(err, BatchError) and err.exc_type == "InstanceError" and err.index == 5
    ok = [i for i in range(len(batch)) if i != 5]
    same_answers([results[i] for i in ok], [reference[i] for i in ok], [batch[i] for i in ok])


def test_a_chunk_that_cannot_be_sent_fails_alone(batch):
    """An unpicklable item (found only when the chunk is sent) fails its chunk only."""
    req, off = batch[0]
    odd = (req, off)

    class Unpicklable(coalloc.Offer):
        def __reduce__(self):
            raise pickle.PicklingError("no pickling here")

    bad = Unpicklable(off.properties, off.capacity, off.bandwidth)
    items = [odd, (req, bad), batch[1]]
    results = solve_many(items, executor="processes", n_jobs=2, seed=SEED, chunksize=1)
    assert results[0].success and results[2].success
    assert isinstance(results[1], BatchError) and "pickl" in str(results[1]).lower()
    assert results[1].seed == instance_seed(SEED, 1)  # the calling process derives it too


# ---------------------------------------------------------------- the command line


def test_cli_solve_batch(files, bad_files, tmp_path, capsys):
    out = tmp_path / "results.jsonl"
    argv = ["solve-batch", files[0], bad_files["missing"], files[1], files[2]]
    assert main([*argv, "--jobs", "2", "--seed", str(SEED), "-o", str(out)]) == 1
    captured = capsys.readouterr()
    assert "solved 3/4 instances (1 failed)" in captured.out
    assert "missing.json" in captured.err and "cannot read" in captured.err
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["index"] for line in lines] == [0, 1, 2, 3]
    assert [line["ok"] for line in lines] == [True, False, True, True]
    assert lines[1]["status"] == "error" and lines[1]["error"]["type"] == "InstanceError"
    seeds = [instance_seed(SEED, i) for i in (0, 2, 3)]
    expected = solve_many([files[0], files[1], files[2]], seed=seeds)
    for line, res in zip([lines[0], lines[2], lines[3]], expected):
        assert line["assignment"] == res.assignment.tolist()
        assert line["verify"]["feasible"] and line["n_allocated"] == res.n_allocated
        assert line["seed"] == res.seed and "total" in line["timings"]
    assert lines[0]["file"] == files[0]

    # all good, processes, parameters, JSON lines on stdout
    argv = ["solve-batch", *files[:3], "--processes", "-j", "2", "-p", "local_search=0"]
    assert main([*argv, "--chunksize", "2", "-o", "-"]) == 0
    captured = capsys.readouterr()
    lines = [json.loads(line) for line in captured.out.splitlines()]
    assert [line["params"]["local_search"] for line in lines] == [0, 0, 0]
    assert "solved 3/3 instances (0 failed)" in captured.err


def test_cli_solve_batch_progress_bar(files, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("sys.stderr.isatty", lambda: True, raising=False)
    out = tmp_path / "r.jsonl"
    assert main(["solve-batch", *files[:3], "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "3/3" in err and "100%" in err and err.endswith("\n")  # closed before the summary
    assert main(["solve-batch", *files[:3], "--quiet", "-o", str(out)]) == 0
    assert "100%" not in capsys.readouterr().err


def _exit_status(argv):
    try:
        return main(argv)
    except SystemExit as exc:  # argparse rejects bad usage itself
        return exc.code


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--jobs", "0"], "--jobs"),
        (["--jobs", "x"], "--jobs"),
        (["--chunksize", "0"], "chunksize"),
        (["-p", "beta_rr=2"], "beta_rr"),
        (["--method", "nope"], "--method"),
    ],
)
def test_cli_solve_batch_bad_usage(files, tmp_path, capsys, extra, words):
    out = tmp_path / "r.jsonl"
    assert _exit_status(["solve-batch", files[0], *extra, "-o", str(out)]) == 2
    assert words in capsys.readouterr().err
    assert not out.exists()  # rejected before the output file is created


def test_cli_solve_batch_unwritable_output(files, tmp_path, capsys):
    assert main(["solve-batch", files[0], "-o", str(tmp_path / "no" / "r.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("coalloc: error: ") and "No such file" in err


# ---------------------------------------------------------------- Dask (last: see docstring)


def _require_distributed():
    try:
        import distributed
    except ImportError:
        reason = "dask.distributed not installed (pip install coalloc[dask]; CI installs it)"
        skip_unless_ci(reason)
    return distributed


@pytest.fixture(scope="module")
def dask_client():
    distributed = _require_distributed()
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    client = distributed.Client(cluster)
    # the workers register with the scheduler a moment after they start (later on a loaded
    # machine): the tests that count or name them start once both are there
    client.wait_for_workers(2, timeout=120)
    yield client
    client.close()
    cluster.close()


@pytest.mark.slow  # a local cluster of two processes
def test_dask_cluster_matches_serial(dask_client, batch, reference, files, bad_files):
    executor = dask_client.get_executor()
    results = solve_many(batch, executor=executor, seed=SEED, n_jobs=2)
    same_answers(results, reference, batch)
    # files read on the workers, a bad one among them, in chunks
    items = [*files[:5], bad_files["malformed"], *files[6:]]
    results = solve_many(items, executor=executor, seed=SEED, chunksize=3)
    assert isinstance(results[5], BatchError) and results[5].exc_type == "InstanceError"
    assert results[5].source == bad_files["malformed"]
    ok = [i for i in range(len(batch)) if i != 5]
    same_answers([results[i] for i in ok], [reference[i] for i in ok], [batch[i] for i in ok])
    assert len(dask_client.scheduler_info()["workers"]) == 2
    assert coalloc.batch._executor_workers(executor) == 2  # sizes the default window


@pytest.mark.slow  # a local cluster of two processes
def test_dask_workers_receive_each_shared_model_once_unchanged(dask_client):
    """Issue 24 item 1 on Dask: the shared models are scattered once to every worker (by
    their digest), the answers are the serial run's, and no solve changed a model."""
    from bench.shared.scaling import FAMILIES, answer, family_batch

    from coalloc.batch.shipping import _cached_digests, digest_of

    families = [family_batch(family, 4, seed=5, small=True) for family in FAMILIES]
    batch = [b[i] for i in range(4) for b in families]
    digests = {digest_of(b[0][-1]) for b in families}  # the supply part of each family
    serial = [answer(r) for r in solve_many(batch, executor="serial", seed=SEED)]
    results = solve_many(batch, executor=dask_client.get_executor(), seed=SEED, chunksize=2)
    assert [answer(r) for r in results] == serial
    held = dask_client.run(_cached_digests)
    assert set().union(*({d for d, _, _ in rows} for rows in held.values())) <= digests
    assert any(held.values())  # something was shipped by digest
    for rows in held.values():
        for _, arrived, now in rows:
            assert now == arrived  # the object the worker solved on is still that content


@pytest.mark.slow  # a local cluster of two processes
def test_dask_chunks_too_large_for_a_message_go_straight_to_a_worker(dask_client, monkeypatch):
    """Issue 41 item 3: a chunk whose pickle passes SCATTER_BYTES (a CTAAP Fig. 3 request
    is 4 MB) is scattered to a worker, not carried by its task through the scheduler; the
    answers are the serial run's. The threshold is lowered so that small chunks take it."""
    from bench.shared.scaling import FAMILIES, answer, family_batch

    from coalloc.batch import shipping

    families = [family_batch(family, 3, seed=6, small=True) for family in FAMILIES]
    batch = [b[i] for i in range(3) for b in families]
    serial = [answer(r) for r in solve_many(batch, executor="serial", seed=SEED)]
    sent = []
    original = shipping.Shipper._scatter_one

    def spy(self, blob):
        sent.append(len(blob))
        return original(self, blob)

    monkeypatch.setattr(shipping, "SCATTER_BYTES", 200)
    monkeypatch.setattr(shipping, "DASK_FILES", False)  # as for workers on other machines
    monkeypatch.setattr(shipping.Shipper, "_scatter_one", spy)
    results = solve_many(batch, executor=dask_client.get_executor(), seed=SEED, chunksize=2)
    assert [answer(r) for r in results] == serial
    assert sent and min(sent) > 200  # every chunk over the threshold went apart


@pytest.mark.slow  # a local cluster of two processes
def test_local_dask_workers_read_large_chunks_from_files(dask_client, monkeypatch):
    """Issue 41 item 3 on a local cluster (h46disp): the workers share the calling process's
    folders, so a chunk past SCATTER_BYTES goes as a file the task names (neither scattered
    nor carried through the scheduler); each file is read and removed by its worker, the
    folder removed at the end, and the answers are the serial run's, every one verified."""
    import glob

    from bench.shared.scaling import FAMILIES, answer, family_batch

    from coalloc.batch import shipping

    families = [family_batch(family, 3, seed=8, small=True) for family in FAMILIES]
    batch = [b[i] for i in range(3) for b in families]
    serial = solve_many(batch, executor="serial", seed=SEED)
    scattered, written, folders = [], [], []
    original_in_file, original_scatter = shipping.Shipper._in_file, shipping.Shipper._scatter_one
    original_folder = shipping.shared_folder

    def in_file(self, blob):
        out = original_in_file(self, blob)
        written.append(out.path)
        return out

    def scatter(self, blob):
        scattered.append(len(blob))
        return original_scatter(self, blob)

    def folder(client, make):
        folders.append(original_folder(client, make))
        return folders[-1]

    monkeypatch.setattr(shipping, "SCATTER_BYTES", 200)
    monkeypatch.setattr(shipping.Shipper, "_in_file", in_file)
    monkeypatch.setattr(shipping.Shipper, "_scatter_one", scatter)
    monkeypatch.setattr(coalloc.batch.run, "shared_folder", folder)
    results = solve_many(batch, executor=dask_client.get_executor(), seed=SEED, chunksize=2)
    assert [answer(r) for r in results] == [answer(r) for r in serial]
    for item, got, alone in zip(batch, results, serial):  # the family's referee, both sides
        assert item.verify(got).to_dict() == item.verify(alone).to_dict()
    assert folders and folders[0] is not None  # the workers saw the probe file
    assert written and not scattered  # every large chunk through a file, none scattered
    assert not any(os.path.exists(path) for path in written)  # read and removed
    assert not glob.glob(os.path.join(folders[0], "*")) and not os.path.exists(folders[0])


@pytest.mark.slow  # a local cluster of two processes
def test_local_dask_workers_send_large_records_back_through_files(dask_client, monkeypatch):
    """h46disp: on a local cluster a chunk's records whose arrays reach SPILL_BYTES (four
    load-sharing placements of the benchmark's 500 nodes: 4 x 77 kB) come back as a file the
    calling process reads and removes, not through the scheduler; the answers and the
    ``verify`` reports are the serial run's."""
    from bench.shared.scaling import answer, family_batch

    from coalloc.batch import run, shipping

    batch = family_batch("loadshare", 8, seed=9)
    serial = solve_many(batch, executor="serial", seed=SEED)
    came: list = []

    def spy(records):
        came.append(records.path if isinstance(records, shipping._Spill) else None)
        return shipping.received(records)

    monkeypatch.setattr(run, "received", spy)
    results = solve_many(batch, executor=dask_client.get_executor(), seed=SEED, chunksize=4)
    assert [answer(r) for r in results] == [answer(r) for r in serial]
    for item, got, alone in zip(batch, results, serial):
        assert item.verify(got).to_dict() == item.verify(alone).to_dict()
    assert len(came) == 2 and all(path is not None for path in came)  # both chunks: files
    assert not any(os.path.exists(path) for path in came)  # read and removed


def test_the_exact_methods_solver_reaches_them_as_a_keyword_or_in_options():
    try:
        import ortools  # noqa: F401
    except ImportError:
        skip_unless_ci("ortools (the exact extra) is not installed")
    pairs = [coalloc.generators.fig2(1, seed=s) for s in range(3)]
    res = coalloc.solve_many(pairs, "exact", executor="serial", solver="cpsat", time_limit=20)
    via_options = coalloc.solve_many(
        pairs, "exact", executor="serial", options={"solver": "cpsat", "time_limit": 20}
    )
    for (r, o), one, other in zip(pairs, res, via_options):
        assert one.status == other.status == "optimal"
        assert one.message.startswith("CP-SAT") and other.message.startswith("CP-SAT")
        assert one.params["solver"] == "cpsat"  # issue 36: the MILP solver is "solver"
        assert coalloc.verify(r, o, one.assignment).feasible
        assert one.n_allocated == coalloc.solve(r, o, "exact", solver="highs").n_allocated
        assert other.n_allocated == one.n_allocated


def test_options_are_checked():
    pairs = [coalloc.generators.fig2(1, seed=0)]
    with pytest.raises(ValueError, match="both in options and as keywords"):
        coalloc.solve_many(pairs, "exact", options={"time_limit": 1}, time_limit=2)
    with pytest.raises(TypeError, match="options must be a mapping"):
        coalloc.solve_many(pairs, "exact", options=[("time_limit", 1)])
    with pytest.raises(TypeError, match="no_such_option"):
        coalloc.solve_many(pairs, "exact", options={"no_such_option": 1})


def _crash_on_seed_13(self, method=None, *, seed=0, **params):
    if seed == 13:
        os._exit(3)  # a worker process dies (a segfault or the OOM killer look the same)
    return _REAL_CTAAP_SOLVE(self, method, seed=seed, **params)


_REAL_CTAAP_SOLVE = coalloc.ctaap.Instance.solve


@pytest.mark.slow
@pytest.mark.parametrize("chunksize", [1, 3])
def test_a_crashing_worker_costs_only_its_own_instance(monkeypatch, chunksize):
    import multiprocessing as mp

    if mp.get_start_method() != "fork":
        pytest.skip("needs fork: the patched solve must reach the workers")
    monkeypatch.setattr(coalloc.ctaap.Instance, "solve", _crash_on_seed_13)
    pairs = [coalloc.generators.fig2(1, seed=s) for s in range(8)]
    seeds = [1, 2, 13, 4, 5, 6, 7, 8]
    ticks = []
    res = coalloc.solve_many(
        pairs, executor="processes", n_jobs=2, seed=seeds, chunksize=chunksize,
        progress=lambda done, total: ticks.append(done),
    )  # fmt: skip
    assert isinstance(res[2], coalloc.BatchError) and "worker process" in res[2].message
    for k, (r, o) in enumerate(pairs):
        if k != 2:
            assert not isinstance(res[k], coalloc.BatchError), res[k]
            assert coalloc.verify(r, o, res[k].assignment).feasible
            expected = _REAL_CTAAP_SOLVE(coalloc.ctaap.Instance(r, o), seed=seeds[k])
            assert np.array_equal(res[k].assignment, expected.assignment)
    assert ticks[-1] == 8
