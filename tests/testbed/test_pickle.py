"""Testbed models cross process boundaries: ``solve_many(..., backend="processes")`` pickles
them, and their read-only mappings (``MappingProxyType``) do not pickle by themselves."""

from __future__ import annotations

import pickle
from types import MappingProxyType

import pytest

import coalloc
from coalloc import testbed
from coalloc.batch import BatchError
from coalloc.testbed import generators as g


def _pair(seed: int):
    return g.random_topology(12, seed=seed), g.deterlab(60, 3, seed=seed)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_models_round_trip_through_pickle_read_only(seed):
    top, ptop = _pair(seed)
    testbed.assign(top, ptop)  # attaches the solver's per-testbed cache to ptop
    ptop2, top2 = pickle.loads(pickle.dumps(ptop)), pickle.loads(pickle.dumps(top))
    # the referee: the files the writers produce are the same, field for field
    assert testbed.format_ptop(ptop2) == testbed.format_ptop(ptop)
    assert testbed.format_top(top2) == testbed.format_top(top)
    assert not hasattr(ptop2, "_tb_cache")  # caches stay behind
    node = next(iter(ptop2.nodes.values()))
    for mapping in (ptop2.nodes, ptop2.links, ptop2.type_limits, top2.nodes, node.types):
        assert isinstance(mapping, MappingProxyType)
    with pytest.raises(TypeError):
        ptop2.nodes["x"] = node  # still read-only
    with pytest.raises(TypeError):
        node.types["pc"] = 2.0


def test_process_batch_gives_the_serial_mappings():
    pairs = [_pair(seed) for seed in (1, 2)]
    serial = [testbed.assign(top, ptop) for top, ptop in pairs]
    assert any(r.success for r in serial)  # a batch that maps something
    batch = coalloc.solve_many([testbed.Instance(top, ptop) for top, ptop in pairs], "assign+",
                               executor="processes", n_jobs=2)  # fmt: skip
    for (top, ptop), want, got in zip(pairs, serial, batch):
        assert not isinstance(got, BatchError), got
        assert got.status == want.status and got.mapping == want.mapping
        if got.success:
            assert testbed.verify_mapping(top, ptop, got.mapping, got.routes).ok
