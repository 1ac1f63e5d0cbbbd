"""``coalloc <family> generate`` built from the family's spec (issue 37).

Each family declares what its ``generate`` writes (``spec.generate``, a tuple of
:class:`coalloc._shared.family_generate.Generated`); the command's options are made from the
declared generators' parameters by :func:`coalloc.cli._generate.add_generate`. Referees:
the generators' own tables and signatures, the option names the command had before, and the
API's generators and writers (the file the command writes is the one they write).
"""

from __future__ import annotations

import argparse
import json

import pytest

from coalloc._shared.constraints import Interval, invalid_values
from coalloc._shared.family import families
from coalloc._shared.family_generate import Generated, generator_table, parameter_help
from coalloc.cli import _common as common
from coalloc.cli import build_parser, main
from coalloc.cli._generate import generate_options

FAMILIES = list(families())


def _subparsers(parser):
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return action.choices


PARSERS = {fam: _subparsers(_subparsers(build_parser())[fam])["generate"] for fam in FAMILIES}

#: Every option ``generate`` had before its options were built from the spec (main at
#: 96b5a1d): none may go.
OPTIONS_BEFORE = {
    "collective": {"--nodes", "--count", "--simple", "--seed", "-o", "--output"},
    "ctaap": {"--range-factor", "--n-tasks", "--seed", "-o", "--output"},
    "loadshare": {"--nodes", "--arrival", "--agents", "--items", "--count", "--single",
                  "--seed", "-o", "--output"},  # fmt: skip
    "taskmap": {"--c", "--seed", "-o", "--output"},
    "testbed": {"--size", "--switches", "--seed", "-o", "--output"},
}

#: The words that choose what is written (the positional argument), as before.
KINDS_BEFORE = {
    "collective": ["pool", "request", "instance"],
    "ctaap": ["fig2", "fig3"],
    "loadshare": ["paper", "a", "b", "c", "d"],
    "taskmap": [],
    "testbed": ["deterlab", "grid5000", "top"],
}


