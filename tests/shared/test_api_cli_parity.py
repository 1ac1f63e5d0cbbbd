"""Every family's API and CLI carry the same options and return the same fields (issue 39).

For each problem kind of the registry (:func:`coalloc._shared.family.families`), its solve
command is found in the ``coalloc`` parser and compared with the kind's solve function:

* options: every keyword of the solve function (``method``, ``seed``, ``bound``, ...) is an
  option of the command, and every option of the command is a keyword of the function, a
  parameter of one of the kind's methods (``PARAMS``) or one of the few that only say what
  to print or where to write;
* fields: the command's ``--json`` on the kind's example instance, and the API's
  ``result.to_dict()`` called with the options the command parsed (its defaults) hold the
  same keys with the same values (timings aside); the command's extra keys name its input
  files, the verification, or a value an API call gives (computed here, compared).
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import io
import json

import numpy as np
import pytest

from coalloc._shared.family import families
from coalloc._shared.result import jsonable
from coalloc.cli import build_parser, main

#: kind (family, kind) -> its solve command in the ``coalloc`` parser.
SOLVE_COMMAND = {
    ("ctaap", "ctaap"): ("ctaap", "solve"),
    ("taskmap", "taskmap"): ("taskmap", "map"),
    ("collective", "collective"): ("collective", "solve"),
    ("testbed", "testbed"): ("testbed", "assign"),
    ("loadshare", "loadshare"): ("loadshare", "share"),
    ("loadshare", "gap"): ("loadshare", "gap"),
}

#: options that only say what to print, where to write, or pass parameters on.
PRESENTATION = {"help", "output", "json", "verbose", "quiet", "param", "reserve_to"}

#: options a command has that the API has not, and where the API gives the same.
CLI_ONLY = {
    ("testbed", "exact_bound"): "a second, exact solve for its bound: "
    "testbed.assign(top, ptop, 'exact', time_limit=S).bound",
    ("loadshare", "latency"): "the printed cost of the placement: ShareResult.cost(latency)",
    ("gap", "instance"): "which instance of a multi-instance OR-Library file: read_gap(f)[k - 1]",
    ("gap", "partial"): "the API's assign_all=False",
    ("taskmap", "format"): "the reader of the input files: read_metis_graph / read_scotch_graph",
    ("gap", "format"): "the reader of the input file: read_gap (OR-Library) or read_gap_json",
    ("ctaap", "format"): "the reader of the input file: ctaap.read_instance",
    ("testbed", "format"): "the readers of the input files: read_top/read_ptop or read_instance",
    ("collective", "format"): "the reader of the pool file: read_pool, read_pool_csv or "
    "read_pool_snapshot",
}
# issue 38: --explain (and its budget) on every solve command: the family's explanation,
# Instance(...).explain(result, time_limit=S) (task mapping: taskmap.explain_result)
CLI_ONLY.update({(kind, opt): "Instance(...).explain(result, time_limit=S)"
                 for kind in ("ctaap", "collective", "testbed", "loadshare", "gap", "taskmap")
                 for opt in ("explain", "explain_time")})  # fmt: skip

#: what a solve command's keyword is called among the method parameters or options.
RENAMED = {"gap": {"assign_all": "partial"}}


def _kinds():
    for fam, spec in families().items():
        for kind in spec.kinds:
            yield fam, kind


def _subparsers(parser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices
    return {}


def _command(family, kind):
    group, name = SOLVE_COMMAND[(family, kind.kind)]
    return _subparsers(_subparsers(build_parser())[group])[name]


def test_every_kind_has_its_solve_command_named():
    assert set(SOLVE_COMMAND) == {(f, k.kind) for f, k in _kinds()}


@pytest.mark.parametrize("family,kind", list(_kinds()), ids=lambda x: getattr(x, "kind", x))
def test_options_agree(family, kind):
    cmd = _command(family, kind)
    positional = {a.dest for a in cmd._actions if not a.option_strings}
    options = {a.dest for a in cmd._actions if a.option_strings} - PRESENTATION
    sig = inspect.signature(kind._solve_function)
    keywords = {n for n, p in sig.parameters.items()
                if p.kind is p.KEYWORD_ONLY or n == "method"}  # fmt: skip
    renamed = RENAMED.get(kind.kind, {})
    params = set().union(*(set(t) for t in kind.PARAMS.values()))
    # every keyword of the API is an option of the command
    missing = {k for k in keywords if renamed.get(k, k) not in options}
    assert not missing, f"{kind.kind}: the API's {sorted(missing)} have no option in the CLI"
    # the parameters every method takes are options too (or reachable through -p)
    common = set.intersection(*(set(t) for t in kind.PARAMS.values()))
    has_param = any(a.dest == "param" for a in cmd._actions)
    absent = {p for p in common if renamed.get(p, p) not in options}
    assert has_param or not absent, f"{kind.kind}: {sorted(absent)} unreachable from the CLI"
    assert "param" in {a.dest for a in cmd._actions}, f"{kind.kind}: no -p KEY=VALUE"
    # every option of the command is the API's
    api = keywords | params | set(renamed.values())
    extra = {o for o in options if o not in api and (kind.kind, o) not in CLI_ONLY}
    assert not extra, f"{kind.kind}: CLI options {sorted(extra)} have no API counterpart"
    assert positional, kind.kind


# ----------------------------------------------------------------------------- fields


def _files(family, kind, tmp_path):
    """The kind's example instance as the files its solve command reads."""
    spec = families()[family]
    if kind.kind == "gap":
        from coalloc import loadshare

        inst = loadshare.generate_gap("d", 3, 8, seed=1)
        loadshare.write_gap(tmp_path / "g.txt", [inst], multi=False)
        return [str(tmp_path / "g.txt")], kind(inst)
    example = spec.example(seed=0)
    if family == "testbed":
        from coalloc import testbed

        testbed.write_top(tmp_path / "x.top", example.top)
        testbed.write_ptop(tmp_path / "x.ptop", example.ptop)
        return [str(tmp_path / "x.top"), str(tmp_path / "x.ptop")], example
    ((name, data),) = [(n, d) for n, d in spec.fuzz_seeds().items() if n == f"{family}.json"]
    (tmp_path / name).write_bytes(data)
    path = str(tmp_path / name)
    inst = kind.from_dict(json.loads(data))
    return ([path, path] if family == "collective" else [path]), inst


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    assert rc in (0, 1), err.getvalue()
    return out.getvalue()


