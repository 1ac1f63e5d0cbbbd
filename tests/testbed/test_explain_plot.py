"""The picture of a testbed "no" (issue 38): the conflict's nodes, the PCs they can use
(each line checked against the testbed's own types), the file written by the command."""

from __future__ import annotations

from pathlib import Path

import pytest

import coalloc.testbed as tb
from coalloc.cli import main
from coalloc.testbed.explain import explain_mapping
from coalloc.testbed.plot import plot_explanation
from coalloc.testbed.problem import build_problem
from tests._plots import mpl, png_is_picture  # noqa: F401

pytestmark = pytest.mark.usefixtures("mpl")
EMULAB = Path(__file__).parent / "data" / "emulab"


def test_the_picture_draws_the_conflict_and_the_pcs_it_can_use(tmp_path):
    top, ptop = tb.read_top(EMULAB / "test_ugly.top"), tb.read_ptop(EMULAB / "test.ptop")
    e = explain_mapping(top, ptop)
    fig = plot_explanation(top, ptop, e, path=tmp_path / "why.png")
    png_is_picture(tmp_path / "why.png")
    gids = [str(x.get_gid()) for x in fig.axes[0].lines]
    drawn = {g[len("vnode-"):] for g in gids if g.startswith("vnode-")}
    assert drawn == set(e.conflict["vnodes"])
    members = build_problem(top, ptop).members  # the classes of the whole testbed
    reached = set()
    for g in gids:
        if g.startswith("cand-"):
            v, c = g[len("cand-"):].rsplit("-", 1)
            pcs = [build_problem(top, ptop).pnames[int(p)] for p in members[int(c)]]
            # the referee: each PC of a class a line reaches offers the node's type
            assert all(top.nodes[v].type in ptop.nodes[p].types for p in pcs), (v, pcs)
            reached.update(pcs)
    # the counting conflict, seen: more nodes on the left than PCs they reach
    assert len(drawn) > len(reached)


def test_explain_plot_writes_the_file(tmp_path, capsys):
    out = tmp_path / "why.png"
    assert main(["testbed", "explain", str(EMULAB / "test2a.top"), str(EMULAB / "dtest.ptop"),
                 "--plot", str(out)]) == 0  # fmt: skip
    assert f"picture written to {out}" in capsys.readouterr().out
    png_is_picture(out)


def test_an_experiment_that_maps_has_no_picture():
    ptop = tb.parse_ptop("node sw switch:1\nnode a pc:1\nlink la a sw 100 0 0")
    with pytest.raises(ValueError, match="nothing to explain"):
        plot_explanation(tb.parse_top("node x pc"), ptop)
