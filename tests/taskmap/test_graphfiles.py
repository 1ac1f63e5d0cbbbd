"""Input from what users have: METIS / Scotch graph files and networkx graphs, with names.

Referees: networkx's own adjacency and attributes (the files are written here, from a
networkx graph, by writers independent of the readers), the family's ``verify_mapping``,
and exact expected error locations for every malformed file.
"""

import io
import json

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coalloc.taskmap as tm
from coalloc import InstanceError
from coalloc.cli import main
from coalloc.taskmap.io import (
    read_mapping_result,
    read_task_graph,
    write_resource_graph,
    write_task_graph,
)

# ----------------------------------------------------------------------------- writers


def random_nx(rng, n_max=14):
    n = int(rng.integers(1, n_max + 1))
    g = nx.gnp_random_graph(n, float(rng.uniform(0.1, 0.6)), seed=int(rng.integers(1 << 30)))
    for v in g.nodes:
        g.nodes[v]["w"] = [int(x) for x in rng.integers(0, 9, 3)]
    for u, v in g.edges:
        g.edges[u, v]["e"] = int(rng.integers(1, 9))
    return g


def metis_text(g, rng):
    """g in METIS format, with random fmt / ncon / comments / blank lines (independent)."""
    size, vw, ew = (int(x) for x in rng.integers(0, 2, 3))
    ncon = int(rng.integers(1, 4)) if vw else 1
    fmt = f"{size}{vw}{ew}"
    head = [str(g.number_of_nodes()), str(g.number_of_edges())]
    if fmt != "000" or rng.random() < 0.5:
        head.append(fmt.lstrip("0") or "0" if rng.random() < 0.5 else fmt)
        if vw and (ncon > 1 or rng.random() < 0.5):
            head.append(str(ncon))
    lines = ["% written by the test", " ".join(head)]
    for v in sorted(g.nodes):
        toks = []
        if size:
            toks.append(str(int(rng.integers(0, 5))))
        if vw:
            toks += [str(x) for x in g.nodes[v]["w"][:ncon]]
        for u in sorted(g.adj[v], key=lambda _: rng.random()):  # any neighbour order
            toks.append(str(u + 1))
            if ew:
                toks.append(str(g.edges[v, u]["e"]))
        lines.append(" ".join(toks))
        if rng.random() < 0.1:
            lines.append("% a comment between vertex lines")
    return "\n".join(lines) + "\n", bool(vw), bool(ew)


def scotch_text(g, rng):
    """g as a Scotch source graph, random base / flags / labels / line breaks (independent)."""
    base = int(rng.integers(0, 2))
    lab, eload, vload = (int(x) for x in rng.integers(0, 2, 3))
    labels = rng.permutation(1000)[: g.number_of_nodes()] + 5
    arcs = 2 * g.number_of_edges()
    out = ["0", f"{g.number_of_nodes()} {arcs}", f"{base} {lab}{eload}{vload}"]
    for v in sorted(g.nodes):
        toks = []
        if lab:
            toks.append(str(labels[v]))
        if vload:
            toks.append(str(g.nodes[v]["w"][0]))
        toks.append(str(g.degree[v]))
        for u in sorted(g.adj[v]):
            if eload:
                toks.append(str(g.edges[v, u]["e"]))
            toks.append(str(labels[u] if lab else u + base))
        cut = int(rng.integers(0, len(toks) + 1))  # tokens may run over lines
        out += [" ".join(toks[:cut]), " ".join(toks[cut:])]
    return "\n".join(out) + "\n", (labels.tolist() if lab else None), bool(vload), bool(eload)


def expected(g, vw, ew):
    n = g.number_of_nodes()
    w = np.array([g.nodes[v]["w"][0] if vw else 1 for v in range(n)], dtype=float)
    mat = nx.to_scipy_sparse_array(g, nodelist=range(n), weight="e" if ew else None).toarray()
    return w, mat