@pytest.mark.parametrize("family", FAMILIES)
def test_every_option_name_of_before_is_kept(family, capsys):
    parser = PARSERS[family]
    assert OPTIONS_BEFORE[family] <= set(parser._option_string_actions)
    positional = [a for a in parser._actions if not a.option_strings]
    assert [list(a.choices) for a in positional] == ([KINDS_BEFORE[family]]
                                                     if KINDS_BEFORE[family] else [])  # fmt: skip
    with pytest.raises(SystemExit) as exc:
        main([family, "generate", "-h"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert all(flag in text for flag in OPTIONS_BEFORE[family])


@pytest.mark.parametrize("family", FAMILIES)
def test_every_declared_parameter_is_an_option_of_its_declared_type(family):
    """Each parameter of each declared generator's table is an option whose type checks
    by that very table entry (the objects, not copies), or is declared fixed with a reason
    and is no option."""
    kinds = families()[family].generate
    assert kinds, family
    parser = PARSERS[family]
    for kind in kinds:
        assert isinstance(kind, Generated)
        for func, param, entry in kind.parameters():
            assert entry is generator_table(func)[param]
            flag = kind.flag(param)
            if param in kind.fixed:
                assert kind.fixed[param].strip(), (kind.name, param)
                if flag in parser._option_string_actions:  # a flag of another kind's parameter
                    other = generate_options(kinds)[flag]
                    assert all(k is not kind or p != param for k, _, p, _ in other)
                continue
            action = parser._option_string_actions[flag]
            assert isinstance(action.type, common._TableValue), (family, flag)
            kept = [c for c in entry if c is not None]
            assert len(action.type.constraints) == len(kept)
            assert all(a is b for a, b in zip(action.type.constraints, kept)) or any(
                all(a is b for a, b in zip(action.type.constraints, other_entry))
                for _, _, _, other_entry in generate_options(kinds)[flag]
            ), (family, flag)
            assert action.default is None  # the kind's default applies, said in the help
            assert parameter_help(func, param) or action.help


def _bad_texts(entry):
    numeric = any(isinstance(c, Interval) for c in entry)
    out = [repr(v) for v in invalid_values(entry)
           if isinstance(v, (int, float)) and not isinstance(v, bool)]  # fmt: skip
    out += [v for v in invalid_values(entry) if isinstance(v, str) and not numeric]
    return out


def _refusals():
    out = []
    for fam in FAMILIES:
        kinds = families()[fam].generate
        for flag, fed in generate_options(kinds).items():
            kind, _, param, entry = fed[0]
            for text in _bad_texts(entry)[:2]:
                out.append((fam, kind.name if len(kinds) > 1 else None, flag, param, text))
    return out


@pytest.mark.parametrize("family,kind,flag,param,text", _refusals(),
                         ids=[f"{f} {o}={t}" for f, _, o, _, t in _refusals()])  # fmt: skip
def test_a_bad_value_is_refused_naming_the_parameter(family, kind, flag, param, text, capsys,
                                                      tmp_path):  # fmt: skip
    out = tmp_path / "x.json"
    with pytest.raises(SystemExit) as exc:
        main([family, "generate", *([kind] if kind else []), f"{flag}={text}", "-o", str(out)])
    err = capsys.readouterr().err
    assert exc.value.code == 2, err
    assert f"argument {flag}: {param} must be" in err, err
    assert not out.exists()


def _run(tmp_path, argv, name):
    path = tmp_path / name
    assert main([*argv, "-o", str(path)]) == 0
    return path


def _json(path):
    return json.loads(path.read_text())


def _same_json(tmp_path, got, writer, *args, **kwargs):
    ref = tmp_path / ("ref-" + got.name)
    writer(str(ref), *args, **kwargs)
    assert _json(got) == _json(ref)


def test_collective_files_are_the_generators(tmp_path, capsys):
    from coalloc.collective import generators as g
    from coalloc.collective import io

    pool = g.table1_pool(20, n_slots=12, slot_seconds=600.0, seed=3)
    got = _run(tmp_path, ["collective", "generate", "pool", "--nodes", "20", "--n-slots", "12",
                          "--slot-seconds", "600", "--seed", "3"], "pool.json")  # fmt: skip
    _same_json(tmp_path, got, io.write_pool, pool)
    simple, coll = g.section42_requests(pool, 4, 1, seed=3)[0]
    common_args = ["--nodes", "20", "--n-slots", "12", "--slot-seconds", "600", "--seed", "3",
                   "--count", "4"]  # fmt: skip
    got = _run(tmp_path, ["collective", "generate", "request", *common_args], "req.json")
    _same_json(tmp_path, got, io.write_request, coll)
    got = _run(tmp_path, ["collective", "generate", "instance", "--simple", *common_args],
               "inst.json")  # fmt: skip
    _same_json(tmp_path, got, io.write_instance, pool, simple)
    # the defaults are the command's before: a 606-node pool, N = 5, one case drawn
    got = _run(tmp_path, ["collective", "generate", "request", "--seed", "1"], "d.json")
    _same_json(tmp_path, got, io.write_request,
               g.section42_requests(g.table1_pool(606, seed=1), 5, 1, seed=1)[0][1])  # fmt: skip


def test_ctaap_files_are_the_generators(tmp_path, capsys):
    from coalloc.ctaap import generators as g
    from coalloc.ctaap import io

    got = _run(tmp_path, ["ctaap", "generate", "fig2", "--range-factor", "2", "--n-tasks", "12",
                          "--n-clusters", "3", "--seed", "4"], "f2.json")  # fmt: skip
    meta = {"setup": "fig2", "range_factor": 2, "n_tasks": 12, "n_clusters": 3, "seed": 4}
    _same_json(tmp_path, got, io.write_instance, *g.fig2(2, n_tasks=12, n_clusters=3, seed=4),
               metadata=meta)  # fmt: skip
    got = _run(tmp_path, ["ctaap", "generate", "fig3", "--seed", "2"], "f3.json")
    _same_json(tmp_path, got, io.write_instance, *g.fig3(100, seed=2),
               metadata={"setup": "fig3", "n_tasks": 100, "seed": 2})  # fmt: skip


def test_loadshare_files_are_the_generators(tmp_path, capsys):
    from coalloc.loadshare import generate_gap, generators, io

    got = _run(tmp_path, ["loadshare", "generate", "paper", "--nodes", "40", "--capacity",
                          "500", "--block", "10", "--arrival", "same-rate", "--seed", "2"],
               "p.json")  # fmt: skip
    prob = generators.paper_setup(40, capacity=500.0, block=10, seed=2, arrival="same-rate")
    _same_json(tmp_path, got, io.write_problem, prob,
               metadata={"setup": "fig5", "seed": 2, "arrival": "same-rate"})  # fmt: skip
    got = _run(tmp_path, ["loadshare", "generate", "b", "--agents", "3", "--items", "7",
                          "--count", "2", "--seed", "5"], "g.txt")  # fmt: skip
    ref = tmp_path / "ref.txt"
    io.write_gap_file(str(ref), [generate_gap("b", 3, 7, seed=5 + k) for k in range(2)])
    assert got.read_bytes() == ref.read_bytes()


def test_taskmap_file_is_the_generator(tmp_path, capsys):
    from coalloc.taskmap import generators as g
    from coalloc.taskmap import io

    got = _run(tmp_path, ["taskmap", "generate", "--c", "4", "--seed", "1"], "t.json")
    _same_json(tmp_path, got, io.write_instance, *g.table1_instance(4.0, seed=1),
               metadata={"setup": "table1", "c": 4.0, "seed": 1})  # fmt: skip


def test_testbed_files_are_the_generators(tmp_path, capsys):
    from coalloc.testbed import generators as g
    from coalloc.testbed import io

    cases = [
        (["deterlab", "--size", "20", "--switches", "2", "--trunks-per-pair", "1"],
         io.write_ptop, g.deterlab(20, 2, trunks_per_pair=1, seed=7)),
        (["grid5000", "--n-sites", "2", "--nodes-per-cluster", "3"],
         io.write_ptop, g.grid5000(2, nodes_per_cluster=3, seed=7)),
        (["top", "--size", "12", "--p-typed", "0.5"],
         io.write_top, g.random_topology(12, p_typed=0.5, seed=7)),
        (["top"], io.write_top, g.random_topology(255, seed=7)),  # the command's default size
    ]  # fmt: skip
    for k, (argv, writer, made) in enumerate(cases):
        got = _run(tmp_path, ["testbed", "generate", *argv, "--seed", "7"], f"{k}.txt")
        ref = tmp_path / f"ref{k}.txt"
        writer(str(ref), made)
        assert got.read_bytes() == ref.read_bytes(), argv


# ------------------------------------------------------------------ the declaration's checks


def _toy(**kwargs):
    from coalloc.collective.generators import table1_pool

    return Generated("pool", (table1_pool,), lambda path, kw, args: "", **kwargs)


def test_a_parameter_the_command_line_cannot_say_must_be_declared_fixed():
    with pytest.raises(ValueError, match="load is not a number or a word"):
        generate_options([_toy()])
    assert "--load" not in generate_options([_toy(fixed={"load": "a pair"})])


def test_a_declaration_naming_no_parameter_is_refused():
    with pytest.raises(ValueError, match=r"flags names \['nodes'\]"):
        _toy(flags={"nodes": "--nodes"})


def test_one_option_for_two_differently_declared_parameters_is_refused():
    from coalloc.ctaap.generators import fig2

    ctaap_kind = Generated("fig2", (fig2,), lambda path, kw, args: "",
                           flags={"range_factor": "--slot-seconds"})  # fmt: skip
    with pytest.raises(ValueError, match="option --slot-seconds"):
        generate_options([_toy(fixed={"load": "a pair"}), ctaap_kind])


def test_the_help_is_the_generators_numpydoc():
    from coalloc.testbed.generators import deterlab, grid5000

    assert parameter_help(deterlab, "n_switches") == "Leaf switches"
    assert parameter_help(grid5000, "uplink_bw").startswith("Bandwidth of the backbone")
    assert parameter_help(deterlab, "no_such") == ""
    text = PARSERS["testbed"]._option_string_actions["--switches"].help
    assert text.startswith("Leaf switches (deterlab); default 5")
