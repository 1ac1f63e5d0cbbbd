"""The processor subsets' sizes (:data:`coalloc.taskmap.starts.PREFIX_RATIO`, h55tmap
follow-up): the default is the halvings the coarse starts always had; another ratio gives
the sizes between them. Referee: the halvings written out independently."""

from __future__ import annotations

import pytest

from coalloc.taskmap import starts


def _halvings(p: int) -> list:
    out = [p]
    while out[-1] > 1:
        out.append(-(-out[-1] // 2))  # ceil(k / 2)
    return out


@pytest.mark.parametrize("p", [1, 2, 3, 7, 16, 25, 64, 100, 127, 156, 300])
def test_the_default_sizes_are_the_halvings(p):
    assert starts.PREFIX_RATIO == 0.5
    assert starts._prefixes(p) == _halvings(p)


@pytest.mark.parametrize("p", [2, 9, 64, 300])
def test_a_larger_ratio_gives_the_sizes_between(p, monkeypatch):
    monkeypatch.setattr(starts, "PREFIX_RATIO", 0.75)
    ks = starts._prefixes(p)
    assert ks[0] == p and ks[-1] == 1
    assert all(a > b for a, b in zip(ks, ks[1:]))  # strictly down, no repeats
    assert len(ks) >= len(_halvings(p))  # at least as many sizes as the halvings
    if p == 64:
        assert 9 in ks and 48 in ks  # the held-back delaunay3d's best size, 3/4 of 64