# ----------------------------------------------------------------------------- METIS


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_metis_files_read_as_networkx_sees_them(seed):
    rng = np.random.default_rng(seed)
    g = random_nx(rng)
    text, vw, ew = metis_text(g, rng)
    tasks = tm.read_metis_graph(io.StringIO(text))
    w, mat = expected(g, vw, ew)
    assert not tasks.directed and tasks.names is None
    assert np.array_equal(tasks.node_weight, w)
    assert np.array_equal(tasks.comm.toarray(), mat)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_metis_writer_round_trips_and_networkx_agrees(seed):
    rng = np.random.default_rng(seed)
    g = random_nx(rng)
    w, mat = expected(g, True, True)
    tasks = tm.TaskGraph(w, mat)
    f = io.StringIO()
    tm.write_metis_graph(f, tasks)
    back = tm.read_metis_graph(io.StringIO(f.getvalue()))
    assert np.array_equal(back.node_weight, w) and np.array_equal(back.comm.toarray(), mat)
    # the file itself, read by hand: line v + 2 lists v's neighbours (1-based)
    lines = f.getvalue().splitlines()
    for v in range(g.number_of_nodes()):
        nb = [int(x) - 1 for x in lines[v + 1].split()[1::2]]
        assert sorted(nb) == sorted(g.adj[v])


def test_the_metis_writer_refuses_fractions(tmp_path):
    with pytest.raises(ValueError, match="integers"):
        tm.write_metis_graph(tmp_path / "x.graph", tm.TaskGraph([1.5, 1.0]))
    assert not (tmp_path / "x.graph").exists()


def test_the_metis_weight_index_picks_a_constraint():
    text = "2 1 10 3\n1 2 3 2\n4 5 6 1\n"
    assert tm.read_metis_graph(io.StringIO(text)).node_weight.tolist() == [1.0, 4.0]
    assert tm.read_metis_graph(io.StringIO(text), weight_index=2).node_weight.tolist() == [
        3.0,
        6.0,
    ]
    with pytest.raises(ValueError, match="weight_index"):
        tm.read_metis_graph(io.StringIO(text), weight_index=3)


BAD_METIS = [
    ("", "empty METIS graph file"),
    ("3\n", ":1: the header must be"),
    ("3 x\n", ":1: token 'x' (number of edges m) is not an integer"),
    ("2 1 2\n2\n1\n", ":1: token '2' (fmt) must be up to three 0/1 digits"),
    ("2 1 1 2\n2 1\n1 1\n", ":1: token '2' (ncon) but fmt says no vertex weights"),
    ("% c\n2 1\n2\n", ":3: the header announces 2 vertices but the file has 1"),
    ("2 1\n2\n1\n7\n", ":4: token '7' after the 2 vertex lines"),
    ("2 1\n2.5\n1\n", ":2: token '2.5' (neighbour of vertex 1) is not an integer"),
    ("2 1\n3\n1\n", ":2: token '3': neighbour 3 of vertex 1 is not in [1, 2]"),
    ("2 1\n0\n1\n", ":2: token '0' (neighbour of vertex 1) must be >= 1"),
    ("2 1\n2 1\n1\n", ":2: token '1': vertex 1 lists itself"),
    ("3 2\n2 2\n1\n\n", ":2: token '2': neighbour 2 listed twice"),
    ("3 1\n2\n\n\n", ":2: the edge 1-2 is not listed again by vertex 2 (line 3)"),
    ("2 1 1\n2 4\n1 5\n", ":2: the edge 1-2 has weight 4.0 here but 5.0"),
    ("2 1 1\n2\n1 5\n", ":2: token '2': neighbour 2 of vertex 1 has no edge weight"),
    ("2 1 1\n2 0\n1 0\n", ":2: token '0' (weight of edge 1-2) must be >= 1"),
    ("2 2\n2\n1\n", ":1: token '2': the header announces 2 edges but the vertex lines list 2"),
    ("2 1 10\n\n1 1\n", ":2: vertex 1 needs 1 leading values"),
    ("2 1 10\n-1 2\n1 1\n", ":2: token '-1' (weight 1 of vertex 1) must be >= 0"),
]


@pytest.mark.parametrize("text, message", BAD_METIS)
def test_malformed_metis_files_name_file_line_and_token(tmp_path, text, message):
    path = tmp_path / "tasks.graph"
    path.write_text(text)
    with pytest.raises(InstanceError) as err:
        tm.read_metis_graph(path)
    assert str(err.value).startswith(str(path))
    assert message in str(err.value), str(err.value)


# ----------------------------------------------------------------------------- Scotch


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_scotch_files_read_as_networkx_sees_them(seed):
    rng = np.random.default_rng(seed)
    g = random_nx(rng)
    text, labels, vload, eload = scotch_text(g, rng)
    tasks = tm.read_scotch_graph(io.StringIO(text))
    w, mat = expected(g, vload, eload)
    assert tasks.names == labels
    assert np.array_equal(tasks.node_weight, w)
    assert np.array_equal(tasks.comm.toarray(), mat)


