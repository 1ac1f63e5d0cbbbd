"""Task and cluster names survive networkx and JSON, are validated, and reach the output."""

import json
import pickle

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coalloc.ctaap as ctaap
from coalloc.cli import main


def _named():
    g = nx.Graph()
    for name, cpu in (("render", 2.0), ("db", 1.0), ("web", 1.0)):
        g.add_node(name, cpu=cpu)
    g.add_edge("render", "db", bandwidth=5.0)
    g.add_edge("db", "web", bandwidth=1.0)
    o = nx.Graph()
    o.add_node("amsterdam", capacity=2, cpu=2.0)
    o.add_node(7, capacity=1, cpu=1.0)
    o.add_edge("amsterdam", "amsterdam", bandwidth=10.0)
    o.add_edge("amsterdam", 7, bandwidth=2.0)
    return g, o


def test_networkx_and_json_round_trip_keep_names(tmp_path):
    g, o = _named()
    request, offer = ctaap.Request.from_networkx(g), ctaap.Offer.from_networkx(o)
    assert request.names == ("render", "db", "web") and offer.names == ("amsterdam", 7)
    back = request.to_networkx()
    assert list(back.nodes) == list(g.nodes)
    assert back["render"]["db"]["bandwidth"] == 5.0 and back.nodes["web"]["cpu"] == 1.0
    assert set(offer.to_networkx().nodes) == {"amsterdam", 7}
    path = tmp_path / "i.json"
    ctaap.write_instance(path, request, offer)
    r2, o2 = ctaap.read_instance(path)
    assert r2.names == request.names and o2.names == offer.names
    assert (r2.bandwidth != request.bandwidth).nnz == 0
    assert pickle.loads(pickle.dumps(r2)).names == r2.names
    # a graph labelled 0..n-1 has no names, and the file then has no "names" key
    plain = ctaap.Request.from_networkx(nx.path_graph(3))
    assert plain.names is None
    assert "names" not in ctaap.instance_to_dict(plain, ctaap.Offer({}, [1]))["request"]


def test_names_are_validated():
    with pytest.raises(ValueError, match="names has 2 names but there are 3"):
        ctaap.Request({"cpu": [1, 1, 1]}, names=["a", "b"])
    with pytest.raises(ValueError, match="'a' appears twice"):
        ctaap.Request({"cpu": [1, 1, 1]}, names=["a", "b", "a"])
    with pytest.raises(TypeError, match=r"names\[1\] must be a string or an integer"):
        ctaap.Offer({"cpu": [1, 1]}, [1, 1], names=["a", 1.5])
    with pytest.raises(ValueError, match="not a 64-bit integer"):
        ctaap.Offer({"cpu": [1]}, [1], names=[2**63])
    with pytest.raises(TypeError, match="sequence of names"):
        ctaap.Offer({"cpu": [1]}, [1], names="a")
    names = ["x", "y"]
    r = ctaap.Request({"cpu": [1, 1]}, names=names)
    names[0] = "changed"
    assert r.names == ("x", "y")
    with pytest.raises(AttributeError):
        r.names = ("p", "q")


def test_bad_names_in_a_file_are_one_line(tmp_path, capsys):
    g, o = _named()
    data = ctaap.instance_to_dict(ctaap.Request.from_networkx(g), ctaap.Offer.from_networkx(o))
    data["request"]["names"] = ["a", "b", 3.5]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    assert main(["solve", str(path)]) == 2
    err = capsys.readouterr().err
    assert "request.names[2]" in err and "\n" not in err.strip()
    data["request"]["names"] = ["a", "b", "a"]
    path.write_text(json.dumps(data))
    assert main(["solve", str(path)]) == 2
    assert "appears twice" in capsys.readouterr().err


def test_solve_prints_and_json_carries_the_names(tmp_path, capsys):
    g, o = _named()
    request, offer = ctaap.Request.from_networkx(g), ctaap.Offer.from_networkx(o)
    path = tmp_path / "i.json"
    ctaap.write_instance(path, request, offer)
    assert main(["solve", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    a = np.asarray(data["assignment"])
    assert ctaap.verify(request, offer, a).feasible
    assert data["task_names"] == ["render", "db", "web"]
    assert [c["cluster"] for c in data["clusters"]] == ["amsterdam", "7"]
    for j, c in enumerate(data["clusters"]):
        assert c["tasks"] == [request.names[i] for i in np.flatnonzero(a == j)]
    assert main(["solve", str(path)]) == 0
    out = capsys.readouterr().out
    assert "amsterdam" in out
    placed = [request.names[i] for i in np.flatnonzero(a >= 0)]
    assert placed and all(name in out for name in placed)


_NAME = st.one_of(st.text(max_size=8), st.integers(-(2**63), 2**63 - 1))


@settings(max_examples=40, deadline=None)
@given(st.lists(_NAME, min_size=1, max_size=6, unique=True), st.data())
def test_any_valid_names_survive_json_and_networkx(names, data):
    n = len(names)
    m = data.draw(st.integers(1, 3))
    cluster_names = data.draw(st.lists(_NAME, min_size=m, max_size=m, unique=True))
    request = ctaap.Request({"cpu": np.ones(n)}, np.ones((n, n)) - np.eye(n), names=names)
    offer = ctaap.Offer({"cpu": np.ones(m)}, np.ones(m, dtype=int), names=cluster_names)
    text = json.dumps(ctaap.instance_to_dict(request, offer))
    r2, o2 = ctaap.instance_from_dict(json.loads(text))
    assert r2.names == tuple(names) and o2.names == tuple(cluster_names)
    back = ctaap.Request.from_networkx(request.to_networkx())
    if names == list(range(n)):
        assert back.names is None  # the default labels are no names
    else:
        assert back.names == tuple(names)
    assert (back.bandwidth != request.bandwidth).nnz == 0
