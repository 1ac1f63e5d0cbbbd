"""A chunk's experiments as columns (issue 41, h51pool): :func:`coalloc.testbed._columns.pack`
takes many experiments apart into a few joined strings and float64 arrays, and
:func:`~coalloc.testbed._columns.unpack` gives back the same experiments: every field and
its type, the read-only mappings, node and link order, each node's links in order. The
referee is :func:`_same_experiment` of the compact pickle's tests (the ``.top`` writer and
a field-by-field comparison); a mutated packer must fail it."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from coalloc.testbed import VirtualTopology, VLink, VNode, _columns
from coalloc.testbed import generators as g
from coalloc.testbed.model import LINK_FLAGS

from .test_pickle_compact import _rich, _same_experiment, _Tagged

_names = st.text("abcxyz019_-.:", min_size=1, max_size=4)
_numbers = st.one_of(st.sampled_from([0.0, 1.0, 0.5, 1e15]),
                     st.floats(0, 1e9, allow_nan=False, allow_infinity=False))  # fmt: skip
_maps = st.dictionaries(_names, _numbers, max_size=2)


@st.composite
def experiments(draw) -> VirtualTopology:
    """A random experiment through the public constructors: any field may be set."""
    names = draw(st.lists(_names, min_size=1, max_size=6, unique=True))
    nodes = [VNode(n, draw(_names), slots=draw(_numbers), desires=draw(_maps),
                   flags=draw(st.dictionaries(_names, _names, max_size=1)))
             for n in names]  # fmt: skip
    links = []
    for k in range(draw(st.integers(0, 6)) if len(names) > 1 else 0):
        a, b = draw(st.lists(st.sampled_from(names), min_size=2, max_size=2, unique=True))
        links.append(VLink(f"l{k}", a, b, draw(st.one_of(st.none(), _numbers)),
                           delay=draw(_numbers), loss=draw(_numbers),
                           type=draw(st.one_of(st.none(), _names)),
                           flags=draw(st.sets(st.sampled_from(LINK_FLAGS))),
                           options=draw(st.dictionaries(_names, _names, max_size=1))))  # fmt: skip
    vclasses = draw(st.dictionaries(_names, st.tuples(_numbers, st.lists(_names, min_size=1,
                                                                          max_size=2)),
                                    max_size=1))  # fmt: skip
    fixed = draw(st.dictionaries(st.sampled_from(names), _names, max_size=1))
    hints = draw(st.dictionaries(st.sampled_from(names), _names, max_size=1))
    return VirtualTopology(nodes, links, vclasses=vclasses, fixed=fixed, hints=hints)


def _plain(n: int) -> list:
    """Experiments whose optional fields are all empty (the usual chunk)."""
    return [VirtualTopology([VNode(f"n{i}", "pc") for i in range(k + 1)],
                            [VLink(f"l{i}", f"n{i}", f"n{i + 1}", 1000.0 * i) for i in range(k)])
            for k in range(n)]  # fmt: skip


def _round_trip(tops: list) -> list:
    packed = _columns.pack(tops)
    assert packed is not None
    return _columns.unpack(pickle.loads(pickle.dumps(packed, protocol=5)))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(experiments(), max_size=5))
@example([])
@example([_rich()])
@example(_plain(4))
def test_random_experiments_come_back_the_same(tops):
    back = _round_trip(tops)
    assert len(back) == len(tops)
    for got, want in zip(back, tops):
        _same_experiment(got, want)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_workload_chunk_comes_back_the_same(seed):
    tops = [item[2] for item in g.workload(40, seed=seed, max_size=30)]
    tops.append(g.random_topology(12, seed=seed))
    for got, want in zip(_round_trip(tops), tops):
        _same_experiment(got, want)


def test_the_usual_chunk_keeps_its_empty_fields_as_none():
    packed = _columns.pack(_plain(5))
    assert packed[11:] == (None,) * 7  # star, desires, flags, link types, flags, options, tables
    assert len(pickle.dumps(packed)) < len(pickle.dumps(_plain(5)))  # and it is smaller


def test_solver_caches_stay_behind():
    top = _rich()
    object.__setattr__(top, "_tb_probe", object())  # a solver's cache: not carried
    (got,) = _round_trip([top])
    assert not hasattr(got, "_tb_probe")
    _same_experiment(got, top)


def test_anything_else_is_left_to_the_pickle():
    sub = _Tagged.__new__(_Tagged)
    sub.__dict__.update(vars(_rich()))
    extra = _rich()
    extra.note = "kept"
    for top in (sub, extra):
        assert _columns.pack([_rich(), top]) is None


def _mutations(packed: tuple) -> list:
    """Packed columns each altered in one way a faulty packer could."""
    out = []
    names = packed[2].split("\n")
    names[0], names[1] = names[1], names[0]  # two nodes' names swapped
    out.append(packed[:2] + ("\n".join(names),) + packed[3:])
    slots = bytearray(packed[7])
    slots[-1] ^= 0x40  # one slot count's bits
    out.append(packed[:7] + (bytes(slots),) + packed[8:])
    delay = bytearray(packed[9])
    delay[:8] = bytes(8)  # a link's delay zeroed
    out.append(packed[:9] + (bytes(delay),) + packed[10:])
    out.append(packed[:12] + (None,) + packed[13:])  # the desires dropped
    return out


def test_a_mutated_packer_fails_the_referee():
    tops = [_rich(), g.random_topology(8, seed=4)]
    for mutated in _mutations(_columns.pack(tops)):
        with pytest.raises(AssertionError):
            for got, want in zip(_columns.unpack(mutated), tops):
                _same_experiment(got, want)
