"""Pictures of a co-allocation: the new reservation is drawn where and as large as it is."""

import numpy as np
import pytest

from coalloc import collective
from tests._plots import mpl, png_is_picture  # noqa: F401

pytestmark = pytest.mark.usefixtures("mpl")


def _fills(fig):
    return {c.get_gid(): c for c in fig.axes[0].collections if c.get_gid()}


@pytest.mark.slow
def test_timetable_marks_the_reservation(tmp_path):
    pool, request = collective.generators.random_instance(14, 4, seed=4, load=0.7, n_slots=24)
    result = collective.coallocate(pool, request)
    assert collective.verify(request, pool, result).ok
    assert result.start > request.earliest_start  # a start the picture must place right
    path = tmp_path / "tt.png"
    fig = collective.plot_timetable(request, pool, result, property="p0", path=path)
    fills = _fills(fig)
    assert sum(k.startswith("lane-") for k in fills) == pool.n_nodes
    new = {k: v for k, v in fills.items() if k.startswith("new-")}
    assert sorted(new) == sorted(f"new-{int(j)}" for j in result.resources)
    # referee: the extent of each red area, against the request and the pool's capacity
    col = list(pool.names).index("p0")
    for row, j in enumerate(result.resources):
        verts = np.vstack([p.vertices for p in new[f"new-{int(j)}"].get_paths()])
        assert verts[:, 0].min() == pytest.approx(result.start)
        assert verts[:, 0].max() == pytest.approx(result.start + request.duration)
        share = result.amounts[row, col] / pool.capacity[int(j), col]
        assert verts[:, 1].max() - verts[:, 1].min() >= 0.9 * share - 1e-9
    png_is_picture(path)


def test_timetable_without_result_and_bad_property(collective_tiny):
    pool, request = collective_tiny.pool, collective_tiny.request
    fig = collective.plot_timetable(request, pool)
    assert not any(k.startswith("new-") for k in _fills(fig))
    with pytest.raises(ValueError, match="property"):
        collective.plot_timetable(request, pool, property="nope")
