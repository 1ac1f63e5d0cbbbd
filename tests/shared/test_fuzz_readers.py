"""Fuzzed file readers (issue 15 item 7): a mutated file is either read into an instance that
solves and verifies, or refused with one InstanceError naming the file; nothing else.

Hypothesis mutates valid files of every family's instance format (values replaced by other
JSON values, keys dropped, renamed or added, lists truncated or extended). ci/sanitize.sh also
runs this module against the AddressSanitizer build of the kernels.
"""

import copy
import io
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coalloc
from coalloc._shared.jsonio import InstanceError
from coalloc.taskmap import generators as tm_generators
from coalloc.taskmap.io import instance_from_dict as taskmap_from_dict
from coalloc.taskmap.io import instance_to_dict as taskmap_to_dict


def _ctaap_doc():
    r, o = coalloc.generators.fig2(1, n_tasks=5, seed=3)
    return coalloc.ctaap.io.instance_to_dict(r, o, bandwidth_format="edges")


def _taskmap_doc():
    tasks, res = tm_generators.table1_instance(1.0, seed=0)
    return taskmap_to_dict(tasks, res)


DOCS = {"ctaap": _ctaap_doc(), "taskmap": _taskmap_doc()}

scalars = (
    st.none() | st.booleans() | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False) | st.text(max_size=4)
)  # fmt: skip
values = st.recursive(scalars, lambda v: st.lists(v, max_size=3), max_leaves=6)


def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:6]):
            yield from _paths(v, prefix + (i,))


def _mutate(doc, data):
    doc = copy.deepcopy(doc)
    for _ in range(data.draw(st.integers(1, 3))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = data.draw(st.sampled_from(paths))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        key = path[-1]
        action = data.draw(st.sampled_from(["replace", "drop", "rename", "grow"]))
        if action == "replace":
            parent[key] = data.draw(values)
        elif action == "drop":
            del parent[key]
        elif action == "rename" and isinstance(parent, dict):
            parent[key + "x"] = parent.pop(key)
        elif action == "grow" and isinstance(parent[key], list):
            parent[key].append(data.draw(values))
    return doc


def _solve_and_verify(family, problem):
    if family == "ctaap":
        r, o = problem
        res = coalloc.solve(r, o, seed=0)
        assert coalloc.verify(r, o, res.assignment).feasible
    else:
        tasks, res_graph = problem
        res = coalloc.taskmap.solve(tasks, res_graph, seed=0)
        assert coalloc.taskmap.verify_mapping(tasks, res_graph, res.mapping).ok


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(DOCS)), st.data())
def test_mutated_files_are_read_or_refused_clearly(family, data):
    doc = _mutate(DOCS[family], data)
    text = json.dumps(doc)
    buf = io.StringIO(text)
    buf.name = "fuzz.json"
    try:
        if family == "ctaap":
            problem = coalloc.read_instance(buf)
        else:
            problem = taskmap_from_dict(json.loads(text), source="fuzz.json")
    except InstanceError as exc:
        assert str(exc).startswith("fuzz.json"), exc
        return
    _solve_and_verify(family, problem)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_are_refused_clearly(blob):
    buf = io.StringIO(blob.decode("latin-1"))
    buf.name = "noise.json"
    try:
        coalloc.read_instance(buf)
    except InstanceError as exc:
        assert str(exc).startswith("noise.json")
    else:  # pragma: no cover - 200 random bytes are never an instance
        raise AssertionError("noise read as an instance")


def test_the_unmutated_documents_are_valid():
    for family, doc in DOCS.items():
        problem = (
            coalloc.ctaap.io.instance_from_dict(copy.deepcopy(doc)) if family == "ctaap"
            else taskmap_from_dict(copy.deepcopy(doc))
        )  # fmt: skip
        _solve_and_verify(family, problem)
    assert np.isfinite(DOCS["ctaap"]["offer"]["capacity"][0])


# ------------------------------------------------ the three newer families, through Instance


