"""``coalloc plot``: one picture per family from files, solved on the fly or from a result."""

import json
import sys

import pytest

from coalloc.cli import main
from tests._plots import mpl, png_is_picture  # noqa: F401

pytestmark = pytest.mark.usefixtures("mpl")


def _ok(capsys, args, out):
    assert main(args) == 0, capsys.readouterr().err
    assert f"picture written to {out}" in capsys.readouterr().out
    png_is_picture(out)


@pytest.mark.slow
def test_plot_ctaap_from_result_and_on_the_fly(tmp_path, capsys):
    inst, res, out = tmp_path / "i.json", tmp_path / "r.json", tmp_path / "a.png"
    assert main(["generate", "fig2", "--n-tasks", "20", "-o", str(inst)]) == 0
    assert main(["solve", str(inst), "-o", str(res)]) == 0
    capsys.readouterr()
    _ok(capsys, ["plot", "ctaap", str(inst), str(res), "-o", str(out)], out)
    _ok(capsys, ["plot", "ctaap", str(inst), "--method", "greedy", "-o", str(out)], out)
    data = json.loads(res.read_text())
    data["assignment"] = data["assignment"][:-1]
    res.write_text(json.dumps(data))
    assert main(["plot", "ctaap", str(inst), str(res), "-o", str(out)]) == 2
    assert "the assignment has 19 entries" in capsys.readouterr().err


@pytest.mark.slow
def test_plot_every_other_family(tmp_path, capsys, taskmap_graph_files, collective_tiny):
    from coalloc import collective, loadshare, testbed
    from coalloc.testbed import generators as g

    tp, rp = taskmap_graph_files
    out = tmp_path / "p.png"
    _ok(capsys, ["plot", "taskmap", str(tp), str(rp), "-o", str(out)], out)
    _ok(capsys, ["plot", "taskmap", str(tp), str(rp), "--tree", "-o", str(out)], out)
    ti, tr = tmp_path / "t.json", tmp_path / "tr.json"  # INSTANCE [RESULT], as taskmap map
    assert main(["taskmap", "generate", "--c", "2", "--seed", "1", "-o", str(ti)]) == 0
    assert main(["taskmap", "map", str(ti), "-o", str(tr)]) == 0
    capsys.readouterr()
    _ok(capsys, ["plot", "taskmap", str(ti), str(tr), "-o", str(out)], out)
    assert main(["taskmap", "map", str(tp), str(rp), "-o", str(tr)]) == 0
    capsys.readouterr()
    _ok(capsys, ["plot", "taskmap", str(tp), str(rp), str(tr), "-o", str(out)], out)
    ci = tmp_path / "c.json"
    collective.write_instance(ci, collective_tiny.pool, collective_tiny.request)
    cr = tmp_path / "cr.json"
    assert main(["collective", "solve", str(ci), str(ci), "-o", str(cr)]) == 0
    capsys.readouterr()
    _ok(capsys, ["plot", "collective", str(ci), str(ci), str(cr), "-o", str(out)], out)
    _ok(capsys, ["plot", "collective", str(ci), str(ci), "-o", str(out)], out)
    top, ptop = tmp_path / "x.top", tmp_path / "x.ptop"
    testbed.write_top(top, g.ring(5))
    testbed.write_ptop(ptop, g.deterlab(8, 2, seed=0))
    _ok(capsys, ["plot", "testbed", str(top), str(ptop), "-o", str(out)], out)
    tj = tmp_path / "tb.json"
    assert main(["testbed", "assign", str(top), str(ptop), "--json"]) == 0
    tj.write_text(capsys.readouterr().out)
    _ok(capsys, ["plot", "testbed", str(top), str(ptop), str(tj), "-o", str(out)], out)
    lp = tmp_path / "l.json"
    loadshare.write_problem(lp, loadshare.generators.paper_setup(n_nodes=30, seed=1))
    _ok(capsys, ["plot", "loadshare", str(lp), "--coalition-size", "10", "-o", str(out)], out)
    _ok(capsys, ["plot", "loadshare", str(lp), "--loads", "-o", str(out)], out)


def test_plot_without_matplotlib_says_what_to_install(tmp_path, capsys, monkeypatch):
    inst = tmp_path / "i.json"
    assert main(["generate", "fig2", "--n-tasks", "10", "-o", str(inst)]) == 0
    capsys.readouterr()
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib fails
    assert main(["plot", "ctaap", str(inst), "-o", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert 'pip install "coalloc[plot]"' in err and "\n" not in err.strip()
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize(
    "family, solve",
    [
        ("ctaap", ["ctaap", "solve"]),
        ("taskmap", ["taskmap", "map"]),
        ("collective", ["collective", "solve"]),
        ("testbed", ["testbed", "assign"]),
        ("loadshare", ["loadshare", "share"]),
    ],
)
def test_plot_takes_the_solve_commands_inputs_in_its_order(family, solve):
    """The positional arguments of 'coalloc plot FAMILY' are the solve command's, then RESULT."""
    from coalloc.cli import build_parser

    def positionals(argv):
        sub = build_parser()._subparsers._group_actions[0]
        for word in argv:
            sub = sub.choices[word]._subparsers._group_actions[0] if word != argv[-1] else sub
        parser = sub.choices[argv[-1]]
        return [a.dest for a in parser._actions if not a.option_strings and a.dest != "help"]

    assert positionals(["plot", family]) == [*positionals(solve), "result"]
