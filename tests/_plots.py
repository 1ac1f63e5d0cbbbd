"""What the picture tests share: matplotlib on Agg (required in CI), and a PNG check."""

import numpy as np
import pytest

from tests._optional import skip_unless_ci

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:  # pragma: no cover - CI installs the [plot] extra
    matplotlib = plt = None


@pytest.fixture
def mpl():
    """pyplot on Agg; every figure closed afterwards. Skipped without matplotlib, except
    in CI (where the [plot] extra is installed and the picture tests must run)."""
    if matplotlib is None:
        skip_unless_ci("matplotlib (the [plot] extra) is not installed")
    yield plt
    plt.close("all")


def collections(fig, index: int = 0) -> dict:
    """label -> collection of the figure's axes ``index`` (scatters and line collections)."""
    return {c.get_label(): c for c in fig.axes[index].collections}


def starting(drawn: dict, prefix: str):
    """The one collection whose label starts with ``prefix``."""
    (key,) = [k for k in drawn if k.startswith(prefix)]
    return drawn[key]


def png_is_picture(path):
    """The file decodes as a PNG of a reasonable size and is not one flat colour."""
    with open(path, "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    img = plt.imread(str(path))
    assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100
    rgb = img[..., :3]
    assert np.ptp(rgb) > 0.5, "the picture is blank"
    return rgb