def _new_family_docs():
    from coalloc import collective, loadshare, testbed
    from coalloc.collective.io import pool_to_dict, request_to_dict
    from coalloc.testbed.io import ptop_to_dict, top_to_dict
    from tests.conftest import TESTBED_PTOP, TESTBED_TOP

    pool = collective.ResourcePool.from_slots(
        [[4.0, 8.0], [2.0, 4.0], [1.0, 2.0], [3.0, 1.0]],
        [[[1.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [1.0, 0.0]], [[0.0, 1.0], [0.0, 0.0]],
         [[0.0, 0.0], [0.0, 0.0]]],
        300, ["cores", "mem"],
    )  # fmt: skip
    req = collective.CollectiveRequest(600, 2, 0, 1200, {"cores": 0.5}, {"cores": 3.0})
    prob = loadshare.LoadSharingProblem([5.0, 5.0, 4.0], [4.0, 3.0, 3.0, 2.0, 1.0], [0, 0, 0, 1, 1])
    top, ptop = testbed.parse_top(TESTBED_TOP), testbed.parse_ptop(TESTBED_PTOP)
    return {
        "collective": {"format": collective.Instance.format, "version": 1,
                       "pool": pool_to_dict(pool), "request": request_to_dict(req)},
        "loadshare": loadshare.io.problem_to_dict(prob),
        "testbed": {"format": testbed.Instance.format, "version": 1,
                    "top": top_to_dict(top), "ptop": ptop_to_dict(ptop)},
    }  # fmt: skip


NEW_DOCS = _new_family_docs()


def _read_solve_verify(family, doc):
    from coalloc.batch import FAMILY_INSTANCES

    try:
        inst = FAMILY_INSTANCES[family].from_dict(doc, source="fuzz.json")
    except InstanceError as exc:
        assert str(exc).startswith("fuzz.json"), exc
        return None
    result = inst.solve(seed=0)
    if result.success:
        assert inst.verify(result).ok, (family, result)
    return result


def test_new_family_documents_are_valid():
    for family, doc in NEW_DOCS.items():
        res = _read_solve_verify(family, copy.deepcopy(doc))
        assert res is not None and res.success, (family, res)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(NEW_DOCS)), st.data())
def test_new_family_mutated_files_are_read_or_refused_clearly(family, data):
    _read_solve_verify(family, _mutate(NEW_DOCS[family], data))


# ------------------------------------------ strict files of the three newer families (item 2)


def _write_back(family, inst):
    """The text a family's writer gives for an instance (for the round-trip property)."""
    from coalloc.collective.io import write_instance as c_write
    from coalloc.loadshare.io import write_problem
    from coalloc.testbed.io import write_instance as t_write

    buf = io.StringIO()
    if family == "collective":
        c_write(buf, inst.pool, inst.request)
    elif family == "testbed":
        t_write(buf, inst.top, inst.ptop)
    else:
        write_problem(buf, inst.problem)
    return buf.getvalue()


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(NEW_DOCS)), st.data())
def test_new_family_files_read_back_exactly_or_name_the_field(family, data):
    """A mutated file either round-trips exactly (read, write, read, write: the same text) or
    is refused with one line ``fuzz.json: <field path or what>: ...``."""
    from coalloc.batch import FAMILY_INSTANCES

    cls = FAMILY_INSTANCES[family]
    doc = _mutate(NEW_DOCS[family], data)
    try:
        inst = cls.from_dict(json.loads(json.dumps(doc)), source="fuzz.json")
    except InstanceError as exc:
        text = str(exc)
        assert text.startswith("fuzz.json: ") and "\n" not in text, text
        assert len(text) > len("fuzz.json: ") + 5, text
        return
    first = _write_back(family, inst)
    again = cls.from_dict(json.loads(first), source="again.json")
    assert _write_back(family, again) == first


_STRICT_CASES = [
    # (family, path in the document, bad value, what the message must name)
    ("collective", ("request", "count"), "2", "request.count: expected an integer"),
    ("collective", ("request", "count"), True, "request.count: expected an integer"),
    ("collective", ("request", "count"), 2**64, "request.count: expected an integer"),
    ("collective", ("pool", "clip"), "false", "pool.clip: expected true or false"),
    ("collective", ("pool", "bandwith"), 1, "pool.bandwith: unknown key"),
    ("collective", ("pool", "capacity", 0, 0), True, "pool.capacity[0][0]: expected a finite"),
    ("loadshare", ("job_origin", 0), 1.0, "job_origin[0]: expected an integer"),
    ("loadshare", ("job_origin", 0), 2**63, "job_origin[0]: expected an integer"),
    ("loadshare", ("job_origin", 0), 99, "job_origin[0]: expected a node index in [0, 3)"),
    ("loadshare", ("capacity", 1), "5", "capacity[1]: expected a finite number"),
    ("loadshare", ("groups",), [0], "groups: expected one group per node (3"),
    ("loadshare", ("jobsize",), [1], "jobsize: unknown key"),
    ("testbed", ("top", "links", 0, "flags"), ["nodelay", "nodelay"], "flags[1]: 'nodelay'"),
    ("testbed", ("ptop", "nodes", 0, "types", "pc"), True, "ptop.nodes[0].types.pc: expected"),
    ("testbed", ("top", "nodes", 1, "name"), "a", "top.nodes[1].name: 'a' repeats"),
]


