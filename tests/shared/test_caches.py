"""Caches keyed by object identity (issue 37 item 5): an ``id()`` is reused once its object
dies, so every identity-keyed cache must tell a new object at a dead one's address from
the dead one. These tests put a new object at the address of a dead one (CPython gives a
freed block of the same size to the next object of that size) and check that it gets
nothing of the dead one's.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np

from coalloc._shared.caches import _caches, _forget, cache_of


class Model:
    """A model as the package's are: identity equality, weak references allowed."""


def _reuse_an_address(make, keep_first):
    """``(old id, new object)``: an object made at the address of one that died, after
    ``keep_first(old)`` ran on the first; None when no address came back in 200 tries."""
    for _ in range(200):
        old = make()
        key = id(old)
        keep_first(old)
        del old
        gc.collect()
        new = [make() for _ in range(4)]
        for obj in new:
            if id(obj) == key:
                return key, obj
    return None


def _at_a_dead_ones_address(make, keep_first):
    """``(key, new object, the dead one's weak reference or None)``: a new object at a dead
    one's address, as :func:`_reuse_an_address` finds it; where CPython gives no address
    back in time (a long-running worker process full of other objects: seen under xdist),
    the dead object's entry is put at the new object's id by hand (the same situation, made
    certain), and its weak reference returned for a late callback."""
    found = _reuse_an_address(make, keep_first)
    if found is not None:
        return found[0], found[1], None
    new, dead = make(), make()
    keep_first(dead)
    entry = _caches.pop(id(dead))
    del dead
    gc.collect()
    assert entry[0]() is None  # dead now
    _caches[id(new)] = entry  # the dead one's (reference, cache) at the new one's id
    return id(new), new, entry[0]


def test_a_dead_models_cache_is_never_given_to_a_new_model_at_its_address():
    key, new, _ = _at_a_dead_ones_address(
        Model, lambda m: cache_of(m).setdefault("tables", ["stale"]))  # fmt: skip
    assert cache_of(new) == {}  # the new model's own, empty cache
    cache_of(new)["tables"] = ["fresh"]
    assert cache_of(new) == {"tables": ["fresh"]}


def test_a_cache_goes_with_its_model():
    m = Model()
    cache_of(m)["x"] = np.zeros(3)
    key = id(m)
    assert key in _caches
    del m
    gc.collect()
    assert key not in _caches  # dropped when the model is collected: no leak


def test_a_model_in_a_reference_cycle_gets_its_own_cache_after_collection():
    """The weak reference's callback of a cyclic model runs at collection; a new model at
    its address must neither see its cache nor lose its own to the late callback."""

    def make():
        m = Model()
        m.me = m  # a cycle: freed by the collector, not by reference counting
        return m

    key, new, late = _at_a_dead_ones_address(make, lambda m: cache_of(m).setdefault("k", "stale"))
    assert cache_of(new) == {}
    cache_of(new)["k"] = "mine"
    gc.collect()
    if late is not None:  # the dead one's callback, late: it must not drop the new cache
        _forget(key, late)
    assert cache_of(new) == {"k": "mine"}


def test_the_ctaap_bound_cache_does_not_answer_for_a_dead_request():
    """``tightened_capacity`` keeps, beside the offer, one entry per request keyed by the
    request's id with a weak reference: an entry whose request died is not a hit for a new
    request at the same id."""
    import coalloc.ctaap as ct
    from coalloc.ctaap.exact import tightened_capacity
    from coalloc.ctaap.model import compatibility

    request, offer = ct.generators.fig2(2, seed=3)
    compat = compatibility(request, offer)
    truth = tightened_capacity(request, offer, compat)
    store = cache_of(offer)["tightened_capacity"]

    class Dead:
        pass

    dead = Dead()
    stale = weakref.ref(dead)
    del dead
    gc.collect()
    assert stale() is None
    bogus = np.full_like(truth, 10**6)
    store[id(request)] = (stale, compat.copy(), bogus)  # a dead request's entry at this id
    got = tightened_capacity(request, offer, compat)
    assert np.array_equal(got, truth) and not np.array_equal(got, bogus)


def test_the_testbed_node_memos_keep_their_keys_alive():
    """The testbed's per-node memos key by ``id(node)`` and keep the node in the entry, so
    an id in the memo cannot be reused while its entry lives."""
    from coalloc.testbed import _spec, problem, routing, verify

    instance = _spec.example(seed=1)
    assert instance.solve(method="assign+").status is not None  # fills the memos
    assert problem._node_facts
    for memo in (problem._node_facts, problem._row_memo, problem._host_memo,
                 routing._row_memo, verify._node_views):  # fmt: skip
        for key, entry in list(memo.items())[:50]:
            assert id(entry[0]) == key
