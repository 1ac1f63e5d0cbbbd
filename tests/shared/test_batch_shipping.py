"""Shared inputs cross once (issue 24 item 1): a batch of instances sharing a model sends
the model to each process or Dask worker once, keyed by its digest; the answers are those
of the serial run, and no solve changes a shared model."""

from __future__ import annotations

import concurrent.futures as cf
import pickle

import pytest
from bench.shared.scaling import FAMILIES, answer, family_batch

import coalloc
from coalloc.batch.run import _check_item
from coalloc.batch.shipping import Shipper, _cached_digests, digest_of, unpack


def _mixed(k: int = 4) -> list:
    """``k`` instances of every family, each family's sharing one supply model, mixed."""
    batches = [family_batch(family, k, seed=3, small=True) for family in FAMILIES]
    return [b[i] for i in range(k) for b in batches]


def _shared_models(batch) -> dict:
    """id -> model for every part that more than one instance holds."""
    seen: dict = {}
    shared: dict = {}
    for inst in batch:
        for part in inst:
            if id(part) in seen:
                shared[id(part)] = part
            seen[id(part)] = part
    return shared


@pytest.fixture(scope="module")
def mixed():
    batch = _mixed()
    before = {key: digest_of(m) for key, m in _shared_models(batch).items()}
    assert len(before) == len(FAMILIES)  # one shared model per family
    serial = [answer(r) for r in coalloc.solve_many(batch, executor="serial", seed=11)]
    return batch, before, serial


def test_threads_share_the_models_and_leave_them_unchanged(mixed):
    batch, before, serial = mixed
    got = coalloc.solve_many(batch, executor="threads", n_jobs=2, seed=11)
    assert [answer(r) for r in got] == serial
    after = {key: digest_of(m) for key, m in _shared_models(batch).items()}
    assert after == before  # no solve (serial or threads) wrote to a shared model


def test_a_process_worker_receives_each_shared_model_once_and_keeps_it_unchanged(mixed):
    batch, before, serial = mixed
    with cf.ProcessPoolExecutor(1) as pool:  # one worker: every instance lands there
        got = coalloc.solve_many(batch, executor=pool, seed=11)
        held = pool.submit(_cached_digests).result()
    assert [answer(r) for r in got] == serial
    shipped = {digest for digest, _, _ in held}
    assert shipped == set(before.values())  # each shared model, by its content digest
    for digest, arrived, now in held:  # after every instance was solved on that object
        assert arrived == digest  # a forked worker pickles as its parent does
        assert now == arrived


def test_a_forked_worker_holds_only_what_its_own_batch_sent(tmp_path):
    """Regression (h51pool follow-up): a parent that unpacked one batch in-process (an
    in-process Dask worker, a test) forked a pool whose worker still held that batch's
    models; the worker's cache is now empty at the fork, as a spawned worker's is."""
    import multiprocessing

    from coalloc.batch import shipping

    first = family_batch("collective", 3, seed=1, small=True)
    second = family_batch("collective", 3, seed=2, small=True)
    old, new = digest_of(first[0].pool), digest_of(second[0].pool)
    assert old != new
    shipper = Shipper(folder=str(tmp_path))
    try:
        for i, item in enumerate(first):  # the first batch, unpacked here in-process
            payload, _ = shipper.pack([(i, _check_item(item), i)])
            unpack(pickle.loads(pickle.dumps(payload)))
        assert old in {digest for digest, _, _ in _cached_digests()}
        fork = multiprocessing.get_context("fork")
        with cf.ProcessPoolExecutor(1, mp_context=fork) as pool:  # a fresh one-worker pool
            got = coalloc.solve_many(second, executor=pool, seed=4)
            held = pool.submit(_cached_digests).result()
        assert [answer(r) for r in got] == [
            answer(r) for r in coalloc.solve_many(second, executor="serial", seed=4)
        ]
        assert {digest for digest, _, _ in held} == {new}  # the second batch's model only
    finally:
        shipping._cache.pop(old, None)


