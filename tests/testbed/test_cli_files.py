"""Issue 39, item 2 for the testbed: swapped TOP/PTOP named in one line (``coalloc testbed
assign`` takes TOP PTOP, ``coalloc-assign`` PTOP TOP like Emulab's assign), one instance
file that holds both topologies, and files of other kinds said for what they are."""

from __future__ import annotations

import glob
import io
import os

import pytest

from coalloc import testbed
from coalloc.cli import main
from coalloc.cli.assign_compat import run as assign_run

# Emulab's 2011-2016 syntax: typed links, interfaces node:port, features after '-'
PTOP = ("node sw0 switch:1 *lan:*\nnode pc1 pc:1 - fast:0.2\nnode pc2 pc:1 - fast:0.2\n"
        "link e1 pc1:eth0 sw0:p1 100000 0 0 ethernet\n"
        "link e2 pc2:eth0 sw0:p2 100000 0 0 ethernet\n")  # fmt: skip
TOP = "node a pc\nnode b pc\nlink l a b 100000 0 0 ethernet\n"


@pytest.fixture
def files(tmp_path):
    top, ptop = tmp_path / "mine.top", tmp_path / "mine.ptop"
    top.write_text(TOP)
    ptop.write_text(PTOP)
    return str(top), str(ptop)


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_right_order_maps(files, capsys):
    top, ptop = files
    assert main(["testbed", "assign", top, ptop]) == 0
    assert "Nodes:" in capsys.readouterr().out


def test_swapped_files_are_named(files, capsys):
    top, ptop = files
    assert main(["testbed", "assign", ptop, top]) == 2
    line = _one_line(capsys)
    assert f"{ptop} looks like a physical topology (.ptop) and was given as the virtual one" in line
    assert line.endswith("the order is TOP PTOP")


def test_coalloc_assign_takes_ptop_top_and_names_a_swap(files):
    top, ptop = files
    out = io.StringIO()
    assert assign_run([ptop, top], out) == 0
    out = io.StringIO()
    assert assign_run([top, ptop], out) == 255  # assign's exit status for bad input
    text = out.getvalue()
    assert "was given as the virtual one; the order is PTOP TOP" in text, text


def test_the_same_file_twice_names_the_one_in_the_wrong_place(files, capsys):
    top, _ = files
    assert main(["testbed", "assign", top, top]) == 2
    line = _one_line(capsys)
    assert "looks like a virtual topology (.top) and was given as the physical one" in line


def test_one_instance_file_holds_both(files, tmp_path, capsys):
    top, ptop = files
    inst = tmp_path / "both.json"
    testbed.write_instance(str(inst), testbed.read_top(top), testbed.read_ptop(ptop))
    assert main(["testbed", "assign", top, ptop, "--seed", "3"]) == 0
    two = capsys.readouterr().out
    assert main(["testbed", "assign", str(inst), "--seed", "3"]) == 0
    one = capsys.readouterr().out
    cut = [line for line in two.splitlines() if not line.startswith("# assign")]
    assert cut == [line for line in one.splitlines() if not line.startswith("# assign")]
    res = tmp_path / "r.json"
    assert main(["testbed", "assign", str(inst), "--json"]) == 0
    res.write_text(capsys.readouterr().out)
    assert main(["testbed", "verify", str(inst), str(res)]) == 0
    assert main(["testbed", "verify", top, ptop, str(res)]) == 0


def test_one_topology_alone_asks_for_the_other(files, capsys):
    top, _ = files
    assert main(["testbed", "assign", top]) == 2
    line = _one_line(capsys)
    assert "looks like a virtual topology (.top)" in line and "give the other file too" in line


def test_a_file_of_another_kind(files, tmp_path, capsys):
    top, _ = files
    graph = tmp_path / "g.txt"
    graph.write_text("% a ring\n3 3\n2 3\n1 3\n1 2\n")
    assert main(["testbed", "assign", top, str(graph)]) == 2
    assert "looks like a METIS graph" in _one_line(capsys)


CORPUS = os.path.join(os.path.dirname(__file__), "..", "..", "fuzz", "corpus")


@pytest.mark.parametrize("ptop", sorted(glob.glob(os.path.join(CORPUS, "testbed_ptop", "*.ptop"))))
def test_no_false_swap_on_real_files(ptop):
    """Every readable testbed file of the corpus, in the right order, is never called swapped
    (a file that is wrong is refused by its reader's own message)."""
    top = os.path.join(CORPUS, "testbed_top", "small.top")
    try:
        testbed.read_ptop(ptop)
    except testbed.io.InstanceError as exc:  # malformed: its reader's message, never a swap
        with pytest.raises(testbed.io.InstanceError) as got:
            testbed.io.read_topologies(top, ptop)
        assert "the order is" not in str(got.value), (got.value, exc)
        return
    testbed.io.read_topologies(top, ptop)


def test_explain_names_a_swap_too(files, capsys):
    top, ptop = files
    assert main(["testbed", "explain", ptop, top]) == 2
    assert "the order is TOP PTOP" in _one_line(capsys)


EMULAB = os.path.join(os.path.dirname(__file__), "data", "emulab")


@pytest.mark.parametrize("name", ["test", "test_ugly", "dtest"])
def test_emulab_files_swapped_are_named(name, capsys):
    """Emulab's own test files swapped: its ``.ptop`` also reads as a ``.top`` (a node line
    whose type carries a count), so the PTOP given as the TOP was read without complaint and
    only the TOP given as the PTOP failed, with the ptop reader's own message ("expected
    TYPE:COUNT") instead of the swap; now both files reading as the other place's kind name
    the swap. In the right order they map (or fail on their own terms), never "swapped"."""
    top, ptop = (os.path.join(EMULAB, f"{name}.{ext}") for ext in ("top", "ptop"))
    if not os.path.exists(ptop):
        ptop = os.path.join(EMULAB, "test2.ptop")
    assert main(["testbed", "assign", ptop, top]) == 2
    line = _one_line(capsys)
    assert "the order is TOP PTOP" in line, line
    assert "looks like" in line and "was given as" in line, line
    main(["testbed", "assign", top, ptop])
    assert "the order is" not in capsys.readouterr().err