BAD_SCOTCH = [
    ("1\n", ":1: token '1': version must be 0"),
    ("0\n2 2\n", ":2: the file ends where base value was expected"),
    ("0\n2 2\n2 000\n", ":3: token '2': the base must be 0 or 1"),
    ("0\n2 2\n0 020\n", ":3: token '020' (flags) must be up to three 0/1 digits"),
    ("0\n2 2\n0 000\n1 1\n1 x\n", ":5: token 'x' (neighbour of vertex 1) is not an integer"),
    ("0\n2 2\n0 000\n1 2\n1 0\n", ":4: token '2': neighbour 2 is not in [0, 2)"),
    ("0\n2 3\n0 000\n1 1\n1 0\n", ":2: token '3': the header announces 3 arcs"),
    ("0\n2 2\n0 000\n1 1\n1 0\n5\n", ":6: token '5' after the 2 vertices"),
    ("0\n2 2\n0 000\n1 1\n1", ":5: the file ends where neighbour of vertex 1"),
    ("0\n2 2\n0 100\n7 1 8\n7 1 7\n", ":5: label 7 of vertex 1 repeats the label of vertex 0"),
    ("0\n2 2\n0 100\n7 1 9\n8 1 7\n", ":4: token '9': no vertex has label 9"),
    ("0\n2 2\n0 010\n1 3 1\n1 4 0\n", "has weight 3.0 here but 4.0"),
    ("0\n1 1\n0 000\n1 0\n", ":4: token '0': a vertex lists itself"),
]


@pytest.mark.parametrize("text, message", BAD_SCOTCH)
def test_malformed_scotch_files_name_file_line_and_token(tmp_path, text, message):
    path = tmp_path / "tasks.grf"
    path.write_text(text)
    with pytest.raises(InstanceError) as err:
        tm.read_scotch_graph(path)
    assert str(err.value).startswith(str(path))
    assert message in str(err.value), str(err.value)


# ----------------------------------------------------------------------------- networkx


def named_instance():
    app = nx.DiGraph()
    app.add_node("src", flops=2.0)
    app.add_node("filter", flops=6.0)
    app.add_node("sink", flops=1.0)
    app.add_edge("src", "filter", bytes=8.0)
    app.add_edge("filter", "sink", bytes=2.0)
    net = nx.Graph()
    net.add_node("switch")
    for cpu, speed in (("cpu-a", 4.0), ("cpu-b", 2.0), ("cpu-c", 1.0)):
        net.add_node(cpu, speed=speed)
        net.add_edge("switch", cpu, bw=10.0, latency=1.0)
    return app, net


def test_attribute_names_are_arguments_and_names_go_end_to_end(tmp_path):
    app, net = named_instance()
    tasks = tm.TaskGraph.from_networkx(app, weight="flops", comm="bytes")
    res = tm.ResourceGraph.from_networkx(net, capacity="speed", bandwidth="bw", length="latency")
    assert tasks.names == ["src", "filter", "sink"] and tasks.directed
    assert tasks.node_weight.tolist() == [2.0, 6.0, 1.0]
    assert tasks.comm.toarray()[0].tolist() == [0.0, 8.0, 0.0]
    assert res.route_kind == "custom" and res.route_length.tolist() == [1.0, 1.0, 1.0]
    result = tm.solve(tasks, res, seed=0)
    by_name = tm.named_mapping(tasks, res, result)
    assert list(by_name) == tasks.names
    for t, name in enumerate(tasks.names):  # referee: the index mapping, translated here
        assert by_name[name] == list(net.nodes)[result.mapping[t]]
    assert tm.verify_mapping(tasks, res, result.mapping, claimed=result.max_occupancy).ok
    # through a task graph file and a result file
    path = tmp_path / "tasks.json"
    write_task_graph(path, tasks)
    back = read_task_graph(path)
    assert back.names == tasks.names
    out = tmp_path / "map.json"
    tm.write_mapping_result(out, result, tasks=back, resources=res)
    data = read_mapping_result(out)
    assert data["task_names"] == tasks.names
    assert data["processor_names"] == [by_name[t] for t in tasks.names]
    b = result.bottleneck
    want = (
        list(net.nodes)[b.index]
        if b.kind == "node"
        else [list(net.nodes)[int(x)] for x in res.links[b.index]]
    )
    assert data["bottleneck"]["name"] == want