def test_a_shared_model_is_pickled_once(tmp_path):
    batch = family_batch("collective", 12, seed=1, small=True)
    pool = batch[0].pool
    size = len(pickle.dumps(pool, protocol=pickle.HIGHEST_PROTOCOL))
    shipper = Shipper(folder=str(tmp_path))
    packed = [shipper.pack([(i, _check_item(item), i)])[0] for i, item in enumerate(batch)]
    sent = [len(pickle.dumps(p)) for p in packed]
    plain = [len(pickle.dumps([(i, item, i)])) for i, item in enumerate(batch)]
    # The first chunk carries the pool; from the second on, a digest stands for it.
    assert sent[0] > size
    assert all(s < size / 4 for s in sent[1:])
    assert shipper.bytes_sent == size  # the pool's pickle, once (its file)
    assert sum(plain) > 10 * size > sum(sent[1:]) + shipper.bytes_sent
    assert sorted(p.name for p in tmp_path.iterdir()) == [digest_of(pool) + ".pickle"]
    # What a worker unpacks holds one pool object for every instance, equal to the pool.
    chunks = [unpack(pickle.loads(pickle.dumps(p)))[0] for p in packed]
    pools = {id(chunk[1].pool) for chunk in chunks[1:]}
    assert len(pools) == 1
    assert digest_of(chunks[1][1].pool) == digest_of(pool)
    assert [answer(c[1].solve(seed=0)) for c in chunks] == [
        answer(item.solve(seed=0)) for item in batch
    ]


def test_models_held_once_are_sent_inline(tmp_path):
    batch = family_batch("ctaap", 3, seed=1, small=True)
    unique = [coalloc.ctaap.Instance(b.request, pickle.loads(pickle.dumps(b.offer))) for b in batch]
    shipper = Shipper(folder=str(tmp_path))
    for i, item in enumerate(unique):
        shipper.pack([(i, item, i)])
    assert list(tmp_path.iterdir()) == []  # nothing shared, nothing written


def test_the_caller_keeps_a_bounded_set_of_shared_models(tmp_path, monkeypatch):
    from coalloc.batch import shipping

    monkeypatch.setattr(shipping, "KEEP", 2)
    pools = [family_batch("collective", 2, seed=s, small=True) for s in range(4)]
    shipper = Shipper(folder=str(tmp_path))
    for k, batch in enumerate(pools):  # four pools, each held by two instances
        for i, item in enumerate(batch):
            shipper.pack([(2 * k + i, item, 0)])
    assert len(shipper.shared) == 2 and len(shipper.files) == 2
    again = pools[0][0]  # forgotten, then back: shared again under the same digest
    payload, _ = shipper.pack([(8, again, 0)])
    shipper.pack([(9, again, 0)])
    assert digest_of(again.pool) in shipper.files
    assert unpack(pickle.loads(pickle.dumps(payload)))[0][1].pool is not None


def test_packing_swaps_the_shared_parts_for_digests_and_copies_nothing(tmp_path, monkeypatch):
    from coalloc.batch import columnar
    from coalloc.batch.shipping import _Parts, _Ref

    monkeypatch.setattr(columnar, "COLUMNAR", False)  # row by row (columns: test_batch_columnar)
    batch = family_batch("testbed", 3, seed=2, small=True)
    more = family_batch("testbed", 5, seed=2, small=True)[3:]
    shipper = Shipper(folder=str(tmp_path))
    first, _ = shipper.pack([(0, batch[0], 5)])
    second, _ = shipper.pack([(1, batch[1], 6), (2, batch[2], 7)])
    # a process pool's chunk is pickled once, here (the pool then sends bytes)
    ((index, item, seed),) = first.chunk.load()
    assert (index, seed) == (0, 5) and first.files == {}  # seen once: inline, whole
    assert type(item) is type(batch[0]) and digest_of(item) == digest_of(batch[0])
    digest = digest_of(batch[0][1])  # (experiment, testbed): the testbed is shared
    assert set(second.files) == {digest}
    for (_, item, _), inst in zip(second.chunk.load(), batch[1:]):
        assert isinstance(item, _Parts) and item.cls is type(inst)
        assert digest_of(item.parts[0]) == digest_of(inst[0])  # the experiment
        assert isinstance(item.parts[1], _Ref) and item.parts[1].digest == digest
    # A worker rebuilds instances of the same class, on one testbed object equal to ptop.
    rebuilt = unpack(pickle.loads(pickle.dumps(second)))
    assert [type(item) for _, item, _ in rebuilt] == [type(b) for b in batch[1:]]
    assert rebuilt[0][1][1] is rebuilt[1][1][1]
    assert digest_of(rebuilt[0][1][1]) == digest
    assert [(i, s) for i, _, s in rebuilt] == [(1, 6), (2, 7)]
    assert answer(rebuilt[1][1].solve(seed=3)) == answer(batch[2].solve(seed=3))
    # As columns: the experiments in one column, the testbed by its digest once (two new
    # experiments: one the batch saw would go row by row, to be shared).
    monkeypatch.setattr(columnar, "COLUMNAR", True)
    more = [type(inst)(inst.top, batch[0].ptop) for inst in more]
    third, _ = shipper.pack([(1, more[0], 6), (2, more[1], 7)])
    chunk = third.chunk.load()
    assert isinstance(chunk, columnar._Chunk) and set(third.files) == {digest}
    assert [f[0] for f in chunk.fields] == ["cols", "ref"] and chunk.fields[1][1] == digest
    again = unpack(pickle.loads(pickle.dumps(third)))
    assert [(i, s) for i, _, s in again] == [(1, 6), (2, 7)]
    assert again[0][1][1] is again[1][1][1] is rebuilt[0][1][1]  # the worker's one testbed
    assert answer(again[1][1].solve(seed=3)) == answer(more[1].solve(seed=3))


