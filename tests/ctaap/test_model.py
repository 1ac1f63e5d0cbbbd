"""Validation of the model objects: every bad input gets a clear error naming the argument."""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import coalloc
from coalloc.ctaap.model import check_compatible, compatibility


def small():
    req = coalloc.Request(
        {"cpu": [1, 2, 3], "mem": [1, 1, 1]},
        bandwidth=[[0, 5, 0], [5, 0, 2], [0, 2, 0]],
    )
    off = coalloc.Offer({"cpu": [2, 3], "mem": [1, 2]}, capacity=[1, 2], bandwidth=[[4, 3], [3, 6]])
    return req, off


def test_basic_attributes():
    req, off = small()
    assert req.n == 3 and off.m == 2
    assert req.symmetric
    assert req.n_edges == 4
    assert off.total_capacity == 3
    assert off.capacity.dtype == np.int64
    np.testing.assert_array_equal(
        compatibility(req, off), [[True, True], [True, True], [False, True]]
    )


def test_dense_and_sparse_bandwidth_agree():
    dense = np.array([[0, 3.0, 0], [0, 0, 1], [2, 0, 0]])
    a = coalloc.Request({"cpu": [1, 1, 1]}, dense)
    b = coalloc.Request({"cpu": [1, 1, 1]}, sp.coo_matrix(dense))
    assert (a.bandwidth != b.bandwidth).nnz == 0
    assert not a.symmetric
    np.testing.assert_array_equal(a.bandwidth_transpose.toarray(), dense.T)


def test_omitted_bandwidth_means_no_links():
    req = coalloc.Request({"cpu": [1, 2]})
    assert req.n == 2 and req.n_edges == 0
    off = coalloc.Offer({"cpu": [1]}, capacity=[3])
    assert np.all(off.bandwidth == 0)


def test_caller_data_untouched_and_copies_readonly():
    cpu = np.array([1.0, 2.0])
    bw = np.array([[0.0, 1.0], [1.0, 0.0]])
    req = coalloc.Request({"cpu": cpu}, bw)
    cpu[0] = 99
    bw[0, 1] = 99
    assert req.properties["cpu"][0] == 1.0
    assert req.bandwidth[0, 1] == 1.0
    with pytest.raises(ValueError):
        req.properties["cpu"][0] = 5


@pytest.mark.parametrize(
    "kwargs, exc, words",
    [
        (dict(properties={"cpu": [1, -1]}), ValueError, "non-negative"),
        (dict(properties={"cpu": [1, np.nan]}), ValueError, "finite"),
        (dict(properties={"cpu": [[1, 2]]}), ValueError, "1-D"),
        (dict(properties={"cpu": ["a", "b"]}), TypeError, "numeric"),
        (dict(properties={"cpu": [1, 2], "mem": [1]}), ValueError, "same length"),
        (dict(properties=[1, 2]), TypeError, "mapping"),
        (dict(properties={"cpu": [1, 2]}, bandwidth=[[0, 1]]), ValueError, "square"),
        (
            dict(properties={"cpu": [1, 2]}, bandwidth=np.zeros((3, 3))),
            ValueError,
            "expected (2, 2)",
        ),
        (dict(properties={"cpu": [1, 2]}, bandwidth=[[0, -1], [1, 0]]), ValueError, "non-negative"),
        (dict(properties={"cpu": [1, 2]}, bandwidth=[[1, 1], [1, 0]]), ValueError, "zero diagonal"),
        (dict(properties={"cpu": [1, 2]}, bandwidth=[[0, np.inf], [1, 0]]), ValueError, "finite"),
        (dict(), ValueError, "how many tasks"),
    ],
)
def test_request_rejects(kwargs, exc, words):
    with pytest.raises(exc, match=words.replace("(", r"\(").replace(")", r"\)")):
        coalloc.Request(**kwargs)


def test_request_rejects_sparse_negative():
    bad = sp.csr_array(np.array([[0.0, -2.0], [1.0, 0.0]]))
    with pytest.raises(ValueError, match="bandwidth must be non-negative"):
        coalloc.Request({"cpu": [1, 1]}, bad)


@pytest.mark.parametrize(
    "kwargs, exc, words",
    [
        (dict(properties={"cpu": [1]}), TypeError, "capacity is required"),
        (dict(properties={"cpu": [1]}, capacity=[1.5]), ValueError, "whole numbers"),
        (dict(properties={"cpu": [1]}, capacity=[-1]), ValueError, "non-negative"),
        (dict(properties={"cpu": [1]}, capacity=[[1]]), ValueError, "1-D"),
        (dict(properties={"cpu": [1]}, capacity=["x"]), TypeError, "integers"),
        (dict(properties={"cpu": [1, 2]}, capacity=[1]), ValueError, "both count clusters"),
        (dict(properties={"cpu": [1]}, capacity=[1], bandwidth=[[1, 2]]), ValueError, "expected"),
        (dict(properties={"cpu": [1]}, capacity=[1], bandwidth=[[-1]]), ValueError, "non-negative"),
    ],
)
def test_offer_rejects(kwargs, exc, words):
    with pytest.raises(exc, match=words):
        coalloc.Offer(**kwargs)