def _derived(family, inst, result):
    """The values a command adds to the API's fields, each from an API call."""
    if family == "ctaap":
        from coalloc.ctaap.cli import cluster_table

        return {"clusters": cluster_table(inst.request, inst.offer, result.assignment)}
    if family == "taskmap":
        from coalloc import taskmap

        node, link = taskmap.occupancy_graph(inst.task_graph, inst.resource_graph,
                                             result.mapping)  # fmt: skip
        return {"throughput": result.throughput, "node_occupancy": node, "link_occupancy": link}
    if family == "collective":
        return {"earliest_start": inst.request.earliest_start,
                "latest_start": inst.request.latest_start,
                "node_names": [inst.pool.node_names[int(j)] for j in result.resources]}  # fmt: skip
    if family == "testbed":  # without --exact-bound: the result's own bound and proof
        isw = float(result.interswitch_bandwidth)
        proven = result.status == "optimal" or isw <= 0
        return {"quality_bound": isw if proven else result.bound,
                "exact_optimum": isw if proven and isw > 0 else None}  # fmt: skip
    if family == "loadshare" and inst.kind == "loadshare":
        from coalloc import loadshare

        return {"node_load": loadshare.node_loads(inst.problem, result.placement),
                "capacity": inst.problem.capacity}  # fmt: skip
    return {}


def _same(a, b):
    return json.loads(json.dumps(jsonable(a))) == json.loads(json.dumps(jsonable(b)))


