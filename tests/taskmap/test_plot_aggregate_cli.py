"""``coalloc plot taskmap --aggregate/--no-aggregate``: the CLI's spelling of
``plot_mapping(..., aggregate=True/False)``; without either, the function's own rule
(grouped beyond ``AGGREGATE_ABOVE`` processors)."""

import pytest

from coalloc import taskmap
from coalloc.cli import main
from tests._plots import mpl, png_is_picture  # noqa: F401

pytestmark = pytest.mark.usefixtures("mpl")


def _plot(capsys, monkeypatch, argv):
    """Run ``coalloc plot taskmap ARGV``; the ``aggregate`` plot_mapping was given, and
    the figure it drew."""
    seen = []
    real = taskmap.plot_mapping

    def spy(*args, **kwargs):
        seen.append(kwargs.get("aggregate", "not passed"))
        fig = real(*args, **kwargs)
        seen.append(fig)
        return fig

    monkeypatch.setattr(taskmap, "plot_mapping", spy)
    assert main(["plot", "taskmap", *argv]) == 0, capsys.readouterr().err
    assert len(seen) == 2
    return seen[0], seen[1]


def _task_dots(fig) -> int:
    """Points drawn as markers (the tasks' dots and the processors' circles: grouping
    draws fewer circles and no dots)."""
    return sum(len(c.get_offsets()) for ax in fig.axes for c in ax.collections
               if hasattr(c, "get_offsets"))  # fmt: skip


@pytest.mark.slow  # three pictures drawn
def test_the_flag_reaches_plot_mapping(tmp_path, capsys, monkeypatch, taskmap_graph_files):
    tp, rp = taskmap_graph_files
    out = tmp_path / "m.png"
    base = [str(tp), str(rp), "--method", "base", "-o", str(out)]
    given, auto = _plot(capsys, monkeypatch, base)
    assert given is None  # the function's automatic rule
    png_is_picture(out)
    given, grouped = _plot(capsys, monkeypatch, base + ["--aggregate"])
    assert given is True
    png_is_picture(out)
    given, plain = _plot(capsys, monkeypatch, base + ["--no-aggregate"])
    assert given is False
    # a small instance (<= AGGREGATE_ABOVE processors) is drawn plainly by default ...
    tasks = taskmap.read_task_graph(tp)
    assert taskmap.read_resource_graph(rp).n_processors <= taskmap.plot.AGGREGATE_ABOVE
    assert _task_dots(auto) == _task_dots(plain)
    # ... and grouped on demand: no task dots then
    assert tasks.n > 0 and _task_dots(grouped) < _task_dots(plain)


def test_the_flag_is_refused_with_the_tree(tmp_path, capsys, taskmap_graph_files):
    tp, rp = taskmap_graph_files
    for flag in ("--aggregate", "--no-aggregate"):
        code = main(["plot", "taskmap", str(tp), str(rp), "--tree", flag,
                     "-o", str(tmp_path / "t.png")])  # fmt: skip
        assert code == 2
        err = capsys.readouterr().err
        assert err.startswith("coalloc: error: ") and flag in err and "--tree" in err, err
        assert not (tmp_path / "t.png").exists()
