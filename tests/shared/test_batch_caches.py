"""Per-worker caches travel with the shared model they derive from (issue 41 item 3): the
calling process builds a resource graph's routes and topology once, ships them right after
the graph's pickle bound to its digest, and a worker installs them instead of rebuilding
them; a cache that names another model or was altered is refused (the worker then builds
its own), and the answers are the serial run's."""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
import pickle
from collections import OrderedDict

import numpy as np
import pytest
from bench.shared.scaling import answer, family_batch

import coalloc
from coalloc._shared.caches import CacheRefused, cache_of, export_caches, install_caches
from coalloc.batch import shipping
from coalloc.batch.run import _check_item
from coalloc.batch.shipping import Shipper, _cache_counts, digest_of, unpack
from coalloc.taskmap import hierarchy, routing

_BUILDS = {"Topology": 0, "RouteTable": 0}


def _count_builds(monkeypatch=None) -> None:
    """Count every Topology and RouteTable built from a graph (not unpickled) from now on."""
    for key in _BUILDS:
        _BUILDS[key] = 0
    for cls in (hierarchy.Topology, routing.RouteTable):
        init = cls.__init__

        def counted(self, res, _init=init, _name=cls.__name__):
            _BUILDS[_name] += 1
            _init(self, res)

        if monkeypatch is not None:
            monkeypatch.setattr(cls, "__init__", counted)
        else:  # a forked pool worker: its own copy of the classes
            cls.__init__ = counted
    if monkeypatch is None:
        _fresh_worker()


def _fresh_worker() -> None:
    """A forked worker as a spawned one starts: no model held, no cache counted (the
    parent's, copied by the fork, hold what earlier tests unpacked in-process)."""
    shipping._cache.clear()
    shipping.cache_stats.update(installed=0, refused=0)


def _builds() -> dict:
    return dict(_BUILDS)


def _batch(k: int = 6, seed: int = 5) -> list:
    return family_batch("taskmap", k, seed=seed, small=True)


def _worker_side(packed, monkeypatch) -> list:
    """Unpack as a fresh worker would (nothing held yet) and solve each instance."""
    monkeypatch.setattr(shipping, "_cache", OrderedDict())
    monkeypatch.setattr(shipping, "cache_stats", {"installed": 0, "refused": 0})
    out = []
    for payload, keywords in packed:
        payload = pickle.loads(pickle.dumps(payload))  # as it crosses to a process
        for _index, item, seed in unpack(payload, **keywords):
            result = item.solve(seed=seed)
            assert item.verify(result).ok
            out.append(answer(result))
    return out


def _pack(batch, folder, size: int = 3) -> list:
    """Chunks of ``size``: the first instance's graph is shared too, not sent inline."""
    shipper = Shipper(folder=str(folder))
    items = [(i, _check_item(item), i) for i, item in enumerate(batch)]
    return [shipper.pack(items[i : i + size]) for i in range(0, len(items), size)]


@pytest.mark.parametrize("ship", [True, False])
def test_a_worker_installs_the_shipped_caches_and_builds_none(tmp_path, monkeypatch, ship):
    monkeypatch.setattr(shipping, "SHIP_CACHES", ship)
    batch = _batch()
    serial = [answer(item.solve(seed=i)) for i, item in enumerate(_batch())]
    packed = _pack(batch, tmp_path)  # the caller builds the caches here, once
    _count_builds(monkeypatch)
    routing._by_digest.clear()  # a fresh worker holds no route table of this graph
    got = _worker_side(packed, monkeypatch)
    assert got == serial
    if ship:
        assert _BUILDS == {"Topology": 0, "RouteTable": 0}
        assert shipping.cache_stats == {"installed": 1, "refused": 0}
    else:  # the control: the counter does see a worker that builds its own
        assert _BUILDS == {"Topology": 1, "RouteTable": 1}
        assert shipping.cache_stats == {"installed": 0, "refused": 0}


def test_caches_over_the_size_limit_stay_behind(tmp_path, monkeypatch):
    monkeypatch.setattr(shipping, "CACHE_BYTES", 1000)
    batch = _batch()
    serial = [answer(item.solve(seed=i)) for i, item in enumerate(_batch())]
    packed = _pack(batch, tmp_path)
    _count_builds(monkeypatch)
    routing._by_digest.clear()
    assert _worker_side(packed, monkeypatch) == serial
    assert shipping.cache_stats == {"installed": 0, "refused": 0}
    assert _BUILDS == {"Topology": 1, "RouteTable": 1}


def test_a_foreign_or_altered_cache_is_refused_and_the_worker_builds_its_own(tmp_path, monkeypatch):
    batch = _batch()
    other = _batch(seed=9)[0][1]  # another resource graph
    assert digest_of(other) != digest_of(batch[0][1])
    serial = [answer(item.solve(seed=i)) for i, item in enumerate(_batch())]
    packed = _pack(batch, tmp_path)
    files = {path for payload, _ in packed for path in payload.files.values()}
    assert len(files) == 1
    path = files.pop()
    graph_blob = pickle.dumps(batch[0][1], protocol=pickle.HIGHEST_PROTOCOL)
    # the other graph's caches, exported under its own digest, after this graph's pickle
    with open(path, "wb") as fh:
        fh.write(graph_blob + export_caches(other, digest_of(other)))
    _count_builds(monkeypatch)
    routing._by_digest.clear()
    assert _worker_side(packed, monkeypatch) == serial
    assert shipping.cache_stats == {"installed": 0, "refused": 1}
    assert _BUILDS == {"Topology": 1, "RouteTable": 1}  # built its own, once


