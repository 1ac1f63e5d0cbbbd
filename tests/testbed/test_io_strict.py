"""Strict testbed JSON (issue 15 item 2): unknown keys, wrong types, repeated names and
contradictions are one InstanceError naming the file and the field path; round trips exact."""

import copy
import io
import json

import pytest

from coalloc import InstanceError
from coalloc import testbed as tb
from coalloc.testbed import io as tio

from .test_io import PTOP, TOP


def _doc():
    buf = io.StringIO()
    tio.write_instance(buf, tb.parse_top(TOP), tb.parse_ptop(PTOP))
    return json.loads(buf.getvalue())


DOC = _doc()


def _set(path, value):
    doc = copy.deepcopy(DOC)
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if value is KeyError:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return doc


@pytest.mark.parametrize("path, value, words", [
    (("top", "nodes", 0, "name"), 7, r"top\.nodes\[0\]\.name: expected a string, got the number"),
    (("top", "nodes", 0, "slots"), "1", r"top\.nodes\[0\]\.slots: expected a finite number or "),
    (("top", "nodes", 0, "slots"), True, r"top\.nodes\[0\]\.slots: .*got the boolean true"),
    (("top", "nodes", 0, "typ"), "pc", r"top\.nodes\[0\]\.typ: unknown key 'typ'"),
    (("top", "nodes", 1, "name"), "a", r"top\.nodes\[1\]\.name: 'a' repeats top\.nodes\[0\]"),
    (("top", "links", 0, "flags"), ["emulated", "emulated"], r"flags\[1\]: 'emulated' repeats"),
    (("top", "links", 0, "flags"), ["fast"], r"top\.links\[0\]\.flags\[0\]: expected one of"),
    (("top", "links", 0, "bw"), "100", r"top\.links\[0\]\.bw: expected"),
    (("top", "links", 0, "b"), "zz", r"top\.links\[0\]\.b: expected the name of a node.*'zz'"),
    (("top", "fixed"), {"a": 3}, r"top\.fixed\.a: expected a string"),
    (("ptop", "nodes", 2, "types", "pc"), "2", r"ptop\.nodes\[2\]\.types\.pc: expected"),
    (("ptop", "links", 0, "slots"), 1.5, r"ptop\.links\[0\]\.slots: expected an integer"),
    (("ptop", "links", 0, "slots"), 2**64, r"ptop\.links\[0\]\.slots: expected an integer"),
    (("ptop", "type_limits"), {"pc": -1}, r"ptop\.type_limits\.pc: expected an integer >= 0"),
    (("ptop", "policies"), {"pc": ["limit", None]}, r"policies\.pc\[1\]: a 'limit' policy"),
    (("ptop", "policies"), {"pc": ["disallow", 2]}, r"policies\.pc\[1\]: a 'disallow' policy"),
    (("ptop", "policies"), {"pc": ["allow", 2]}, r"policies\.pc\[0\]: expected one of"),
    (("ptop", "links", 1, "name"), "pc1:e0", r"ptop\.links\[1\]\.name: 'pc1:e0' repeats"),
    (("ptop", "links"), KeyError, r"ptop\.links: missing \(required\)"),
    (("ptop", "links", 0, "b"), "pc1", r"ptop\.links\[0\]\.b: the link joins 'pc1' to itself"),
    (("metadat",), {}, r"metadat: unknown key"),
])  # fmt: skip
def test_bad_instance_files_name_the_field(path, value, words):
    buf = io.StringIO(json.dumps(_set(path, value)))
    buf.name = "bad.json"
    with pytest.raises(InstanceError, match=words) as info:
        tio.read_instance(buf)
    assert str(info.value).startswith("bad.json: ")


def test_round_trips_are_exact_including_empty_topologies():
    g = tb.generators
    cases = [(g.random_topology(8, seed=2), g.deterlab(6, 2, seed=1)),
             (g.lan(3), g.grid5000(seed=0)),
             (tb.VirtualTopology([]), tb.PhysicalTopology([])),
             (tb.parse_top(TOP), tb.parse_ptop(PTOP))]  # fmt: skip
    for top, ptop in cases:
        first = io.StringIO()
        tio.write_instance(first, top, ptop)
        second = io.StringIO()
        tio.write_instance(second, *tio.read_instance(io.StringIO(first.getvalue())))
        assert second.getvalue() == first.getvalue()


def test_non_utf8_line_files_are_refused_naming_the_file(tmp_path):
    """Fuzzer finding: a byte that is not UTF-8 raised UnicodeDecodeError (no file name)."""
    (tmp_path / "x.top").write_bytes(b"node a pc\xbc\n")
    with pytest.raises(InstanceError, match=r"x\.top: not a UTF-8 text file"):
        tb.read_top(tmp_path / "x.top")


@pytest.mark.parametrize("mapping, routes, words", [
    (["pc1"], None, "mapping must be a dict"),
    ({"a": 5}, None, r"mapping\['a'\] must map a node name"),
    ({"a": "pc1", "b": "pc1", "c": "pc3"}, 5, "routes must be a dict"),
    ({"a": "pc1", "b": "pc1", "c": "pc3"}, {"ab": 7}, r"routes\['ab'\] must be a list"),
])  # fmt: skip
def test_verify_refuses_malformed_results_clearly(mapping, routes, words):
    """Fuzzer finding: a list mapping or an int route raised AttributeError (a traceback from
    ``coalloc testbed verify``)."""
    with pytest.raises(TypeError, match=words):
        tb.verify_mapping(tb.parse_top(TOP), tb.parse_ptop(PTOP), mapping, routes)


