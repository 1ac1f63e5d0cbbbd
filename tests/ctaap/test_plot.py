"""Pictures of an allocation: what is drawn matches the result, counted independently."""

import numpy as np
import pytest

import coalloc.ctaap as ctaap
from tests._plots import collections as _collections
from tests._plots import mpl, plt  # noqa: F401  (mpl: the fixture)
from tests._plots import png_is_picture as _png_is_picture

pytestmark = pytest.mark.usefixtures("mpl")


@pytest.mark.slow
def test_allocation_colours_greys_and_dashes_match_the_result(tmp_path):
    request, offer = ctaap.generators.fig2(2, n_tasks=30, seed=3)
    result = ctaap.solve(request, offer, "ctaap", seed=1)
    path = tmp_path / "alloc.png"
    fig = ctaap.plot_allocation(request, offer, result, path=path)
    drawn = _collections(fig)
    a = result.assignment
    # the referee: counts from the assignment and the bandwidth matrix, not from the plot code
    per_cluster = np.bincount(a[a >= 0], minlength=offer.m)
    for j in range(offer.m):
        (label,) = [k for k in drawn if k.startswith(f"cluster {j}:")]
        assert len(drawn[label].get_offsets()) == per_cluster[j]
        assert f"{per_cluster[j]} tasks / {offer.capacity[j]} machines" in label
    (grey,) = [k for k in drawn if k.startswith("unallocated:")]
    assert len(drawn[grey].get_offsets()) == np.count_nonzero(a < 0)
    B = request.bandwidth.toarray()
    both = (a[:, None] >= 0) & (a[None, :] >= 0)
    cross = np.triu((B + B.T > 0) & both & (a[:, None] != a[None, :]), 1).sum()
    intra = np.triu((B + B.T > 0) & both & (a[:, None] == a[None, :]), 1).sum()
    assert cross > 0 and intra > 0, "the instance should exercise both kinds of link"
    dashed = drawn["cross-cluster link"]
    assert len(dashed.get_segments()) == cross
    assert dashed.get_linestyle()[0][1] is not None  # a dash pattern, not a solid line
    assert len(drawn["intra-cluster link"].get_segments()) == intra
    assert "unallocated link" not in drawn
    _png_is_picture(path)


def test_allocation_into_given_axes_and_plain_array():
    request, offer = ctaap.generators.fig2(1, n_tasks=12, seed=0)
    fig, ax = plt.subplots()
    a = np.full(request.n, -1)
    out = ctaap.plot_allocation(request, offer, a, ax=ax, show_unallocated_links=True)
    assert out is fig
    drawn = _collections(fig)
    assert len(drawn[f"unallocated: {request.n} tasks"].get_offsets()) == request.n
    assert "cross-cluster link" not in drawn


def test_allocation_refuses_a_wrong_assignment():
    request, offer = ctaap.generators.fig2(1, n_tasks=12, seed=0)
    with pytest.raises(ValueError, match="shape"):
        ctaap.plot_allocation(request, offer, np.zeros(5, dtype=int))
    with pytest.raises(ValueError, match="cluster indices"):
        ctaap.plot_allocation(request, offer, np.full(request.n, offer.m))
