"""Pictures of a testbed mapping: PCs, trunks and virtual links drawn as the mapper placed them."""

import pytest

from coalloc import testbed
from coalloc.testbed import generators as g
from tests._plots import collections, mpl, png_is_picture, starting  # noqa: F401

pytestmark = pytest.mark.usefixtures("mpl")


@pytest.mark.slow
def test_mapping_draws_pcs_trunks_and_crossing_links(tmp_path):
    ptop = g.deterlab(24, 3, seed=0)
    top = g.random_sparse(14, 4, seed=1)
    result = testbed.assign(top, ptop, "assign+")
    report = testbed.verify_mapping(top, ptop, result.mapping, result.routes,
                                    claimed=result.interswitch_bandwidth)  # fmt: skip
    assert report.ok and result.interswitch_bandwidth > 0
    path = tmp_path / "tb.png"
    fig = testbed.plot_mapping(top, ptop, result, path=path)
    drawn = collections(fig)
    n_used = len(set(result.mapping.values()))
    assert len(starting(drawn, "used PC (").get_offsets()) == n_used
    assert len(drawn["trunk"].get_segments()) == len(ptop.trunks())
    # referee: the routes' kinds from the mapper, checked by verify above
    kinds = [k for k in result.kinds.values()]
    n_inter = kinds.count("interswitch")
    assert len(starting(drawn, "inter-switch virtual link").get_segments()) == n_inter
    assert starting(drawn, "inter-switch").get_linestyle()[0][1] is not None  # dashed
    n_intra = kinds.count("intraswitch") + kinds.count("direct")
    assert len(starting(drawn, "intra-switch virtual link").get_segments()) == n_intra
    # every loaded trunk is labelled with the load the verifier recomputed
    texts = {t.get_gid(): t.get_text() for t in fig.axes[0].texts if t.get_gid()}
    for name, load in report.trunk_load.items():
        if load > 0:
            bw = ptop.links[name].bw
            assert texts[f"trunk-{name}"] == f"{load:g}/{bw:g}"
    png_is_picture(path)


def test_mapping_refuses_a_result_without_mapping():
    ptop = g.deterlab(4, 1, seed=0)
    with pytest.raises(ValueError, match="no mapping"):
        testbed.plot_mapping(g.ring(3), ptop, {"mapping": None})


def _two_switches(n_a, n_b):
    """A testbed of two switches joined by one trunk, no core: n_a PCs on sa, n_b on sb."""
    import io

    lines = ["node sa switch:1 *lan:*", "node sb switch:1 *lan:*",
             "link trunk-ab sa sb 1000000 0 0"]  # fmt: skip
    for sw, n in (("sa", n_a), ("sb", n_b)):
        for k in range(n):
            pc = f"{sw}-pc{k}"
            lines.append(f"node {pc} pc:1")
            for e in range(2):
                lines.append(f"link {pc}:eth{e} {pc}:eth{e} {sw} 100000 0 0 ethernet")
    return testbed.read_ptop(io.StringIO("\n".join(lines) + "\n"))


@pytest.mark.parametrize("n_a,n_b", [(3, 3), (14, 5), (40, 2)])
def test_every_pc_is_drawn_attached_to_its_switch(n_a, n_b):
    """Issue 39: a two-switch testbed drew its PCs detached from their switches."""
    import numpy as np

    ptop = _two_switches(n_a, n_b)
    top = g.ring(4)
    fig = testbed.plot_mapping(top, ptop, testbed.assign(top, ptop, seed=0))
    drawn = collections(fig)
    switch_xy = drawn["switch"].get_offsets()
    pcs = np.vstack([starting(drawn, "used PC (").get_offsets(),
                     starting(drawn, "unused PC (").get_offsets()])  # fmt: skip
    assert len(pcs) == n_a + n_b
    links = starting(drawn, "PC-switch link (").get_segments()
    assert len(links) == n_a + n_b
    # referee: each PC's own switch from the .ptop text (its name starts with the switch's)
    where = {tuple(np.round(seg[0], 9)): seg[1] for seg in links}
    xs = {name: switch_xy[k] for k, name in enumerate(ptop.switches)}
    for xy in pcs:
        end = where[tuple(np.round(xy, 9))]  # every PC drawn has a line from it ...
        assert any(np.allclose(end, s) for s in switch_xy)  # ... that ends at a switch
        # and it stands under that switch: nearer to it than to the other one
        d = [abs(xy[0] - s[0]) for s in switch_xy]
        assert np.allclose(switch_xy[int(np.argmin(d))], end)
    # the PCs of sa are attached to sa, those of sb to sb (names give the referee)
    home = testbed.plot.home_switches(ptop)
    assert sorted(home.values()) == ["sa"] * n_a + ["sb"] * n_b
    ends = [tuple(seg[1]) for seg in links]
    assert ends.count(tuple(xs["sa"])) == n_a and ends.count(tuple(xs["sb"])) == n_b


def test_the_used_pc_legend_marker_is_neutral_when_switches_have_colours():
    # issue 39 (pictures that mislead): used PCs are coloured by their switch, so the
    # legend's marker must not take the first switch's colour as if it meant "used"
    import numpy as np

    ptop = g.deterlab(24, 2, seed=0)
    top = g.random_sparse(20, 4, seed=1)  # sw0 has 16 PCs: both switches used
    result = testbed.assign(top, ptop, "assign+")
    fig = testbed.plot_mapping(top, ptop, result)
    legend = fig.axes[0].get_legend()
    texts = [t.get_text() for t in legend.get_texts()]
    k = next(i for i, t in enumerate(texts) if t.startswith("used PC ("))
    assert texts[k].endswith("coloured by switch")
    face = legend.legend_handles[k].get_facecolor()
    assert tuple(np.round(face[0][:3], 3)) == (1.0, 1.0, 1.0)
    used = starting(collections(fig), "used PC (")
    homes = {tuple(f) for f in used.get_facecolors()}
    assert len(homes) == 2 and (1.0, 1.0, 1.0, 1.0) not in homes  # one colour per switch
