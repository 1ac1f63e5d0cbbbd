"""Generators are seeded and match the paper's setups; the JSON format round-trips."""

import io
import json

import numpy as np
import pytest

import coalloc
from coalloc.ctaap.io import InstanceError, instance_from_dict, instance_to_dict


def same_instance(a, b):
    (ra, oa), (rb, ob) = a, b
    assert ra.n == rb.n and oa.m == ob.m
    for k in ra.properties:
        np.testing.assert_array_equal(ra.properties[k], rb.properties[k])
        np.testing.assert_array_equal(oa.properties[k], ob.properties[k])
    assert (ra.bandwidth != rb.bandwidth).nnz == 0
    np.testing.assert_array_equal(oa.capacity, ob.capacity)
    np.testing.assert_array_equal(oa.bandwidth, ob.bandwidth)


@pytest.mark.parametrize("r", [1, 2, 5])
def test_fig2_setup(r):
    req, off = coalloc.generators.fig2(r, seed=11)
    assert req.n == 50 and off.m == 5 and req.symmetric
    assert req.n_edges == 50 * 49  # complete graph
    for v in req.properties.values():
        assert v.min() >= 1 and v.max() <= 100
    assert req.bandwidth.data.min() >= 1 and req.bandwidth.data.max() <= 100
    assert off.capacity.min() >= 1 and off.capacity.max() <= 11
    assert off.bandwidth.min() >= 1 and off.bandwidth.max() <= 100 * r
    np.testing.assert_array_equal(off.bandwidth, off.bandwidth.T)
    same_instance((req, off), coalloc.generators.fig2(r, seed=11))


def test_fig3_setup():
    req, off = coalloc.generators.fig3(100, seed=2)
    assert req.n == 100 and off.capacity.max() <= 20 and off.bandwidth.max() <= 200


def test_generator_errors():
    with pytest.raises(ValueError, match="range_factor"):
        coalloc.generators.fig2(0)
    with pytest.raises(ValueError, match="edge_probability"):
        coalloc.generators.random_instance(5, 2, edge_probability=2)


@pytest.mark.parametrize("fmt", ["dense", "edges", "auto"])
def test_round_trip(tmp_path, fmt):
    inst = coalloc.generators.random_instance(30, 4, edge_probability=0.2, seed=5)
    path = tmp_path / "i.json"
    coalloc.write_instance(path, *inst, bandwidth_format=fmt, metadata={"k": 1})
    same_instance(inst, coalloc.read_instance(path))
    assert json.loads(path.read_text())["metadata"] == {"k": 1}


def test_round_trip_asymmetric():
    req = coalloc.Request({"cpu": [1, 2, 3]}, [[0, 2.5, 0], [0, 0, 0], [1, 0, 0]])
    off = coalloc.Offer({"cpu": [3]}, capacity=[3], bandwidth=[[2]])
    buf = io.StringIO()
    coalloc.write_instance(buf, req, off, bandwidth_format="edges")
    buf.seek(0)
    same_instance((req, off), coalloc.read_instance(buf))


def test_result_round_trip(tmp_path):
    req, off = coalloc.generators.fig2(2, seed=1)
    res = coalloc.solve(req, off, "greedy")
    path = tmp_path / "r.json"
    coalloc.write_result(path, res, coalloc.verify(req, off, res.assignment))
    back = coalloc.read_result(path)
    np.testing.assert_array_equal(back["assignment"], res.assignment)
    assert back["verify"]["feasible"] is True


def good_dict():
    req, off = coalloc.generators.fig2(1, n_tasks=4, seed=0)
    return instance_to_dict(req, off, bandwidth_format="edges")