def test_a_dask_chunk_travels_as_bytes_with_its_shared_model_scattered_once():
    from coalloc.batch.shipping import _cache

    class Client:  # the part of distributed.Client a Shipper uses
        def __init__(self):
            self.scattered = []

        def scatter(self, obj, broadcast, hash):
            assert broadcast is True
            self.scattered.append(obj)
            return ("future", len(self.scattered))

    batch = family_batch("collective", 4, seed=5, small=True)
    client = Client()
    shipper = Shipper(client=client)
    packed = [shipper.pack([(i, item, i)]) for i, item in enumerate(batch)]
    # once, at its second use, as its pickle (unpickled by the task's thread, not Dask's)
    assert len(client.scattered) == 1 and isinstance(client.scattered[0], bytes)
    assert digest_of(pickle.loads(client.scattered[0])) == digest_of(batch[0].pool)
    digest = digest_of(batch[0].pool)
    for payload, keywords in packed[1:]:
        # bytes the scheduler forwards unopened, out of band (no copy of a large chunk)
        assert isinstance(payload.chunk, pickle.PickleBuffer)
        assert payload.chunk.raw().nbytes < len(pickle.dumps(batch[0].pool)) / 4
        assert keywords == {"shared": {digest: ("future", 1)}}
    # On the worker, Dask hands over what was scattered (the pickle) in place of its future.
    _cache.clear()
    given = {digest: client.scattered[0]}
    # what arrives: the buffer as Dask delivers it (a memoryview of its frame) or in band
    arrived = [pickle.loads(pickle.dumps(p, protocol=5)) for p, _ in packed]
    arrived[1].chunk = memoryview(arrived[1].chunk)
    chunks = [unpack(p, given if kw else None) for p, (_, kw) in zip(arrived, packed)]
    _cache.clear()
    pools = {id(chunk[0][1].pool) for chunk in chunks[1:]}
    assert len(pools) == 1  # unpickled once, then kept by the worker
    assert digest_of(chunks[1][0][1].pool) == digest
    assert [answer(c[0][1].solve(seed=0)) for c in chunks] == [
        answer(item.solve(seed=0)) for item in batch
    ]


def test_a_dask_chunk_too_large_for_a_message_is_scattered_apart(monkeypatch):
    """Issue 41 item 3: a chunk whose pickle passes SCATTER_BYTES goes to a worker by
    ``scatter`` (directly where the client reaches the workers), its task carries only
    the future; the worker rebuilds the chunk from what Dask hands over."""
    from coalloc.batch import shipping
    from coalloc.batch.shipping import _cache

    class Client:
        def __init__(self):
            self.calls = []

        def scatter(self, obj, broadcast=False, hash=True, direct=None):
            self.calls.append((len(obj), broadcast, hash, direct))
            return ("future", obj)

    batch = family_batch("ctaap", 2, seed=5, small=True)
    monkeypatch.setattr(shipping, "SCATTER_BYTES", 1000)
    client = Client()
    shipper = Shipper(client=client)
    payload, keywords = shipper.pack([(i, _check_item(item), i) for i, item in enumerate(batch)])
    assert payload.chunk is None and keywords["data"][0] == "future"
    # the shared offer to every worker, then the chunk to one worker, directly
    assert [c[1:] for c in client.calls] == [(True, False, None), (False, False, True)]
    assert client.calls[1][0] > 1000 and shipper.scattered == 1
    arrived = pickle.loads(pickle.dumps(payload, protocol=5))
    given = {d: future[1] for d, future in keywords.get("shared", {}).items()}  # Dask's hand
    _cache.clear()
    chunk = unpack(arrived, given, data=keywords["data"][1])
    _cache.clear()
    assert [answer(item.solve(seed=0)) for _, item, _ in chunk] == [
        answer(item.solve(seed=0)) for item in batch
    ]
    small, keywords = shipper.pack([(0, _check_item(batch[0]), 0)][:0])  # an empty chunk
    assert isinstance(small.chunk, pickle.PickleBuffer) and "data" not in keywords