@pytest.mark.parametrize("family, path, value, words", _STRICT_CASES)
def test_new_family_bad_values_name_file_field_and_expectation(family, path, value, words):
    from coalloc.batch import FAMILY_INSTANCES

    doc = copy.deepcopy(NEW_DOCS[family])
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    with pytest.raises(InstanceError) as info:
        FAMILY_INSTANCES[family].from_dict(doc, source="bad.json")
    assert str(info.value).startswith("bad.json: ") and words in str(info.value), info.value


# ------------------------------------------------- the line formats: GAP, SWF and pool CSV

_LINE_SEEDS = {
    "gap": " 1\n 2 3\n 1 2 3\n 4 5 6\n 1 1 1\n 2 2 2\n 3 3\n",
    "swf": "; MaxProcs: 8\n1 0 5 100 4 -1 -1 4 120 -1 1 1 1 1 1 -1 -1 -1\n"
           "2 10 0 50 2 -1 2048 2 60 4096 1 1 1 1 1 -1 -1 -1\n",
    "csv": "node,cores,mem,label:site\nn0,4,8,a\nn1,2,4,b\n",
}
_TOKENS = ["0", "-1", "1", "2", "3", "1e308", "1e400", "nan", "inf", "-inf", "x", "", ";",
           ",", "node", "label:", str(2**63), str(10**30), "1.5", "\ufeff", "\x00", '"']


@st.composite
def _mutated_text(draw, text):
    lines = text.splitlines()
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(lines) - 1))
        sep = "," if "," in lines[i] else " "
        words = lines[i].split(sep)
        op = draw(st.sampled_from(["swap", "insert", "drop", "dupline", "delline"]))
        if op == "swap" and words:
            words[draw(st.integers(0, len(words) - 1))] = draw(st.sampled_from(_TOKENS))
        elif op == "insert":
            words.insert(draw(st.integers(0, len(words))), draw(st.sampled_from(_TOKENS)))
        elif op == "drop" and words:
            words.pop(draw(st.integers(0, len(words) - 1)))
        elif op == "dupline":
            lines.insert(i, lines[i])
        elif op == "delline" and len(lines) > 1:
            lines.pop(i)
            continue
        lines[i] = sep.join(words)
    return "\n".join(lines) + "\n"


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(_LINE_SEEDS)), st.data())
def test_mutated_line_files_are_read_or_refused_clearly(tmp_path_factory, kind, data):
    """GAP, SWF and pool CSV files with tokens swapped, inserted or dropped: read (and, for
    GAP, solved by the heuristic with a result that verifies) or one InstanceError."""
    from coalloc import loadshare
    from coalloc.collective import io as cio
    from coalloc.loadshare import io as lio

    text = data.draw(_mutated_text(_LINE_SEEDS[kind]))
    path = tmp_path_factory.mktemp("lines") / f"fuzz.{kind}"
    path.write_text(text, encoding="utf-8")
    reader = {"gap": lio.read_gap, "swf": cio.read_swf, "csv": cio.read_pool}[kind]
    try:
        got = reader(path)
    except InstanceError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc), exc
        return
    if kind == "gap":
        res = loadshare.solve_gap(got[0], iterations=50, with_bound=False)
        if res.success:
            assert loadshare.verify_gap(got[0], res.assignment).ok
    elif kind == "swf":
        assert np.isfinite(got).all()
        try:
            cio.swf_requests(got, source=str(path))
        except ValueError as exc:  # a job too large to hold (f5e0b72): refused by name
            assert str(exc).startswith(f"{path}: SWF job ") and "\n" not in str(exc), exc
    else:
        assert np.isfinite(got.capacity).all()


def test_json_numbers_beyond_the_float_range_are_refused():
    """1e400 was read as inf by Python's json, so readers without a schema (the result files
    of the verify commands) saw an infinite value."""
    from coalloc._shared.jsonio import load_json

    for text in ('{"start": 1e400}', '[-1e999]', '{"a": [1, 2.5e308]}'):
        buf = io.StringIO(text)
        buf.name = "big.json"
        with pytest.raises(InstanceError, match="big.json: not valid JSON: the number .* beyond"):
            load_json(buf)
    assert load_json(io.StringIO('{"a": 1.5e308, "b": 5e-324}'))[0]["a"] == 1.5e308