def test_install_refuses_what_is_not_this_models_cache():
    a, b = _batch()[0][1], _batch(seed=9)[0][1]
    da, db = digest_of(a), digest_of(b)
    blob = export_caches(a, da)
    with pytest.raises(CacheRefused, match="offered for model"):
        install_caches(b, blob, db)  # another model's
    altered = bytearray(blob)
    altered[len(altered) // 2] ^= 0xFF  # a byte of the payload
    with pytest.raises(CacheRefused):
        install_caches(b, bytes(altered), da)
    with pytest.raises(CacheRefused):
        install_caches(b, b"not a pickle", da)
    with pytest.raises(CacheRefused, match="not a cache of"):  # another class's model
        install_caches(object.__new__(type("M", (), {})), blob, da)
    assert cache_of(b) == {}  # nothing installed by a refused cache
    assert install_caches(b, blob, da) == ["route_table", "multilevel_topology"]


def test_the_shipped_routes_and_topology_equal_those_built():
    graph = _batch()[0][1]
    fresh = _batch()[0][1]  # an equal graph built apart
    install_caches(fresh, export_caches(graph, "x"), "x")
    built, got = routing.RouteTable(graph), cache_of(fresh)["route_table"]
    assert got is not cache_of(graph)["route_table"]
    for name in ("pred", "pred_link", "proc_row"):
        assert np.array_equal(getattr(got, name), getattr(built, name))
        assert not getattr(got, name).flags.writeable
    procs = graph.processors.tolist()
    for a in procs[:4]:
        for b in procs:
            assert got.route(a, b).tolist() == built.route(a, b).tolist()
    topo, shipped = hierarchy.Topology(graph), cache_of(fresh)["multilevel_topology"]
    for name in ("order_nodes", "rptr", "rlink", "hops", "lptr", "lpairs", "cost", "gap"):
        assert np.array_equal(getattr(shipped, name), getattr(topo, name))
    assert shipped.routes is not None and shipped.P == topo.P and shipped.E == topo.E


def test_a_process_worker_builds_no_route_table_or_topology():
    batch = _batch()
    serial = [answer(r) for r in coalloc.solve_many(_batch(), executor="serial", seed=3)]
    with cf.ProcessPoolExecutor(1, mp_context=mp.get_context("fork"),
                                initializer=_count_builds) as pool:  # fmt: skip
        got = coalloc.solve_many(batch, executor=pool, seed=3, chunksize=3)
        builds = pool.submit(_builds).result()
        counts = pool.submit(_cache_counts).result()
    assert [answer(r) for r in got] == serial
    assert all(item.verify(r).ok for item, r in zip(batch, got))
    assert counts == {"installed": 1, "refused": 0}
    assert builds == {"Topology": 0, "RouteTable": 0}


def test_on_dask_the_caches_are_scattered_with_the_graph_and_installed(monkeypatch):
    class Client:  # the part of distributed.Client a Shipper uses
        def __init__(self):
            self.scattered = []

        def scatter(self, obj, broadcast, hash):
            self.scattered.append(obj)
            return ("future", len(self.scattered))

    batch = _batch()
    serial = [answer(item.solve(seed=i)) for i, item in enumerate(_batch())]
    client = Client()
    shipper = Shipper(client=client)
    items = [(i, _check_item(item), i) for i, item in enumerate(batch)]
    packed = [shipper.pack(items[i : i + 3]) for i in (0, 3)]
    assert len(client.scattered) == 1  # the graph and its caches: one value, once
    digest = digest_of(batch[0][1])
    plain = pickle.dumps(batch[0][1], protocol=pickle.HIGHEST_PROTOCOL)
    assert client.scattered[0].startswith(plain) and len(client.scattered[0]) > len(plain)
    _count_builds(monkeypatch)
    routing._by_digest.clear()
    monkeypatch.setattr(shipping, "_cache", OrderedDict())
    monkeypatch.setattr(shipping, "cache_stats", {"installed": 0, "refused": 0})
    given = {digest: client.scattered[0]}  # what Dask hands the task for its future
    got = []
    for payload, keywords in packed:
        assert keywords == {"shared": {digest: ("future", 1)}}
        arrived = pickle.loads(pickle.dumps(payload, protocol=5))
        got += [answer(item.solve(seed=s)) for _, item, s in unpack(arrived, given)]
    assert got == serial
    assert shipping.cache_stats == {"installed": 1, "refused": 0}
    assert _BUILDS == {"Topology": 0, "RouteTable": 0}


# ------------------------------------------------ the testbed's tables travel too

_TB_BUILDS = {"tables": 0, "verify": 0}


def _count_testbed_builds(monkeypatch=None) -> None:
    """Count every build of a testbed's solver tables and checker tables from now on (a
    call that finds its entry missing from ``cache_of(ptop)``)."""
    from coalloc.testbed import problem, verify

    for key in _TB_BUILDS:
        _TB_BUILDS[key] = 0
    for module, name, key in ((problem, "_testbed_part", "tables"),
                              (verify, "_testbed_tables", "verify")):  # fmt: skip
        original = getattr(module, name)

        def counted(ptop, *args, _original=original, _key=key, **kwargs):
            if _key not in cache_of(ptop):
                _TB_BUILDS[_key] += 1
            return _original(ptop, *args, **kwargs)  # (the set-up's polled=True too)

        if monkeypatch is not None:
            monkeypatch.setattr(module, name, counted)
        else:  # a forked pool worker: its own copy of the modules
            setattr(module, name, counted)
    if monkeypatch is None:
        _fresh_worker()


def _testbed_builds() -> dict:
    return dict(_TB_BUILDS)


def _testbed_batch(k: int = 6, seed: int = 4) -> list:
    return family_batch("testbed", k, seed=seed, small=True)


def test_the_shipped_testbed_tables_equal_those_built():
    from types import MappingProxyType

    from coalloc.testbed import problem, verify

    ptop = _testbed_batch()[0][1]
    fresh = pickle.loads(pickle.dumps(ptop))  # the testbed as a worker receives it
    digest = digest_of(ptop)
    blob = export_caches(ptop, digest)
    assert blob is not None  # the tables pickle now (their mappings did not)
    assert install_caches(fresh, blob, digest) == ["tables", "verify"]
    shipped = cache_of(fresh)["tables"]
    other = pickle.loads(pickle.dumps(ptop))  # built apart, on an equal testbed
    built = problem._testbed_part(other)
    assert shipped is not cache_of(ptop)["tables"] and set(shipped) == set(built)
    for key, value in built.items():
        got = shipped[key]
        if isinstance(value, np.ndarray):
            assert np.array_equal(got, value) and got.dtype == value.dtype
            assert got.flags.writeable == value.flags.writeable, key
        elif key == "iface_types":
            assert all(isinstance(m, MappingProxyType) for m in got)
            assert [dict(m) for m in got] == [dict(m) for m in value]
        elif key in ("cand_memo", "pclasses"):
            assert got == {} and got is not cache_of(ptop)["tables"][key]
        else:
            assert got == value, key
    switches, additive, negative, links, tsig = cache_of(fresh)["verify"]
    expect = verify._testbed_tables(other)
    assert (switches, additive, negative, tsig) == (expect[0], expect[1], expect[2], expect[4])
    name = next(iter(fresh.links))
    assert links[name] == expect[3][name] and links._links is fresh.links  # its own links


@pytest.mark.parametrize("ship", [True, False])
def test_a_worker_installs_the_testbed_tables_and_builds_none(tmp_path, monkeypatch, ship):
    monkeypatch.setattr(shipping, "SHIP_CACHES", ship)
    batch = _testbed_batch()
    serial_batch = _testbed_batch()
    serial = [answer(item.solve(seed=i)) for i, item in enumerate(serial_batch)]
    packed = _pack(batch, tmp_path)  # the caller builds the tables here, once
    _count_testbed_builds(monkeypatch)
    got = []
    monkeypatch.setattr(shipping, "_cache", OrderedDict())
    monkeypatch.setattr(shipping, "cache_stats", {"installed": 0, "refused": 0})
    for payload, keywords in packed:
        payload = pickle.loads(pickle.dumps(payload))  # as it crosses to a process
        for _index, item, seed in unpack(payload, **keywords):
            result = item.solve(seed=seed)
            report = item.verify(result)  # the checker's tables: installed, or built
            assert report.to_dict() == serial_batch[_index].verify(
                serial_batch[_index].solve(seed=seed)).to_dict()  # fmt: skip
            got.append(answer(result))
    assert got == serial
    if ship:
        assert _TB_BUILDS == {"tables": 0, "verify": 0}
        assert shipping.cache_stats == {"installed": 1, "refused": 0}
    else:  # the control: the counter does see a worker that builds its own
        assert _TB_BUILDS == {"tables": 1, "verify": 1}
        assert shipping.cache_stats == {"installed": 0, "refused": 0}


def test_a_process_worker_builds_no_testbed_tables():
    batch = _testbed_batch()
    serial = [answer(r) for r in coalloc.solve_many(_testbed_batch(), executor="serial", seed=3)]
    with cf.ProcessPoolExecutor(1, mp_context=mp.get_context("fork"),
                                initializer=_count_testbed_builds) as pool:  # fmt: skip
        got = coalloc.solve_many(batch, executor=pool, seed=3, chunksize=3)
        builds = pool.submit(_testbed_builds).result()
        counts = pool.submit(_cache_counts).result()
    assert [answer(r) for r in got] == serial
    assert all(item.verify(r).ok or r.status == "infeasible" for item, r in zip(batch, got))
    assert counts == {"installed": 1, "refused": 0}
    assert builds == {"tables": 0, "verify": 0}
