"""The picture of a collective "no" (issue 38): the blocked slots judged by brute force,
the nearest start drawn where the explanation found it, the file written by the command."""

from __future__ import annotations

import numpy as np
import pytest

import coalloc.collective as co
from coalloc.cli import main
from coalloc.collective.explain import explain_request
from coalloc.collective.plot import _blocked, plot_explanation
from tests._plots import mpl, png_is_picture  # noqa: F401

pytestmark = pytest.mark.usefixtures("mpl")


def _one_node(pool, j):
    labels = {k: [v[j]] for k, v in pool.labels.items()}
    return co.ResourcePool(pool.capacity[j:j + 1], pool.names, pool.times,
                           pool.reserved[j:j + 1], labels=labels or None)  # fmt: skip


@pytest.mark.parametrize("seed", range(6))
def test_blocked_slots_are_those_where_one_node_of_the_conflict_does_not_fit(seed):
    pool, req = co.generators.random_instance(5, 3, collective=bool(seed % 2), load=0.7,
                                              seed=seed)  # fmt: skip
    conflict = co.CollectiveRequest(**{**req.to_dict(), "count": 3})
    blocked = _blocked(pool, conflict)
    times = np.asarray(pool.times)
    for j in range(pool.n_nodes):
        alone = _one_node(pool, j)
        for k in range(len(times) - 1):
            per_node = {p: max(conflict.minimum.get(p, 0.0), conflict.total.get(p, 0.0) / 3)
                        for p in set(conflict.minimum) | set(conflict.total)}  # fmt: skip
            per_node = {p: v for p, v in per_node.items() if v > 0}  # else the default
            one = co.CollectiveRequest(times[k + 1] - times[k], 1, times[k], times[k],
                                       minimum=per_node, labels=conflict.labels or None)
            fits = co.coallocate(alone, one, "brute_force").has_solution
            assert blocked[j, k] == (not fits), (j, k)


def test_the_picture_marks_the_blocked_node_and_the_nearest_start(tmp_path):
    pool = co.ResourcePool([[4.0], [4.0]], ["cores"]).reserve(0, 3600, [0], [[4.0]])
    req = co.CollectiveRequest(600, 2, 0, 600, minimum={"cores": 1})
    e = explain_request(pool, req)
    fig = plot_explanation(req, pool, e.to_dict(), path=tmp_path / "why.png")
    png_is_picture(tmp_path / "why.png")
    ax = fig.axes[0]
    gids = {c.get_gid() for c in ax.collections}
    assert {"blocked-0", "blocked-1", "lane-0", "lane-1"} <= gids
    (fix,) = [p for p in ax.patches if p.get_gid() == "fix"]
    if hasattr(fix, "get_width"):  # a Rectangle (matplotlib >= 3.9)
        xs = [fix.get_x(), fix.get_x() + fix.get_width()]
    else:
        xs = list(fix.get_xy()[:, 0])
    assert (min(xs), max(xs)) == (3600.0, 4200.0)
    # node 0 is blocked from 0 to 3600 s, node 1 never
    ys0 = next(c for c in ax.collections if c.get_gid() == "blocked-0").get_paths()[0].vertices
    ys1 = next(c for c in ax.collections if c.get_gid() == "blocked-1").get_paths()[0].vertices
    assert np.ptp(ys0[:, 1]) > 0.5 and np.ptp(ys1[:, 1]) == 0


def test_a_request_that_fits_has_no_picture():
    pool = co.ResourcePool([[4.0]], ["cores"])
    with pytest.raises(ValueError, match="nothing to explain"):
        plot_explanation(co.CollectiveRequest(600, 1), pool)


def test_explain_plot_writes_the_file_and_refuses_an_input(tmp_path, capsys):
    path = tmp_path / "c.json"
    pool = co.ResourcePool([[4.0], [2.0]], ["cores"])
    co.io.write_instance(str(path), pool, co.CollectiveRequest(600, 2, minimum={"cores": 3}))
    out = tmp_path / "why.png"
    assert main(["collective", "explain", str(path), "--plot", str(out)]) == 0
    assert f"picture written to {out}" in capsys.readouterr().out
    png_is_picture(out)
    assert main(["collective", "explain", str(path), "--plot", str(path)]) == 2
    assert "also an input" in capsys.readouterr().err