@pytest.mark.parametrize(
    "mutate, words",
    [
        (lambda d: d.pop("request"), "f.json: request: missing"),
        (lambda d: d.__setitem__("format", "other"), "format is 'other'"),
        (lambda d: d.__setitem__("version", 9), "unsupported version"),
        (
            lambda d: d["request"]["properties"].__setitem__("cpu", [1, 2]),
            r"request\.properties\.cpu has 2 values but request\.n_tasks is 4",
        ),
        (lambda d: d["offer"].pop("capacity"), r"offer\.capacity: missing \(required\)"),
        (
            lambda d: d["offer"].__setitem__("capacity", [1, 2, 3, 4, -5]),
            r"offer\.capacity\[4\]: expected an integer in \[0, .*\], got the number -5",
        ),
        (lambda d: d["offer"]["properties"].pop("mem"), "property names differ"),
        (
            lambda d: d["request"].__setitem__("bandwidth", {"edges": [[0, 9, 1]]}),
            r"request\.bandwidth\.edges\[0\]: task index 9 is not in \[0, 4\)",
        ),
        (lambda d: d["request"].__setitem__("bandwidth", 5), "bandwidth: expected a list of"),
        # issue 15: bad files used to become another instance silently
        (
            lambda d: d["request"].__setitem__("bandwith", d["request"].pop("bandwidth")),
            r"request\.bandwith: unknown key 'bandwith' \(allowed here: n_tasks, properties, "
            "bandwidth, names\\)",
        ),
        (
            lambda d: d["request"]["bandwidth"].__setitem__("symmetric", "false"),
            r"bandwidth\.symmetric: expected true or false, got the string 'false'",
        ),
        (
            lambda d: d["request"]["bandwidth"]["edges"].append(
                list(d["request"]["bandwidth"]["edges"][0])
            ),
            r"repeats the pair \[0, 1\] of edges\[0\]",
        ),
        (
            lambda d: d["request"]["bandwidth"]["edges"].append([1, 0, 5]),
            r"edges\[\d+\] = \[1, 0, 5\] repeats the pair \[0, 1\].*gives each pair once",
        ),
        (
            lambda d: d["offer"].__setitem__("capacity", [1, 2, 3, 4, 1e19]),
            r"offer\.capacity\[4\]: expected an integer",
        ),
        (
            lambda d: d["offer"].__setitem__("capacity", [1, 2, 3, 4, 2**63]),
            r"offer\.capacity\[4\]: expected an integer",
        ),
        (
            lambda d: d["request"]["properties"]["cpu"].__setitem__(0, True),
            r"request\.properties\.cpu\[0\]: expected a finite number >= 0, got the boolean",
        ),
        (
            lambda d: d["request"].__setitem__("n_tasks", 2_000_000_000)
            or d["request"].__setitem__("properties", {})
            or d["offer"].__setitem__("properties", {}),
            "a request of 2000000000 tasks needs about .* GiB of memory",
        ),
        (lambda d: d["request"].__setitem__("n_tasks", 7), "n_tasks is 7"),
    ],
)
def test_bad_instances(mutate, words):
    d = good_dict()
    mutate(d)
    with pytest.raises(InstanceError, match=words):
        instance_from_dict(d, source="f.json")


def test_unreadable_files(tmp_path):
    with pytest.raises(InstanceError, match="cannot read"):
        coalloc.read_instance(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InstanceError, match="not valid JSON"):
        coalloc.read_instance(bad)


def test_sparse_generation_samples_distinct_pairs():
    req, _ = coalloc.generators.random_instance(40, 2, edge_probability=0.999999, seed=1)
    assert req.n_edges == 40 * 39  # every pair drawn exactly once, both directions
    req, _ = coalloc.generators.random_instance(400, 3, edge_probability=0.05, seed=2)
    B = req.bandwidth
    assert req.symmetric and B.diagonal().sum() == 0
    assert 0.04 < B.nnz / (400 * 399) < 0.06
    assert B.data.min() >= 1 and B.data.max() <= 100


@pytest.mark.parametrize("fmt", ["dense", "edges"])
def test_empty_request_round_trips(tmp_path, fmt):
    req, off = coalloc.generators.fig3(n_tasks=0, seed=2)
    path = tmp_path / "empty.json"
    coalloc.write_instance(path, req, off, bandwidth_format=fmt)
    back = coalloc.read_instance(path)
    same_instance((req, off), back)
    res = coalloc.solve(*back)
    assert res.n_allocated == 0 and coalloc.verify(*back, res.assignment).feasible
