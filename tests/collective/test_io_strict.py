"""Strict collective files (issue 15 item 2): every mistake is one InstanceError naming the
file, the field path and what was expected; round trips are exact, empty pools included."""

import copy
import io
import json

import numpy as np
import pytest

from coalloc import InstanceError, collective
from coalloc.collective import io as cio


def _instance_doc():
    pool = collective.ResourcePool.from_slots(
        [[4.0, 8.0], [2.0, 4.0]], [[[1.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [1.0, 0.0]]], 300,
        ["cores", "mem"], node_names=["a", "b"], labels={"site": ["x", None]},
    )  # fmt: skip
    req = collective.CollectiveRequest(600, 2, 0, 1200, {"cores": 0.5}, {"cores": 3.0},
                                       {"site": ["x", "y"]})  # fmt: skip
    buf = io.StringIO()
    cio.write_instance(buf, pool, req)
    return json.loads(buf.getvalue())


DOC = _instance_doc()


def _set(doc, path, value):
    doc = copy.deepcopy(doc)
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if value is KeyError:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return doc


@pytest.mark.parametrize("path, value, words", [
    (("request", "count"), 2.0, r"request\.count: expected an integer"),
    (("request", "count"), True, r"request\.count: expected an integer .* got the boolean true"),
    (("request", "count"), 2**63, r"request\.count: expected an integer in \[1, "),
    (("request", "duration"), "600", r"request\.duration: expected a finite number"),
    (("request", "minimum", "cores"), True, r"request\.minimum\.cores: expected a finite number"),
    (("request", "labels", "site"), [1], r"request\.labels\.site\[0\]: expected a string"),
    (("request", "colour"), 1, r"request\.colour: unknown key 'colour'"),
    (("pool", "capacity", 0, 1), "8", r"pool\.capacity\[0\]\[1\]: expected a finite number"),
    (("pool", "capacity", 1), [2.0], r"pool\.capacity\[1\]: expected 2 values, got 1"),
    (("pool", "reserved"), [[[0.0]]], r"pool\.reserved: .*slots \+ slot_seconds or times"),
    (("pool", "clip"), "false", r"pool\.clip: expected true or false, got the string 'false'"),
    (("pool", "nmaes"), ["x"], r"pool\.nmaes: unknown key"),
    (("pool", "names"), ["cores", "cores"], r"names has duplicates"),
    (("pool", "node_names"), ["a", "a"], r"node_names has duplicates"),
    (("pool", "slot_seconds"), KeyError, r"pool\.slot_seconds: missing \(required with slots\)"),
    (("pool", "slots", 1, 0), [0.0], r"pool\.slots\[1\]\[0\]: expected 2 values, got 1"),
    (("pool", "labels", "site"), ["x"], r"labels\['site'\] has 1 values, expected 2"),
    (("version",), True, r"unsupported version True"),
    (("request", "minimum"), {"gpus": 1}, r"request\.minimum\.gpus: not a property of the pool"),
    (("request", "total"), {"gpus": 1}, r"request\.total\.gpus: not a property of the pool"),
])  # fmt: skip
def test_bad_instance_files_name_the_field(path, value, words):
    doc = DOC
    if path[0] == "pool" and path[1] in ("reserved", "slot_seconds", "slots", "clip", "nmaes",
                                         "names", "node_names", "labels"):  # fmt: skip
        doc = _slots_doc()
    buf = io.StringIO(json.dumps(_set(doc, path, value)))
    buf.name = "bad.json"
    with pytest.raises(InstanceError, match=words) as info:
        cio.read_instance(buf)
    assert str(info.value).startswith("bad.json: ")


def _slots_doc():
    doc = copy.deepcopy(DOC)
    pool = doc["pool"]
    pool["slot_seconds"] = 300
    pool["slots"] = [[[1.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [1.0, 0.0]]]
    del pool["times"], pool["reserved"]
    return doc


def test_the_base_documents_are_valid():
    pool, req = cio.instance_from_dict(copy.deepcopy(DOC))
    assert pool.node_names == ("a", "b") and req.count == 2
    pool2, _ = cio.instance_from_dict(_slots_doc())
    assert np.array_equal(pool2.reserved, pool.reserved)


@pytest.mark.parametrize("n_nodes", [0, 1, 4])
def test_round_trips_are_exact_including_an_empty_pool(n_nodes):
    pool = collective.ResourcePool(np.full((n_nodes, 2), 3.0), ["cores", "mem"],
                                   node_names=[f"node-{j}" for j in range(n_nodes)])  # fmt: skip
    req = collective.CollectiveRequest(10, 1, labels={"site": "x"})
    first = io.StringIO()
    cio.write_instance(first, pool, req)
    pool2, req2 = cio.read_instance(io.StringIO(first.getvalue()))
    second = io.StringIO()
    cio.write_instance(second, pool2, req2)
    assert second.getvalue() == first.getvalue()
    assert pool2.capacity.shape == (n_nodes, 2) and pool2.node_names == pool.node_names


def test_workload_items_name_their_index(tmp_path):
    (tmp_path / "w.json").write_text(
        json.dumps(
            {
                "format": "coalloc.collective.workload",
                "version": 1,
                "requests": [
                    {"duration": 1, "count": 1},
                    {"duration": 1, "count": 1, "arrival": "0"},
                ],
            }
        )
    )
    with pytest.raises(InstanceError, match=r"w\.json: requests\[1\]\.arrival: expected"):
        cio.read_workload(tmp_path / "w.json")


def test_non_utf8_files_are_refused_naming_the_file(tmp_path):
    """Fuzzer finding: a byte that is not UTF-8 raised UnicodeDecodeError (no file name)."""
    for name, reader in (("p.json", cio.read_pool), ("p.csv", cio.read_pool),
                         ("w.swf", cio.read_swf)):  # fmt: skip
        (tmp_path / name).write_bytes(b'{"names": ["\xbc"]}\n')
        with pytest.raises(InstanceError, match=rf"{name}: not a UTF-8 text file"):
            reader(tmp_path / name)


def test_a_workload_too_long_to_log_is_refused_up_front(tmp_path, capsys):
    """Fuzzer finding: an arrival of 1e300 s made ``coalloc collective simulate`` allocate
    its usage log with np.arange ("Maximum allowed size exceeded", no file named)."""
    from coalloc.cli import main
    from coalloc.collective.simulate import simulate

    pool = collective.ResourcePool([[4.0]], ["cores"])
    req = collective.CollectiveRequest(1e300, 1, 0, 1e300)
    with pytest.raises(ValueError, match="usage logs of 3.33e.* slots .* refused"):
        simulate(pool, [(0.0, req)])
    cio.write_pool(tmp_path / "p.json", pool)
    (tmp_path / "w.json").write_text(
        json.dumps(
            {
                "format": "coalloc.collective.workload",
                "version": 1,
                "requests": [{"duration": 1e300, "count": 1, "arrival": 1e300}],
            }
        )
    )
    assert main(["collective", "simulate", str(tmp_path / "p.json"),
                 str(tmp_path / "w.json")]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "w.json" in err and "refused" in err and "Traceback" not in err


@pytest.mark.parametrize("token", ["inf", "nan", "1e400", "-Infinity"])
def test_swf_fields_must_be_finite(tmp_path, token):
    """Hypothesis finding: ``inf``, ``nan`` and ``1e400`` were read as SWF fields (float()
    accepts them) and reached the request conversion."""
    (tmp_path / "w.swf").write_text(f"1 0 5 100 {token} -1 -1 4 120 -1 1 1 1 1 1 -1 -1 -1\n")
    with pytest.raises(InstanceError, match=r"w\.swf:1: SWF field 5 must be a finite number"):
        cio.read_swf(tmp_path / "w.swf")


def test_cli_names_both_files_when_the_request_needs_a_missing_property(tmp_path, capsys):
    """A request naming a property the pool lacks failed in the solver with no file named
    (found by the fuzz target's contract on a hand-written input)."""
    from coalloc.cli import main

    cio.write_pool(tmp_path / "p.json", collective.ResourcePool([[4.0]], ["gpu"]))
    cio.write_request(tmp_path / "r.json", collective.CollectiveRequest(10, 1, 0, 10, {"cores": 1}))
    assert main(["collective", "solve", str(tmp_path / "r.json"), str(tmp_path / "p.json")]) == 2
    err = capsys.readouterr().err
    assert "r.json: minimum.cores: not a property of the pool" in err and "p.json" in err