def test_networkx_attribute_errors_name_the_node_or_edge():
    app, net = named_instance()
    app.nodes["filter"]["flops"] = "lots"
    with pytest.raises(ValueError, match=r"node 'filter': attribute 'flops' = 'lots'"):
        tm.TaskGraph.from_networkx(app, weight="flops", comm="bytes")
    app, net = named_instance()
    app.edges["src", "filter"]["bytes"] = -1.0
    with pytest.raises(ValueError, match=r"edge \('src', 'filter'\): attribute 'bytes'"):
        tm.TaskGraph.from_networkx(app, weight="flops", comm="bytes")
    net.edges["switch", "cpu-a"].pop("latency")
    with pytest.raises(ValueError, match=r"edge \('switch', 'cpu-a'\) has no 'latency'"):
        tm.ResourceGraph.from_networkx(net, capacity="speed", bandwidth="bw", length="latency")
    app, net = named_instance()
    net.nodes["cpu-a"]["is_processor"] = "yes"
    with pytest.raises(ValueError, match="'is_processor' = 'yes' is not a bool"):
        tm.ResourceGraph.from_networkx(net, capacity="speed", bandwidth="bw")
    with pytest.raises(ValueError, match="at least one task"):
        tm.TaskGraph.from_networkx(nx.Graph())


def test_task_names_are_checked():
    with pytest.raises(ValueError, match=r"names\[2\] = 'a' repeats names\[0\]"):
        tm.TaskGraph([1, 1, 1], names=["a", "b", "a"])
    with pytest.raises(ValueError, match="length 2, expected 3"):
        tm.TaskGraph([1, 1, 1], names=["a", "b"])
    with pytest.raises(TypeError, match="not hashable"):
        tm.TaskGraph([1, 1], names=[[1], [2]])
    with pytest.raises(TypeError, match="a string"):
        tm.TaskGraph([1, 1], names="ab")
    names = ["x", "y"]
    tasks = tm.TaskGraph([1, 1], names=names)
    names[0] = "changed"
    assert tasks.names == ["x", "y"]  # a copy


def test_the_cli_maps_a_metis_and_a_scotch_file_and_reports_names(tmp_path, capsys):
    _, net = named_instance()
    res = tm.ResourceGraph.from_networkx(net, capacity="speed", bandwidth="bw")
    rp = tmp_path / "res.json"
    write_resource_graph(rp, res)
    (tmp_path / "app.graph").write_text("3 2 011\n2 2 8\n6 1 8 3 2\n1 2 2\n")
    (tmp_path / "app.grf").write_text("0\n3 4\n1 111\n10 2 1 8 20\n20 6 2 8 10 2 30\n30 1 1 2 20\n")
    for name, task_names in (("app.graph", None), ("app.grf", [10, 20, 30])):
        out = tmp_path / f"{name}.json"
        assert main(["taskmap", "map", str(tmp_path / name), str(rp), "-o", str(out)]) == 0
        data = json.loads(out.read_text())
        assert data.get("task_names") == task_names
        assert data["processor_names"] == [list(net.nodes)[p] for p in data["mapping"]]
        tasks = tm.read_metis_graph(tmp_path / "app.graph")
        assert tm.verify_mapping(tasks, res, data["mapping"], claimed=data["max_occupancy"]).ok
    capsys.readouterr()
    bad = tmp_path / "bad.graph"
    bad.write_text("2 1\n2\n1 x\n")
    assert main(["taskmap", "map", str(bad), str(rp)]) == 2
    assert f"{bad}:3: token 'x'" in capsys.readouterr().err


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 3))
def test_mangled_files_give_instance_errors_and_nothing_else(seed, kind):
    # referee: any outcome but InstanceError (e.g. IndexError, OverflowError) is a reader bug
    rng = np.random.default_rng(seed)
    g = random_nx(rng, 6)
    text = metis_text(g, rng)[0] if kind < 2 else scotch_text(g, rng)[0]
    chars = list(text)
    for _ in range(int(rng.integers(1, 4))):
        pos = int(rng.integers(0, len(chars) + 1))
        op = int(rng.integers(0, 3))
        junk = str(rng.choice(["0", "1", "9", " ", "\n", "-", "x", "1" * 25, "%", ".5"]))
        if op == 0 and chars:
            del chars[min(pos, len(chars) - 1)]
        elif op == 1:
            chars.insert(pos, junk)
        elif chars:
            chars[min(pos, len(chars) - 1)] = junk
    reader = tm.read_metis_graph if kind < 2 else tm.read_scotch_graph
    try:
        tasks = reader(io.StringIO("".join(chars)))
    except InstanceError as exc:
        assert str(exc).startswith("<stream>")
    else:  # still a valid file: a valid task graph
        assert tasks.n >= 1 and np.all(np.isfinite(tasks.node_weight))