def test_offer_accepts_integral_floats_and_sparse_bandwidth():
    off = coalloc.Offer({"cpu": [1, 2]}, capacity=np.array([2.0, 0.0]), bandwidth=sp.eye(2))
    np.testing.assert_array_equal(off.capacity, [2, 0])
    np.testing.assert_array_equal(off.bandwidth, np.eye(2))


def test_property_names_must_match():
    req = coalloc.Request({"cpu": [1]})
    off = coalloc.Offer({"mem": [1]}, capacity=[1])
    with pytest.raises(ValueError, match="offer: property names must match"):
        check_compatible(req, off)
    with pytest.raises(ValueError, match="property names"):
        coalloc.solve(req, off)
    with pytest.raises(TypeError, match="request must be a coalloc.Request"):
        coalloc.solve("x", off)


def test_networkx_round_trip_undirected():
    g = nx.Graph()
    g.add_node("a", cpu=1, mem=2)
    g.add_node("b", cpu=3, mem=4)
    g.add_node("c", cpu=5, mem=6)
    g.add_edge("a", "b", bandwidth=7)
    g.add_edge("b", "c", bandwidth=8)
    req = coalloc.Request.from_networkx(g)
    assert req.n == 3 and req.symmetric
    np.testing.assert_array_equal(req.properties["mem"], [2, 4, 6])
    np.testing.assert_array_equal(req.bandwidth.toarray(), [[0, 7, 0], [7, 0, 8], [0, 8, 0]])
    back = req.to_networkx()
    assert back.number_of_edges() == 2 and back.nodes["b"]["cpu"] == 3  # names kept


def test_networkx_directed_and_offer():
    g = nx.DiGraph()
    g.add_nodes_from([(0, {"cpu": 1}), (1, {"cpu": 1})])
    g.add_edge(0, 1, bandwidth=3)
    req = coalloc.Request.from_networkx(g)
    assert not req.symmetric and req.bandwidth[0, 1] == 3 and req.bandwidth[1, 0] == 0

    h = nx.Graph()
    h.add_node("x", cpu=4, capacity=2)
    h.add_node("y", cpu=5, capacity=1)
    h.add_edge("x", "x", bandwidth=10)
    h.add_edge("x", "y", bandwidth=2)
    off = coalloc.Offer.from_networkx(h)
    np.testing.assert_array_equal(off.capacity, [2, 1])
    np.testing.assert_array_equal(off.bandwidth, [[10, 2], [2, 0]])
    assert set(off.properties) == {"cpu"}
    again = coalloc.Offer.from_networkx(off.to_networkx())
    np.testing.assert_array_equal(again.bandwidth, off.bandwidth)


def test_networkx_errors():
    h = nx.Graph()
    h.add_node("x", cpu=4)
    with pytest.raises(ValueError, match="no 'capacity' attribute"):
        coalloc.Offer.from_networkx(h)
    with pytest.raises(TypeError, match="networkx graph"):
        coalloc.Request.from_networkx([1, 2])
    g = nx.Graph()
    g.add_node(0, cpu=1)
    g.add_node(1)
    with pytest.raises(ValueError, match="no 'cpu' attribute"):
        coalloc.Request.from_networkx(g, properties=["cpu"])


def test_pickle_round_trip_keeps_arrays_read_only():
    """Batch solving ships models to other processes: values and immutability survive."""
    import pickle

    req, off = coalloc.generators.fig2(2, seed=3)

    def arrays(obj):
        out = {f"properties.{k}": v for k, v in obj.properties.items()}
        bw = obj.bandwidth
        if sp.issparse(bw):
            out.update({f"bandwidth.{p}": getattr(bw, p) for p in ("data", "indices", "indptr")})
        else:
            out["bandwidth"] = bw
        if hasattr(obj, "capacity"):
            out["capacity"] = obj.capacity
        return out

    assert not off.capacity.flags.writeable  # the premise: models hold read-only arrays
    for obj in (req, off):
        back = pickle.loads(pickle.dumps(obj))
        assert type(back) is type(obj)
        before, after = arrays(obj), arrays(back)
        assert before.keys() == after.keys()
        for name, arr in before.items():
            np.testing.assert_array_equal(after[name], arr)
            assert after[name].flags.writeable == arr.flags.writeable, name
    back = pickle.loads(pickle.dumps(req))
    same = coalloc.solve(req, off, seed=0).n_allocated
    assert coalloc.solve(back, off, seed=0).n_allocated == same