@pytest.mark.parametrize("family,kind", list(_kinds()), ids=lambda x: getattr(x, "kind", x))
def test_fields_agree(family, kind, tmp_path):
    files, inst = _files(family, kind, tmp_path)
    group, name = SOLVE_COMMAND[(family, kind.kind)]
    argv = [group, name, *files, "--json"]
    text = _run(argv)
    # one JSON document (the GAP command: one line per instance of its file, here one)
    cli = json.loads(text) if kind.kind != "gap" else json.loads(text.splitlines()[0])
    # the API, called with what the command parsed
    ns = _command(family, kind).parse_args([*files, "--json"])
    sig = inspect.signature(kind._solve_function)
    dest = RENAMED.get(kind.kind, {})
    kw = {k: getattr(ns, dest.get(k, k)) for k, p in sig.parameters.items()
          if p.kind is p.KEYWORD_ONLY and hasattr(ns, dest.get(k, k))}  # fmt: skip
    if kind.kind == "gap":
        kw["assign_all"] = not ns.partial
    result = inst.solve(ns.method, **kw)
    api = result.to_dict()
    missing = set(api) - set(cli)
    assert not missing, f"{kind.kind}: the CLI's --json lacks {sorted(missing)}"
    differ = [k for k in api if k != "timings" and not _same(api[k], cli[k])]
    assert not differ, f"{kind.kind}: {[(k, api[k], cli[k]) for k in differ]}"
    positional = {a.dest for a in _command(family, kind)._actions if not a.option_strings}
    derived = _derived(family, inst, result)
    # "sense_from": where the GAP command took the sense (the file, --sense, or assumed from
    # the OR-Library file name): the API is told the sense, the command has to find it
    extra = set(cli) - set(api) - positional - {"verify", "instance", "sense_from"}
    assert extra == set(derived), f"{kind.kind}: CLI fields {sorted(extra)} unexplained"
    for key, value in derived.items():
        assert _same(cli[key], value), key
    assert np.isfinite(float(cli["objective"]))  # a solved example: the comparison means something


def test_taskmap_bound_is_the_same_option_in_api_and_cli(tmp_path):
    """Issue 39: the CLI printed a bound the API's default left out; ``bound=True`` works,
    ``--no-bound`` is ``bound=False``, and both default to the bound."""
    from coalloc import taskmap

    spec = families()["taskmap"]
    (tmp_path / "t.json").write_bytes(spec.fuzz_seeds()["taskmap.json"])
    inst = taskmap.Instance.from_dict(json.loads((tmp_path / "t.json").read_text()))
    for flags, bound in (([], True), (["--no-bound"], False), (["--bound"], True)):
        cli = json.loads(_run(["taskmap", "map", str(tmp_path / "t.json"), "--method", "base",
                               "--json", *flags]))  # fmt: skip
        api = taskmap.solve(*inst, "base", bound=bound)
        assert (cli.get("bound") is None) == (not bound) == (api.bound is None)
        assert _same(cli.get("bound"), api.bound) and cli["status"] == api.status
    lower = taskmap.bounds.lower_bound(inst.task_graph, inst.resource_graph)
    assert taskmap.solve(*inst, "base", bound=True).bound == pytest.approx(lower)


@pytest.mark.parametrize("family", ["ctaap", "taskmap"])
def test_bound_has_one_default_in_api_and_cli(family, tmp_path):
    """Issue 39: ``bound`` defaults alike in the API (``solve``), the solve command and
    ``solve-batch``; a call without it gives the bound, gap and status the command prints."""
    spec = families()[family]
    (kind,) = spec.kinds
    api_default = inspect.signature(kind._solve_function).parameters["bound"].default
    group, name = SOLVE_COMMAND[(family, kind.kind)]
    cli_default = _command(family, kind).get_default("bound")
    assert api_default is True and cli_default is True
    batch = _subparsers(_subparsers(build_parser())[group]).get("solve-batch")
    if batch is not None and any(a.dest == "bound" for a in batch._actions):
        assert batch.get_default("bound") is True
    files, inst = _files(family, kind, tmp_path)
    cli = json.loads(_run([group, name, *files, "--json", "--seed", "0"]))
    api = inst.solve(cli["method"], seed=0)  # the API's default bound
    assert api.bound is not None and cli["bound"] is not None
    assert _same(cli["bound"], api.bound) and cli["status"] == api.status
    assert _same(cli["gap"], api.gap)
    off = json.loads(_run([group, name, *files, "--json", "--seed", "0", "--no-bound"]))
    without = inst.solve(cli["method"], seed=0, bound=False)
    assert _same(off.get("bound"), without.bound) and off["status"] == without.status
