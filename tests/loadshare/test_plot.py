"""Pictures of load sharing: the coalition map and the load bars match the run, counted apart."""

import numpy as np
import pytest

from coalloc import loadshare
from tests._plots import mpl, png_is_picture  # noqa: F401

pytestmark = pytest.mark.usefixtures("mpl")


@pytest.fixture(scope="module")
def run():
    prob = loadshare.generators.paper_setup(n_nodes=60, seed=1)
    return prob, loadshare.dmcf_gga(prob, coalition_size=15, seed=0, coalition_history=1)


def test_coalition_history_changes_no_answer(run):
    prob, with_history = run
    plain = loadshare.dmcf_gga(prob, coalition_size=15, seed=0)
    assert plain.coalition_history is None
    assert np.array_equal(plain.placement, with_history.placement)
    assert np.array_equal(plain.coalition, with_history.coalition)
    assert plain.throughput == with_history.throughput
    assert np.array_equal(plain.history, with_history.history)
    # every generation kept: one structure per generation, the first before any migration
    gens = [g for g, _ in with_history.coalition_history]
    assert gens == list(range(with_history.generations + 1))
    # migrations counted by the run equal the node moves seen between kept structures
    moves = sum(
        int(np.count_nonzero(a != b))
        for (_, a), (_, b) in zip(
            with_history.coalition_history, with_history.coalition_history[1:]
        )
    )
    assert moves == with_history.migrations
    assert loadshare.verify_placement(prob, with_history.placement).ok


@pytest.mark.slow
def test_coalitions_picture_is_the_history(run, tmp_path):
    prob, res = run
    path = tmp_path / "coal.png"
    fig = loadshare.plot_coalitions(prob, res, path=path)
    img = fig.axes[0].images[0].get_array()
    assert img.shape == (res.generations + 1, prob.n_nodes)
    final = res.coalition_history[-1][1]
    # columns are nodes grouped by final coalition: each row holds the same multiset of
    # coalitions as the kept structure of that generation
    for row, (_, coal) in zip(np.asarray(img), res.coalition_history):
        assert sorted(row.tolist()) == sorted(coal.tolist())
    assert np.all(np.diff(np.asarray(img)[-1]) >= 0)
    assert np.array_equal(np.sort(np.asarray(img)[-1]), np.sort(final))
    (line,) = [x for x in fig.axes[1].lines if x.get_label() == "best throughput"]
    assert np.array_equal(line.get_ydata(), res.history)
    png_is_picture(path)


@pytest.mark.slow
def test_loads_bars_equal_the_node_loads(run, tmp_path):
    prob, res = run
    path = tmp_path / "loads.png"
    fig = loadshare.plot_loads(prob, res, path=path, sort=False)
    ax = fig.axes[0]
    served, over = ax.containers[0], ax.containers[1]
    heights = np.array([b.get_height() for b in served]) + np.array([b.get_height() for b in over])
    # referee: loads from the placement, summed here
    expected = np.zeros(prob.n_nodes)
    np.add.at(expected, res.placement, prob.job_size)
    assert np.allclose(heights, expected)
    n_over = int(np.count_nonzero(expected > prob.capacity * (1 + 1e-12)))
    assert f"{n_over} nodes over capacity" in ax.get_title()
    png_is_picture(path)


def test_coalitions_need_a_history():
    prob = loadshare.generators.paper_setup(n_nodes=30, seed=2)
    res = loadshare.share(prob, "bfd")
    with pytest.raises(ValueError, match="coalition_history"):
        loadshare.plot_coalitions(prob, res)


def test_gap_trajectory_picture_is_the_run(tmp_path):
    """The drawn steps are the recorded trajectory (read back from the lines, checked
    against the result's own objective and bound), held to the run's end."""
    inst = loadshare.generate_gap("d", 6, 60, seed=2)
    res = loadshare.solve_gap(inst, iterations=3000, seed=0)
    path = tmp_path / "traj.png"
    fig = loadshare.plot_gap_trajectory(res, path=path, best_known=res.objective - 1)
    png_is_picture(path)
    lines = {line.get_label(): line for line in fig.axes[0].lines}
    obj, bound = lines["objective"], lines["bound"]
    traj = res.trajectory
    recorded = traj[~np.isnan(traj[:, 1]), 1]
    assert np.array_equal(obj.get_ydata()[:-1], recorded)
    assert obj.get_ydata()[-1] == res.objective == recorded[-1]
    assert bound.get_ydata()[-1] == res.bound
    assert obj.get_xdata()[-1] == max(res.timings["total"], traj[:, 0].max())
    assert np.all(np.diff(obj.get_ydata()) <= 0)  # a minimum: the best only falls
    assert "best known" in lines and fig.axes[0].get_ylabel() == "cost"


def test_gap_trajectory_needs_one():
    inst = loadshare.generate_gap("c", 3, 10, seed=0)
    exact = loadshare.solve_gap(inst, "exact", time_limit=30)
    with pytest.raises(ValueError, match="trajectory"):
        loadshare.plot_gap_trajectory(exact)
    profit = loadshare.solve_gap(inst, sense="max", iterations=200)
    fig = loadshare.plot_gap_trajectory(profit, logx=True)
    assert fig.axes[0].get_ylabel() == "profit" and fig.axes[0].get_xscale() == "log"


@pytest.mark.parametrize("k", [3, 10, 20, 21, 45, 120, 300])
def test_category_colours_never_repeat(k):
    """Issue 39: coalition colours wrapped after twenty; now every category has its own."""
    from coalloc._shared.plotting import category_colors

    colours = category_colors(k)
    assert len(colours) == k
    as_drawn = {tuple(round(255 * x) for x in c[:3]) for c in colours}  # 8-bit, as rendered
    assert len(as_drawn) == k


def test_coalition_map_gives_each_coalition_its_own_colour_and_name():
    prob = loadshare.generators.paper_setup(n_nodes=120, seed=2)
    res = loadshare.dmcf_gga(prob, coalition_size=4, seed=0, coalition_history=50,
                             max_generations=2)  # fmt: skip
    fig = loadshare.plot_coalitions(prob, res)
    image = fig.axes[0].images[0]
    mat = image.get_array()
    k = int(mat.max()) + 1
    assert k > 20  # beyond the twenty colours that used to wrap
    # referee: the colour each drawn coalition id maps to, through the image's own colormap
    ids = np.unique(np.asarray(mat))
    rgba = image.cmap(image.norm(ids))
    drawn = {tuple(np.round(255 * c[:3]).astype(int)) for c in rgba}
    assert len(drawn) == len(ids)
    # the final coalitions are named on the top edge
    final = np.unique(np.asarray(mat)[-1])
    top = [a for a in fig.axes[0].child_axes if a.get_xlabel() == "final coalition"]
    assert len(top) == 1
    names = {t.get_text() for t in top[0].get_xticklabels()}
    assert names == {f"c{c}" for c in final} or len(final) > 40
