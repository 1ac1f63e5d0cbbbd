"""A testbed experiment pickles as rows of its nodes' and links' fields (issue 41: a batch
pickles one experiment per instance in the calling process), and comes back the same:
every field, every read-only mapping, each node's links in order. Results crossing a
process pool compare equal to, and write the same dictionary as, the serial ones."""

from __future__ import annotations

import dataclasses
import pickle
from types import MappingProxyType

import pytest

import coalloc
from coalloc import testbed
from coalloc.batch import BatchError
from coalloc.testbed import VirtualTopology, VLink, VNode
from coalloc.testbed import generators as g
from coalloc.testbed.model import _virtual_rows


def _rich() -> VirtualTopology:
    """An experiment using every field: slots, desires, flags, link types, flags and
    options, a ``*`` bandwidth, vclasses, fixed nodes and hints."""
    nodes = [
        VNode("x", "big", slots=2.0, desires={"?+mem": 256.0, "fast": 0.5}, flags={"k": "v"}),
        VNode("y", "pc"),
        VNode("z", "pc850", desires={"disk": 1.0}),
    ]
    links = [
        VLink(
            "l1",
            "x",
            "y",
            100000,
            delay=2.0,
            loss=0.01,
            type="ethernet",
            flags={"emulated"},
            options={"queue": "red"},
        ),
        VLink("l2", "y", "z", None, flags={"trivial_ok"}),
        VLink("l3", "x", "z", 1000),
    ]
    return VirtualTopology(nodes, links, vclasses={"big": (0.5, ("pc850", "pc3000"))},
                           fixed={"x": "pc1"}, hints={"y": "pc2"})  # fmt: skip


def _same_experiment(got: VirtualTopology, want: VirtualTopology) -> None:
    assert type(got) is type(want)
    assert testbed.format_top(got) == testbed.format_top(want)  # the writer as referee
    assert list(got.nodes) == list(want.nodes) and list(got.links) == list(want.links)
    for name, node in want.nodes.items():
        other = got.nodes[name]
        assert type(other) is type(node) and other == node
        assert isinstance(other.desires, MappingProxyType)
        assert isinstance(other.flags, MappingProxyType)
    for name, link in want.links.items():
        other = got.links[name]
        assert type(other) is type(link) and other == link
        assert isinstance(other.options, MappingProxyType)
        assert other.flags == link.flags and isinstance(other.flags, frozenset)
    for table in ("nodes", "links", "vclasses", "fixed", "hints"):
        assert isinstance(getattr(got, table), MappingProxyType)
        assert dict(getattr(got, table)) == dict(getattr(want, table))
    for name in want.nodes:  # each node's links, in order, the rebuilt link objects
        assert [lk.name for lk in got.incident(name)] == [lk.name for lk in want.incident(name)]
        assert all(lk is got.links[lk.name] for lk in got.incident(name))
    assert sorted(k for k in vars(got) if not k.startswith("_tb_")) == sorted(
        k for k in vars(want) if not k.startswith("_tb_")
    )


@pytest.mark.parametrize("make", [
    _rich,
    lambda: g.random_topology(12, seed=3),
    lambda: g.workload(3, seed=5, max_size=20)[2][2],
    lambda: testbed.parse_top("make-vclass big 0.5 pc850 pc3000\nnode x big\nnode y pc\n"
                              "node z pc\nlink l1 x y 100 0 0\nlink l2 x z 100 0 0"),
    lambda: VirtualTopology([VNode("solo", "pc")]),
])  # fmt: skip
def test_experiment_round_trips_as_rows(make):
    top = make()
    assert _virtual_rows(top) is not None  # the compact form, not the general one
    got = pickle.loads(pickle.dumps(top, protocol=pickle.HIGHEST_PROTOCOL))
    _same_experiment(got, top)
    with pytest.raises(TypeError):
        got.nodes["w"] = got.nodes["x" if "x" in got.nodes else next(iter(got.nodes))]
    node = next(iter(got.nodes.values()))
    with pytest.raises(TypeError):
        node.desires["new"] = 1.0  # still read-only


def test_rows_are_smaller_than_the_general_pickle():
    top = g.random_topology(20, seed=1)
    general = pickle.dumps((type(top), top.__getstate__()), protocol=pickle.HIGHEST_PROTOCOL)
    compact = pickle.dumps(top, protocol=pickle.HIGHEST_PROTOCOL)
    assert len(compact) < len(general)


def test_solver_caches_stay_behind_and_the_answer_is_the_same():
    top, ptop = g.random_topology(10, seed=2), g.deterlab(40, 3, seed=2)
    want = testbed.assign(top, ptop, method="assign+", seed=0)
    object.__setattr__(top, "_tb_probe", object())  # a solver's cache: not picklable
    got = pickle.loads(pickle.dumps(top))
    assert not hasattr(got, "_tb_probe")
    _same_experiment(got, top)
    again = testbed.assign(got, ptop, method="assign+", seed=0)
    assert again.mapping == want.mapping and again.routes == want.routes


class _Tagged(VirtualTopology):
    pass


def test_anything_else_pickles_field_by_field():
    plain = _rich()
    sub = _Tagged.__new__(_Tagged)
    sub.__dict__.update(vars(plain))
    extra = _rich()
    extra.note = "kept"  # an attribute beyond the fields: the general pickle keeps it
    for top in (sub, extra):
        assert _virtual_rows(top) is None
        got = pickle.loads(pickle.dumps(top))
        _same_experiment(got, top)
    assert pickle.loads(pickle.dumps(extra)).note == "kept"


def _batch(n: int):
    ptop = g.deterlab(40, 3, seed=7)
    work = g.workload(n, seed=8, max_size=10)
    return [testbed.Instance(item[2], ptop) for item in work]


def _same_result(got, want) -> None:
    assert not isinstance(got, BatchError), got
    assert type(got) is type(want)
    assert dataclasses.replace(want, timings=got.timings) == got  # every field but times
    a, b = got.to_dict(), want.to_dict()
    a.pop("timings"), b.pop("timings")
    assert a == b


def test_results_round_trip_through_pickle():
    for inst in _batch(6):
        result = inst.solve(seed=1)
        back = pickle.loads(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
        assert back == result and back.to_dict() == result.to_dict()


def test_process_batch_equals_the_serial_one():
    batch = _batch(24)
    serial = coalloc.solve_many(batch, executor="serial", seed=3)
    assert sum(r.success for r in serial) >= 2  # mappings to compare, not only failures
    pooled = coalloc.solve_many(batch, executor="processes", n_jobs=2, seed=3, chunksize=5)
    assert len(pooled) == len(serial)
    for inst, got, want in zip(batch, pooled, serial):
        _same_result(got, want)
        if got.success:
            assert inst.verify(got).ok  # the family's referee
