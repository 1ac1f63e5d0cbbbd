"""What every family's ``plot_*`` functions share: matplotlib on demand, axes, colours, saving.

matplotlib is an optional dependency (the ``[plot]`` extra). It is imported only when a
picture is drawn, so ``import coalloc`` never pays for it; without it the error says what to
install. Without a display (no ``DISPLAY``/``WAYLAND_DISPLAY`` on Linux, and no
``MPLBACKEND`` chosen by the user) the non-interactive ``Agg`` backend is selected, so
pictures render on servers and in CI.

Every ``plot_*`` function of a family takes ``ax=None`` (draw into these axes, or a new
figure) and ``path=None`` (also save the figure there) and returns the matplotlib
``Figure``.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Optional, Sequence, Tuple

__all__ = [
    "GREY",
    "CROSS",
    "import_pyplot",
    "figure_and_axes",
    "category_colors",
    "finish",
    "save_figure",
    "explanation_document",
]

#: Colour of what is not allocated / not used.
GREY = "#b0b0b0"
#: Colour of what crosses a boundary (a link between clusters or switches) or a bottleneck.
CROSS = "#d62728"

_INSTALL = 'pictures need matplotlib: pip install "coalloc[plot]"'


def import_pyplot() -> Any:
    """Import ``matplotlib.pyplot``, choosing ``Agg`` when there is no display.

    Returns
    -------
    module
        ``matplotlib.pyplot``.

    Raises
    ------
    ImportError
        When matplotlib is not installed; the message says ``pip install "coalloc[plot]"``.

    Examples
    --------
    >>> plt = import_pyplot()
    >>> plt.__name__
    'matplotlib.pyplot'
    """
    try:
        import matplotlib
    except ImportError as exc:
        raise ImportError(f"{_INSTALL} ({exc})") from None
    if "matplotlib.pyplot" not in sys.modules and _headless():
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _headless() -> bool:
    if os.environ.get("MPLBACKEND"):
        return False
    if not sys.platform.startswith("linux"):
        return False
    return not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def figure_and_axes(ax: Any = None, figsize: Tuple[float, float] = (8.0, 6.0)) -> Tuple[Any, Any]:
    """The figure and axes to draw into: ``ax``'s own, or a new figure.

    Parameters
    ----------
    ax : matplotlib.axes.Axes, optional
        Axes given by the caller; None creates a figure with one axes.
    figsize : (float, float)
        Size in inches of a new figure.

    Returns
    -------
    (Figure, Axes)

    Raises
    ------
    TypeError
        When ``ax`` is not a matplotlib ``Axes``.
    """
    plt = import_pyplot()
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize)
        return fig, ax
    from matplotlib.axes import Axes

    if not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes, got {type(ax).__name__}")
    return ax.figure, ax


def category_colors(k: int) -> list:
    """``k`` distinct colours (tab10, then tab20, then a golden-ratio hue sequence); never
    grey-ish red.

    Never a repeat: beyond tab20's twenty colours, colour ``i`` takes the hue
    ``(0.618... * i) mod 1`` at one of three lightnesses and three saturations, so that every
    colour differs from every other (also after rounding to 8 bits) and consecutive
    categories (neighbours in a picture) differ by far more than distant ones.

    Parameters
    ----------
    k : int
        Number of categories.

    Returns
    -------
    list of RGBA tuples

    Examples
    --------
    >>> from coalloc._shared.plotting import category_colors
    >>> colours = category_colors(45)
    >>> len(colours), len({tuple(round(255 * x) for x in c) for c in colours})
    (45, 45)
    """
    import colorsys

    import_pyplot()
    from matplotlib import colormaps

    if k <= 0:
        return []
    if k <= 10:
        # tab10 without its red (index 3, the cross-boundary colour) and grey (index 7)
        base = [colormaps["tab10"](i) for i in (0, 1, 2, 4, 5, 6, 8, 9, 3, 7)]
        return base[:k]
    if k <= 20:
        return [colormaps["tab20"](i) for i in range(k)]
    golden = (5**0.5 - 1) / 2
    out = []
    for i in range(k):
        light = (0.45, 0.68, 0.28)[i % 3]
        sat = (0.85, 0.55, 1.0)[(i // 3) % 3]
        out.append((*colorsys.hls_to_rgb((golden * i) % 1.0, light, sat), 1.0))
    return out


def finish(fig: Any, path: Optional[Any] = None, *, dpi: int = 120,
           title: Optional[str] = None, ax: Any = None) -> Any:  # fmt: skip
    """Set the title, save to ``path`` when given, and return ``fig``.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    path : str or path-like, optional
        File to write (the format follows the suffix: ``.png``, ``.svg``, ``.pdf``, ...).
    dpi : int
        Resolution of raster formats.
    title : str, optional
        Title of ``ax``.
    ax : matplotlib.axes.Axes, optional
        The axes the title goes to.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if title is not None and ax is not None:
        ax.set_title(title)
    if path is not None:
        save_figure(fig, path, dpi=dpi)
    return fig


def save_figure(fig: Any, path: Any, *, dpi: int = 120) -> str:
    """Save ``fig`` to ``path`` through the one writer (:func:`.jsonio.atomic_output`).

    The format follows the suffix (``.png``, ``.svg``, ``.pdf`` ...); without one it is
    matplotlib's ``savefig.format`` and that suffix is added, as ``Figure.savefig`` does.
    The picture appears only when complete, and never over an input of the running command.

    Returns
    -------
    str
        The path written.
    """
    from .jsonio import atomic_output

    name = os.fspath(path)
    fmt = os.path.splitext(name)[1][1:].lower()
    if not fmt:
        import matplotlib

        fmt = matplotlib.rcParams["savefig.format"]
        name = f"{name.rstrip('.')}.{fmt}"
    supported = fig.canvas.get_supported_filetypes()
    if fmt not in supported:
        raise ValueError(
            f"{name}: no picture format {fmt!r}; the suffix of the file name picks one of "
            f"{', '.join(sorted(supported))}"
        )
    with atomic_output(name, binary=True) as fh:
        fig.savefig(fh, format=fmt, dpi=dpi, bbox_inches="tight")
    return name


def explanation_document(explanation: Any, explain: Callable[[], Any], nothing: str) -> dict:
    """The document a ``plot_explanation`` draws (every family's, one rule).

    Parameters
    ----------
    explanation : Explanation, dict or None
        What the caller passed: an explanation (its ``to_dict()`` is read), its document
        already, or None (then ``explain()`` finds one).
    explain : callable
        The family's explainer on the caller's instance and time limit.
    nothing : str
        The message when ``explain()`` finds none (the instance is feasible, or its
        infeasibility was not proved in time).

    Returns
    -------
    dict
        The explanation's document (``conflict``, ``sentence``, ``relaxations`` ...).

    Raises
    ------
    ValueError
        ``nothing``, when there is nothing to explain.

    Examples
    --------
    >>> explanation_document({"conflict": {}}, lambda: None, "fits")
    {'conflict': {}}
    >>> explanation_document(None, lambda: None, "it fits: nothing to explain")
    Traceback (most recent call last):
    ...
    ValueError: it fits: nothing to explain
    """
    if explanation is None:
        explanation = explain()
        if explanation is None:
            raise ValueError(nothing)
    return explanation.to_dict() if hasattr(explanation, "to_dict") else dict(explanation)


def check_length(values: Sequence, n: int, argname: str) -> None:
    """Raise ``ValueError`` unless ``len(values) == n`` (names, labels)."""
    if len(values) != n:
        raise ValueError(f"{argname} must have {n} entries, got {len(values)}")