def test_cli_verify_names_the_result_file(tmp_path, capsys):
    from coalloc.cli import main

    (tmp_path / "x.top").write_text(TOP)
    (tmp_path / "x.ptop").write_text(PTOP)
    (tmp_path / "r.json").write_bytes(b'{"mapping": {"a": 1}}')
    args = ["testbed", "verify", str(tmp_path / "x.top"), str(tmp_path / "x.ptop")]
    assert main([*args, str(tmp_path / "r.json")]) == 2
    assert "r.json: mapping['a']" in capsys.readouterr().err
    (tmp_path / "r.json").write_bytes(b'{"mapping": \xff}')
    assert main([*args, str(tmp_path / "r.json")]) == 2
    assert "r.json: not a UTF-8 text file" in capsys.readouterr().err


def test_huge_type_limits_are_refused_not_overflowed():
    """Fuzzer finding: ``set-type-limit pc 99999999999999999999999`` was read, then building
    the solver's int64 arrays raised OverflowError; 10**400 raised it in the model."""
    with pytest.raises(InstanceError, match=r"f:\d+: .*type limit N between 0 and 2\*\*53"):
        tb.parse_ptop(PTOP + "set-type-limit pc 99999999999999999999999\n", "f")
    with pytest.raises(ValueError, match="type limit of pc must be a number"):
        tb.PhysicalTopology([], type_limits={"pc": 10**400})
    assert tb.parse_ptop(PTOP + "set-type-limit pc 3\n", "f").type_limits["pc"] == 3


def test_a_long_garbled_line_gives_one_short_message():
    """Found by the fuzzer: the error quoted the whole line (over 2,000 characters)."""
    import coalloc.testbed as tb
    from coalloc._shared.jsonio import InstanceError

    line = "unk sw0 sw1 1000" + "\x00\t" * 1000
    with pytest.raises(InstanceError) as err:
        tb.parse_ptop("node sw0 switch:1\nnode sw1 switch:1\n" + line, "x.ptop")
    text = str(err.value)
    assert text.startswith("x.ptop:3: expected") and "\n" not in text and len(text) < 600
    assert "characters)" in text


@pytest.mark.parametrize("lines, bad", [
    (["link e a sw 100000 3", "link f a sw 100 0 0 ethernet"], 3),
    (["link f a sw 100 0 0 ethernet", "link e a sw 100000 3"], 4),
    (["link f a sw 100 0 0", "link e a\tsw 100000 3"], 4),
])  # fmt: skip
def test_a_line_cut_after_its_delay_is_refused_in_a_file_of_the_later_forms(lines, bad):
    """``link NAME SRC DST BW X`` is the older ``BW MULTIPLICITY`` form only in a file whose
    link lines all take it; beside lines with DELAY and LOSS it is a cut line (issue 25: a
    cut line must not pass as another form)."""
    text = "node sw switch:1\nnode a pc:1\n" + "\n".join(lines) + "\n"
    full = 3 if lines[0].split()[-1] != "3" else 4
    with pytest.raises(InstanceError, match=rf"^f:{bad}: expected 'DELAY LOSS TYPE' after the "
                                            rf"bandwidth as on line {full} "):  # fmt: skip
        tb.parse_ptop(text, "f")
    old = "node sw switch:1\nnode a pc:1\nlink e a sw 100000 3\nlink g a sw 1000 2\n"
    assert [lk.name for lk in tb.parse_ptop(old).interfaces("a")] == ["e", "e#2", "e#3", "g",
                                                                      "g#2"]  # fmt: skip


def test_what_assign_refuses_on_node_and_link_lines():
    """assign refuses a .ptop type without its count ("Bad node line, no load for type")
    and a '*' bandwidth on an emulated or trivial_ok link ("Auto-assigning bandwidth on
    trivial or emulated links not allowed!"): one line naming the file, line and token."""
    with pytest.raises(InstanceError, match=r"^p:2: expected TYPE:COUNT \(a count after each "
                                            r"type\), not 'pc'; got 'node a pc'$"):  # fmt: skip
        tb.parse_ptop("node sw switch:1\nnode a pc\n", "p")
    with pytest.raises(InstanceError, match=r"^p:1: expected TYPE:COUNT .* not 'switch'"):
        tb.parse_ptop("node sw pc:1 switch\n", "p")
    for flag in ("emulated", "trivial_ok"):
        star = r"expected a bandwidth, not '\*', on an emulated or trivial_ok link"
        with pytest.raises(InstanceError, match=rf"^t:3: {star} .*{flag}'$"):
            tb.parse_top(f"node x pc\nnode y pc\nlink l x y * 0 0 ethernet {flag}\n", "t")
    # '*' alone, and counts and bandwidths given, are read
    top = tb.parse_top("node x pc\nnode y pc\nlink l x y * 0 0 ethernet nodelay\n")
    assert top.links["l"].bw is None
    assert tb.parse_ptop("node sw switch:1\nnode a pc:1 *lan:*\n").nodes["a"].static == {
        "lan": float("inf")}  # fmt: skip