class _TurnClient:
    """A Dask client's stand-in for the scatter of large chunks: two workers, listed from
    the ``unlisted + 1``-th ``scheduler_info`` on (none before, as right after a cluster
    starts); ``targets`` holds the worker each chunk named (None: Dask's choice)."""

    def __init__(self, unlisted: int):
        self.targets: list = []
        self.unlisted = unlisted

    def scheduler_info(self):
        self.unlisted -= 1
        if self.unlisted >= 0:
            return {"workers": {}}
        return {"workers": {"tcp://b:1": {}, "tcp://a:1": {}}}

    def scatter(self, obj, broadcast=False, hash=True, direct=None, workers=None):
        if not broadcast:  # a chunk, not a shared model sent to every worker
            self.targets.append(None if workers is None else tuple(workers))
        return ("future", obj)


def test_large_dask_chunks_go_to_the_workers_in_turn(monkeypatch):
    """Dask's scatter of one object always picks the first worker; the Shipper names the
    worker, in turn, so that the tasks (which run where their data is) spread."""
    from coalloc.batch import shipping

    monkeypatch.setattr(shipping, "SCATTER_BYTES", 10)
    batch = family_batch("taskmap", 6, seed=5, small=True)
    client = _TurnClient(unlisted=0)
    shipper = Shipper(client=client)
    for i, item in enumerate(batch):
        shipper.pack([(i, _check_item(item), i)])
    chunks = client.targets  # the shared graph was broadcast, the chunks named a worker
    assert len(chunks) == 6
    assert {chunks[k] for k in range(0, 6, 2)} != {chunks[k] for k in range(1, 6, 2)}
    assert sorted(set(chunks)) == [("tcp://a:1",), ("tcp://b:1",)]


def test_large_dask_chunks_wait_for_no_worker_list(monkeypatch):
    """A cluster whose workers have not registered yet (``scheduler_info`` lists none, as
    on a loaded CI machine right after ``LocalCluster`` starts) still ships every chunk:
    Dask chooses the worker, and the list is asked for again at the next chunk, so the
    workers take turns once they appear (it raised ZeroDivisionError for every chunk)."""
    from coalloc.batch import shipping

    monkeypatch.setattr(shipping, "SCATTER_BYTES", 10)
    batch = family_batch("taskmap", 6, seed=5, small=True)
    client = _TurnClient(unlisted=2)
    shipper = Shipper(client=client)
    for i, item in enumerate(batch):
        payload, keywords = shipper.pack([(i, _check_item(item), i)])
        assert keywords["data"][0] == "future"
    assert client.targets[:2] == [None, None]  # no worker known: Dask's choice
    assert sorted(set(client.targets[2:])) == [("tcp://a:1",), ("tcp://b:1",)]


@pytest.mark.parametrize("spill_dask", [True, False])
def test_a_dask_chunk_with_arrays_for_local_workers_is_spilled_as_a_process_pools(
    tmp_path, monkeypatch, spill_dask
):
    """h50pool: for Dask workers that share the caller's folder, a chunk whose arrays reach
    SPILL_BYTES (a CTAAP Fig. 3 request: 4 MB) is pickled once out of band, its arrays'
    bytes written straight to a file (a _Spill the worker maps), not pickled in band and
    then written whole (an _InFile: the arrays copied once more). The worker gets instances
    whose answers are the originals', and removes the file. ``SPILL_DASK`` off is the old
    way (the assertion on the payload's type fails there)."""
    from coalloc.batch import shipping

    monkeypatch.setattr(shipping, "SPILL_DASK", spill_dask)

    class Client:  # the part of distributed.Client a Shipper uses
        scattered: dict = {}

        def scatter(self, obj, broadcast, hash):  # the batch's shared model, once
            self.scattered[len(self.scattered)] = obj
            return len(self.scattered) - 1

    batch = family_batch("ctaap", 2, seed=4)
    client = Client()
    shipper = Shipper(folder=str(tmp_path), client=client)
    payload, keywords = shipper.pack([(i, _check_item(item), i) for i, item in enumerate(batch)])
    assert set(keywords) <= {"shared"}  # nothing scattered apart ("data")
    given = {d: client.scattered[f] for d, f in keywords.get("shared", {}).items()}
    arrived = pickle.loads(pickle.dumps(payload, protocol=5))  # as the task carries it
    kind = shipping._Spill if spill_dask else shipping._InFile
    assert isinstance(arrived.chunk, kind)
    if spill_dask:  # the arrays are in the file, the pickle beside them small
        assert arrived.chunk.path is not None and sum(arrived.chunk.sizes) > 4 << 20
        assert len(arrived.chunk.head) < 64 << 10
    chunk = unpack(arrived, given)
    assert not [p for p in tmp_path.iterdir() if not p.name.endswith(".pickle")]  # read and removed
    assert [answer(c[1].solve(seed=0)) for c in chunk] == [
        answer(item.solve(seed=0)) for item in batch
    ]
