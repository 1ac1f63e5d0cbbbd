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
