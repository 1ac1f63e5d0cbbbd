"""One suite every family passes: :func:`check_family`, as scikit-learn's ``check_estimator``.

A family is what its :class:`~coalloc._shared.family.FamilySpec` says: its problem kinds
and their methods, its file formats, its command-line group and plot command, an example
instance. :func:`family_checks` lists the checks that hold the family to the house's
contract from the spec alone, and :func:`check_family` runs them all:

``round_trip``
    the example (and an instance of every other kind, read from its format's examples) is
    solved by its kind's default method and the family's ``verify`` accepts the answer;
``methods_under_budget``
    every method, untimed, with a generous and with a tiny ``time_limit``: the status is
    one of :data:`coalloc.STATUSES` and not ``error``; a result holds a verified answer
    exactly when it says so (``optimal``/``feasible``, or ``time_limit`` with the incumbent),
    else ``verify`` says there is none; ``time_limit`` only under a limit; ``optimal`` only
    with a bound the objective meets; ``to_dict()`` is JSON with the same status. No
    assertion reads the clock (a loaded machine cannot make it flake);
``determinism``
    every method, untimed, gives the same answer twice with one seed;
``solve_many``
    a small batch under every executor (``serial``, ``threads``, ``processes``), and from
    files, gives the answers of the instances solved one by one with the batch's seeds;
``file_round_trip``
    every kind's instance, written by its format's writer, read back (by its kind and by
    the batch layer's reader) gives the same answer;
``schemas``
    every format: the published schema is a valid JSON Schema (a family of
    :data:`coalloc.FAMILIES` ships it, ``<family>/schemas/<format>.schema.json``, and the
    shipped file is the generated one), the examples are valid under it and accepted by the
    readers' checker, and on simple mutations (a field removed, an unknown field added) both
    agree;
``cli``
    ``coalloc <family> -h`` and every subcommand's ``-h`` exit 0, an unknown subcommand
    exits 2, ``coalloc plot <family> -h`` exits 0, ``coalloc schema FORMAT`` prints each
    format's schema, and ``solve-batch`` (where the group has it) exits 0 on the example's
    file and 2 on a file that does not exist;
``generate``
    every kind of file ``coalloc <family> generate`` writes (``FamilySpec.generate``):
    the command with ``--seed 5`` writes the file the kind's generators write through its
    writer with that seed and the declared defaults (the API), under each of the names
    ``.json`` and ``.txt`` it accepts (one at least); the file is read back by the spec's
    format its content says it is (a JSON format's checker and kind, or a line format's
    reader);
``line_formats``
    every line format (``FamilySpec.line_formats``) has its ``--format`` word, with its
    kinds, in the shared table; one with a writer writes its ``sample`` into a file
    ``sniff`` recognises as one of its kinds, which its reader reads and its writer writes
    back to the same bytes (the same ``dump`` where it declares one);
``bad_values``
    an unknown method, an unknown parameter name, a bad ``time_limit`` (negative, zero,
    NaN, infinite, a string) and a seed that is not an integer are refused with
    ``ValueError``/``TypeError``, by ``solve``, ``check_params`` and ``solve_many``, before
    any work.

Examples
--------
>>> from coalloc.testing import check_family, family_checks
>>> [name for name, _ in family_checks("loadshare")][:3]
['round_trip', 'methods_under_budget', 'determinism']
>>> check_family("loadshare", checks=["round_trip", "bad_values"])
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import tempfile
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from ._shared.family import FamilyInstance, FamilySpec, NoSolutionReport, families
from ._shared.jsonio import InstanceError, dump_json, write_text

__all__ = ["check_family", "family_checks", "result_violations"]

#: The limits every method runs under: a generous budget (an anytime method may use all of
#: it) and a tiny one (most methods stop early).
GENEROUS, TINY = 2.0, 1e-3

#: The executors every batch check runs under.
EXECUTORS = ("serial", "threads", "processes")

_Check = Callable[[], None]


def _spec(family: Union[str, FamilySpec]) -> FamilySpec:
    if isinstance(family, FamilySpec):
        return family
    specs = families()
    if family not in specs:
        raise ValueError(f"family must be one of {sorted(specs)} or a FamilySpec, got {family!r}")
    return specs[family]


def _fail(spec: FamilySpec, check: str, text: str) -> None:
    raise AssertionError(f"family {spec.name!r}, check {check!r}: {text}")


def _answer(result: Any) -> dict:
    """What a result says about the problem: ``to_dict()`` without timings and limits."""
    data = json.loads(json.dumps(result.to_dict(), default=str))
    data.pop("timings", None)
    for key in ("time_limit", "solver_time_limit"):
        (data.get("params") or {}).pop(key, None)
    return data


def result_violations(instance: FamilyInstance, result: Any,
                      time_limit: Optional[float] = None) -> List[str]:  # fmt: skip
    """Every way ``result`` breaks the house's result contract (empty: it keeps it).

    The rules of :mod:`coalloc._shared.result`, recomputed here: a status of
    :data:`coalloc.STATUSES` and not ``error``; the solution field is set exactly when
    ``has_solution`` is True, and then the family's ``verify`` accepts it, else ``verify``
    says there is none; ``optimal``/``feasible`` hold a solution, ``infeasible`` and
    ``no_solution`` hold none and no bound; ``time_limit`` only under a limit; ``optimal``
    only with a finite bound the objective meets; ``to_dict()`` is JSON with the status.

    Parameters
    ----------
    instance : FamilyInstance
        The instance the result answers.
    result : Result
        A result of ``instance.solve``.
    time_limit : float, optional
        The limit the result was computed under (None: untimed).

    Returns
    -------
    list of str
        One line per broken rule.

    Examples
    --------
    >>> from coalloc._shared.family import families
    >>> from coalloc.testing import result_violations
    >>> inst = families()["taskmap"].example(seed=0)
    >>> result_violations(inst, inst.solve(seed=0))
    []
    """
    from . import STATUSES

    status, out = result.status, []
    if status not in STATUSES:
        return [f"status {status!r} is not one of {STATUSES}"]
    if status == "error":
        return [f"status 'error': {result.message}"]
    holds = bool(result.has_solution)
    field_set = getattr(result, type(instance).SOLUTION_FIELD, None) is not None
    if holds != field_set:
        out.append(f"has_solution={holds} but {type(instance).SOLUTION_FIELD} is "
                   f"{'set' if field_set else 'None'}")  # fmt: skip
    if status in ("optimal", "feasible") and not holds:
        out.append(f"status {status!r} without a solution")
    if status in ("infeasible", "no_solution") and (holds or result.bound is not None):
        out.append(f"status {status!r} with a solution or a bound")
    if status == "time_limit" and time_limit is None:
        out.append("status 'time_limit' from an untimed run")
    if status == "optimal":
        objective, bound = result.objective, result.bound
        if objective is None or bound is None or not math.isfinite(float(bound)):
            out.append(f"status 'optimal' with objective={objective!r}, bound={bound!r}")
        elif result.gap is None or float(result.gap) > max(
            1e-9, float((result.params or {}).get("mip_gap") or 0.0)
        ):
            out.append(f"status 'optimal' with gap={result.gap!r}")
    try:
        report = instance.verify(result)
    except Exception as exc:  # noqa: BLE001 - the referee reports any failure
        out.append(f"verify raised {type(exc).__name__}: {exc}")
    else:
        if holds and not report.ok:
            out.append(f"verify rejects the answer: {' '.join(str(report).split())[:300]}")
        if not holds and not isinstance(report, NoSolutionReport):
            out.append(f"verify of a result without a solution gave {type(report).__name__}")
    try:
        data = json.loads(json.dumps(result.to_dict()))
    except Exception as exc:  # noqa: BLE001
        out.append(f"to_dict() is not JSON: {type(exc).__name__}: {exc}")
    else:
        if data.get("status") != status:
            out.append(f"to_dict()['status']={data.get('status')!r}, the result's {status!r}")
    return out


# ------------------------------------------------------------------ the family's instances


def _instances(spec: FamilySpec) -> List[FamilyInstance]:
    """One instance per kind: the example, then each other kind's from its format's examples."""
    if spec.example is None:
        _fail(spec, "spec", "the spec has no example (FamilySpec.example)")
    first = spec.example(seed=0)
    if not isinstance(first, spec.kinds[0]):
        _fail(spec, "spec", f"example() gave a {type(first).__name__}, not a "
                            f"{spec.kinds[0].__name__}")  # fmt: skip
    out = [first]
    for kind in spec.kinds[1:]:
        fmt = spec.file_format(kind.format)
        docs = fmt.examples() if fmt is not None and fmt.examples else []
        if not docs:
            _fail(spec, "spec", f"kind {kind.kind!r}: its format {kind.format!r} declares "
                                "no examples")  # fmt: skip
        out.append(kind.from_dict(docs[0], source=f"{kind.format} example"))
    return out


def _every_method(spec: FamilySpec) -> Iterable[Tuple[FamilyInstance, str]]:
    for inst in _instances(spec):
        for method in type(inst).methods:
            yield inst, method


# ------------------------------------------------------------------ the checks


def _check_round_trip(spec: FamilySpec) -> None:
    for inst in _instances(spec):
        result = inst.solve(seed=0)
        found = result_violations(inst, result)
        if found or not result.has_solution:
            _fail(spec, "round_trip", f"{type(inst).kind}: the default method "
                  f"{inst.DEFAULT_METHOD!r} on the example: {found or result.status}")  # fmt: skip
        if not inst.verify(result).ok:
            _fail(spec, "round_trip", f"{type(inst).kind}: verify rejects the default answer")


def _check_methods_under_budget(spec: FamilySpec) -> None:
    for inst, method in _every_method(spec):
        for limit in (None, GENEROUS, TINY):
            params = {} if limit is None else {"time_limit": limit}
            result = inst.solve(method, seed=0, **params)
            found = result_violations(inst, result, limit)
            if found:
                _fail(spec, "methods_under_budget",
                      f"{type(inst).kind}/{method} (time_limit={limit}): {'; '.join(found)}")
            if result.method != method and method not in str(result.method):
                _fail(spec, "methods_under_budget",
                      f"{type(inst).kind}/{method}: the result names method {result.method!r}")


def _check_determinism(spec: FamilySpec) -> None:
    for inst, method in _every_method(spec):
        first, again = inst.solve(method, seed=7), inst.solve(method, seed=7)
        if _answer(first) != _answer(again):
            _fail(spec, "determinism", f"{type(inst).kind}/{method}: seed 7 gave two answers")


def _dump(spec: FamilySpec, inst: FamilyInstance) -> Optional[dict]:
    fmt = spec.file_format(type(inst).format)
    return None if fmt is None or fmt.dump is None else fmt.dump(inst)


def _check_solve_many(spec: FamilySpec) -> None:
    from .batch import instance_seed, solve_many

    batch = [spec.example(seed=s) for s in range(3)]
    alone = [_answer(inst.solve(seed=instance_seed(5, i))) for i, inst in enumerate(batch)]
    runs: Dict[str, list] = {}
    for executor in EXECUTORS:
        n_jobs = 1 if executor == "serial" else 2
        runs[executor] = solve_many(batch, executor=executor, n_jobs=n_jobs, seed=5,
                                    family=spec.name, progress=False)  # fmt: skip
    docs = [_dump(spec, inst) for inst in batch]
    with tempfile.TemporaryDirectory(prefix="coalloc-check-") as tmp:
        if all(doc is not None for doc in docs):
            paths = []
            for i, doc in enumerate(docs):
                paths.append(os.path.join(tmp, f"instance-{i}.json"))
                dump_json(doc, paths[-1])
            runs["files"] = solve_many(paths, executor="threads", n_jobs=2, seed=5,
                                       family=spec.name, progress=False)  # fmt: skip
    for name, results in runs.items():
        for i, result in enumerate(results):
            if not hasattr(result, "status"):
                _fail(spec, "solve_many", f"executor {name}: instance {i}: {result}")
            if _answer(result) != alone[i]:
                _fail(spec, "solve_many", f"executor {name}: instance {i} differs from the "
                                          "instance solved alone with its batch seed")  # fmt: skip


def _check_file_round_trip(spec: FamilySpec) -> None:
    from .batch import read_problem

    for inst in _instances(spec):
        kind = type(inst)
        doc = _dump(spec, inst)
        if doc is None:
            _fail(spec, "file_round_trip", f"{kind.kind}: its format {kind.format!r} is not a "
                  "declared FileFormat with a dump (instance -> document)")  # fmt: skip
        if doc.get("format", kind.format) != kind.format:
            _fail(spec, "file_round_trip", f"{kind.kind}: the dump's format is "
                                           f"{doc.get('format')!r}")  # fmt: skip
        text = json.dumps(doc)
        with tempfile.TemporaryDirectory(prefix="coalloc-check-") as tmp:
            path = os.path.join(tmp, "instance.json")
            write_text(path, text)
            from_file = read_problem(path)
        again = kind.from_dict(json.loads(text))
        if type(from_file) is not kind or type(again) is not kind:
            _fail(spec, "file_round_trip", f"{kind.kind}: the file reads as "
                                           f"{type(from_file).__name__}")  # fmt: skip
        want = _answer(inst.solve(seed=3))
        for name, copy in (("read_problem", from_file), ("from_dict", again)):
            if _answer(copy.solve(seed=3)) != want:
                _fail(spec, "file_round_trip", f"{kind.kind}: the instance read back "
                                               f"({name}) gives another answer")  # fmt: skip


def _mutations(doc: Any) -> Iterable[Tuple[str, Any]]:
    if isinstance(doc, dict):
        for key in doc:
            yield f"without {key!r}", {k: v for k, v in doc.items() if k != key}
        yield "with an unknown field", {**doc, "no_such_field_": 1}


def _check_schemas(spec: FamilySpec) -> None:
    from .formats import _dumps, _shipped, build_schema, check_document, schema_text

    try:
        import jsonschema
    except ImportError:  # pragma: no cover - the test extra has it
        jsonschema = None
    examples = {f.name: list(f.examples()) if f.examples else [] for f in spec.formats}
    for inst in _instances(spec):
        doc = _dump(spec, inst)
        if doc is not None:
            examples[type(inst).format].append(json.loads(json.dumps(doc)))
    from . import FAMILIES

    for fmt in spec.formats:
        generated = _dumps(build_schema(fmt.name))
        if spec.name in FAMILIES and not _shipped(fmt.name).is_file():
            _fail(spec, "schemas", f"{fmt.name}: coalloc.{spec.name} ships no schema file "
                  f"(coalloc/{spec.name}/schemas/{fmt.name}.schema.json)")  # fmt: skip
        if _shipped(fmt.name).is_file() and schema_text(fmt.name) != generated:
            _fail(spec, "schemas", f"{fmt.name}: the shipped schema file is stale (run "
                  "coalloc.formats.write_schemas())")  # fmt: skip
        if not examples[fmt.name]:
            _fail(spec, "schemas", f"{fmt.name}: no example document (FileFormat.examples)")
        validator = None
        if jsonschema is not None:
            schema = json.loads(generated)
            jsonschema.Draft202012Validator.check_schema(schema)
            validator = jsonschema.Draft202012Validator(schema)
        for k, doc in enumerate(examples[fmt.name]):
            check_document(fmt.name, doc, f"{fmt.name} example {k}")
            if validator is not None and not validator.is_valid(doc):
                _fail(spec, "schemas", f"{fmt.name}: example {k} is invalid under the schema")
            for what, bad in _mutations(doc):
                try:
                    check_document(fmt.name, bad)
                    by_checker = True
                except InstanceError:
                    by_checker = False
                if validator is not None and validator.is_valid(bad) != by_checker:
                    _fail(spec, "schemas", f"{fmt.name}: example {k} {what}: the schema and "
                                           "the readers' checker disagree")  # fmt: skip


def _cli(argv: Sequence[str]) -> Tuple[int, str, str]:
    """``coalloc ARGV`` in this process: (exit status, stdout, stderr)."""
    from .cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def _subcommands(spec: FamilySpec) -> List[str]:
    from .cli import build_parser

    parser = build_parser()
    group = next(a for a in parser._actions if a.dest == "command").choices[spec.name]
    subs = next(a for a in group._actions if a.dest == "subcommand")
    return [name for name, p in subs.choices.items() if p.add_help]


def _check_cli(spec: FamilySpec) -> None:
    for argv in ([spec.name, "-h"], *([spec.name, sub, "-h"] for sub in _subcommands(spec))):
        code, _, err = _cli(argv)
        if code != 0:
            _fail(spec, "cli", f"coalloc {' '.join(argv)} exits {code}: {err[-300:]}")
    code, _, _ = _cli([spec.name, "no-such-command"])
    if code != 2:
        _fail(spec, "cli", f"coalloc {spec.name} no-such-command exits {code}, not 2")
    if spec.plot:
        code, _, err = _cli(["plot", spec.name, "-h"])
        if code != 0:
            _fail(spec, "cli", f"coalloc plot {spec.name} -h exits {code}: {err[-300:]}")
    for fmt in spec.formats:
        code, out, _ = _cli(["schema", fmt.name])
        if code != 0 or json.loads(out).get("title", "").split(":")[0] != fmt.name:
            _fail(spec, "cli", f"coalloc schema {fmt.name} exits {code}")
    if "solve-batch" not in _subcommands(spec):
        return
    inst = spec.example(seed=0)
    doc = _dump(spec, inst)
    if doc is None:
        return
    with tempfile.TemporaryDirectory(prefix="coalloc-check-") as tmp:
        path, out = os.path.join(tmp, "example.json"), os.path.join(tmp, "out.jsonl")
        dump_json(doc, path)
        argv = [spec.name, "solve-batch", path, "--no-progress", "-o", out]
        code, _, err = _cli(argv)
        if code != 0:
            _fail(spec, "cli", f"coalloc {' '.join(argv[:3])} on the example exits {code}: "
                               f"{err[-300:]}")  # fmt: skip
        with open(out, encoding="utf-8") as fh:
            lines = [json.loads(line) for line in fh if line.strip()]
        if len(lines) != 1 or not lines[0].get("ok"):
            _fail(spec, "cli", f"solve-batch wrote {lines!r:.300}")
        missing = os.path.join(tmp, "no-such-file.json")
        code, _, err = _cli([spec.name, "solve-batch", missing, "--no-progress", "-o", out])
        if code not in (1, 2) or "Traceback" in err:
            _fail(spec, "cli", f"solve-batch on a missing file exits {code}: {err[-300:]}")


def _refused(spec: FamilySpec, what: str, call: Callable[..., Any], *args: Any,
             **kwargs: Any) -> None:  # fmt: skip
    """``call(*args, **kwargs)`` must raise ValueError or TypeError."""
    try:
        call(*args, **kwargs)
    except (ValueError, TypeError):
        return
    except Exception as exc:  # noqa: BLE001 - a refusal of another type is a finding
        _fail(spec, "bad_values", f"{what} raised {type(exc).__name__} ({exc}), not a "
                                  "ValueError or TypeError")  # fmt: skip
    _fail(spec, "bad_values", f"{what} was accepted")


def _check_bad_values(spec: FamilySpec) -> None:
    from ._shared.constraints import invalid_values
    from .batch import solve_many

    for inst in _instances(spec):
        kind, name = type(inst), type(inst).kind
        _refused(spec, f"{name}: method 'no-such-method'", inst.solve, "no-such-method")
        _refused(spec, f"{name}: check_params('no-such-method')", kind.check_params,
                 "no-such-method", {})  # fmt: skip
        _refused(spec, f"{name}: solve_many(method='no-such-method')", solve_many, [inst],
                 "no-such-method", executor="serial")  # fmt: skip
        for method in kind.methods:
            _refused(spec, f"{name}/{method}: check_params(no_such_parameter_=1)",
                     kind.check_params, method, {"no_such_parameter_": 1})  # fmt: skip
            _refused(spec, f"{name}/{method}: solve_many(no_such_parameter_=1)", solve_many,
                     [inst], method, executor="serial", no_such_parameter_=1)  # fmt: skip
            for bad in (-1.0, 0.0, math.nan, math.inf, "1"):
                _refused(spec, f"{name}/{method}: time_limit={bad!r}", inst.solve, method,
                         seed=0, time_limit=bad)  # fmt: skip
            for bad in ("1", 1.5):
                _refused(spec, f"{name}/{method}: seed={bad!r}", inst.solve, method, seed=bad)
            # every value the method's parameter table refuses, refused before any work
            table = getattr(kind, "PARAMS", {}).get(method, {})
            for param, constraints in table.items():
                for bad in invalid_values(constraints):
                    _refused(spec, f"{name}/{method}: check_params({param}={bad!r})",
                             kind.check_params, method, {param: bad})  # fmt: skip


# ------------------------------------------------------------------ generate and line formats


def _api_kwargs(kind: Any, seed: int) -> Dict[str, Dict[str, Any]]:
    """What the API calls ``kind``'s generators with when no option is given, read from the
    declaration alone (the kind's declared defaults, else each signature's), and ``seed``."""
    import inspect

    from ._shared.family_generate import generator_table

    out: Dict[str, Dict[str, Any]] = {}
    for func in kind.generators:
        sig = inspect.signature(func).parameters
        kw: Dict[str, Any] = {}
        for param in generator_table(func):
            empty = inspect.Parameter.empty
            value = kind.defaults.get(param, sig[param].default if param in sig else empty)
            if value is not None and value is not empty:
                kw[param] = value
        if "seed" in sig:
            kw["seed"] = seed
        out[func.__name__] = kw
    return out


def _read_back(spec: FamilySpec, path: str) -> str:
    """Read ``path`` as the spec's format its content says it is; the format's name (an
    empty string: no declared format of the family reads it)."""
    from ._shared.jsonio import load_json
    from ._shared.sniff import sniff
    from .formats import check_document

    found = sniff(path)
    if found.kind == "json":
        fmt = spec.file_format(found.format) if found.format else None
        if fmt is None:
            return ""
        try:
            doc = load_json(path)[0]
            check_document(fmt.name, doc, path)
            kind = next((k for k in spec.kinds if k.format == fmt.name), None)
            if kind is not None:
                kind.from_dict(doc, source=path)
        except (InstanceError, ValueError, TypeError):
            return ""
        return fmt.name
    for fmt in spec.line_formats:
        if found.kind in fmt.detect:
            try:
                fmt.read(path)
            except (InstanceError, ValueError, TypeError):
                continue
            return fmt.name
    return ""


def _check_generate(spec: FamilySpec) -> None:
    from .cli import build_parser

    for kind in spec.generate:
        what = kind.name or spec.name
        argv = [spec.name, "generate", *([kind.name] if len(spec.generate) > 1 else []),
                "--seed", "5"]  # fmt: skip
        written_as = []
        with tempfile.TemporaryDirectory(prefix="coalloc-check-") as tmp:
            # the command picks what it writes by the name's suffix where it can write two
            # formats (the GAP: JSON or OR-Library text); each name it accepts is checked
            for suffix in (".json", ".txt"):
                path = os.path.join(tmp, "cli" + suffix)
                code, _, err = _cli([*argv, "-o", path])
                if code == 2:
                    continue  # not written under this name (a refusal: one line, exit 2)
                if code != 0:
                    _fail(spec, "generate", f"coalloc {' '.join(argv)} -o {path} exits {code}: "
                                            f"{err[-300:]}")  # fmt: skip
                written_as.append(suffix)
                if not _read_back(spec, path):
                    _fail(spec, "generate", f"{what}: the file it writes ({suffix}) is read by "
                                            "no format of the spec")  # fmt: skip
                if len(written_as) > 1:
                    continue
                # the API: the declared generators and writer, in this process (two draws
                # with one seed: equal bytes are also the seed's determinism)
                api = os.path.join(tmp, "api" + suffix)
                kind.write(api, _api_kwargs(kind, 5), build_parser().parse_args([*argv, "-o", api]))
                with open(path, "rb") as f1, open(api, "rb") as f2:
                    cli, by_api = f1.read(), f2.read()
                if cli != by_api:
                    _fail(spec, "generate", f"{what}: the command's file is not the API "
                          "generators' with seed 5 and the declared defaults")  # fmt: skip
            if not written_as:
                _fail(spec, "generate", f"coalloc {' '.join(argv)} writes neither a .json nor "
                                        "a .txt file")  # fmt: skip


def _same_read(fmt: Any, first: str, again: str, obj: Any) -> bool:
    """Whether the file ``again`` (``obj``, read from ``first``, written back) is ``first``:
    the same bytes, or the same ``dump`` where the format declares one."""
    if fmt.dump is None:
        with open(first, "rb") as a, open(again, "rb") as b:
            return a.read() == b.read()

    def dumped(x: Any) -> str:
        return json.dumps(fmt.dump(x), sort_keys=True, default=str)

    return dumped(fmt.read(again)) == dumped(obj) == dumped(fmt.sample())


def _check_line_formats(spec: FamilySpec) -> None:
    from ._shared.formats_line import format_options
    from ._shared.sniff import sniff

    words = format_options()
    for fmt in spec.line_formats:
        if fmt.option not in words or not set(fmt.detect) <= set(words[fmt.option][1]):
            _fail(spec, "line_formats", f"{fmt.name}: --format {fmt.option} is not in the "
                                        "table of words, with its kinds")  # fmt: skip
        if fmt.write is None:
            continue
        suffix = fmt.suffixes[0] if fmt.suffixes else ".txt"
        with tempfile.TemporaryDirectory(prefix="coalloc-check-") as tmp:
            first, again = (os.path.join(tmp, n + suffix) for n in ("sample", "again"))
            fmt.write(first, fmt.sample())
            found = sniff(first)
            if found.kind not in fmt.detect:
                _fail(spec, "line_formats", f"{fmt.name}: its writer's file looks like "
                      f"{found.what}, none of {fmt.detect}")  # fmt: skip
            obj = fmt.read(first)
            fmt.write(again, obj)
            if not _same_read(fmt, first, again, obj):
                _fail(spec, "line_formats", f"{fmt.name}: the sample written, read and "
                                            "written again is another file")  # fmt: skip


_CHECKS: Dict[str, Callable[[FamilySpec], None]] = {
    "round_trip": _check_round_trip,
    "methods_under_budget": _check_methods_under_budget,
    "determinism": _check_determinism,
    "solve_many": _check_solve_many,
    "file_round_trip": _check_file_round_trip,
    "schemas": _check_schemas,
    "cli": _check_cli,
    "bad_values": _check_bad_values,
    "generate": _check_generate,
    "line_formats": _check_line_formats,
}


def family_checks(family: Union[str, FamilySpec]) -> List[Tuple[str, _Check]]:
    """The checks of :func:`check_family`, as ``(name, check)`` pairs (one test each).

    Parameters
    ----------
    family : str or FamilySpec
        A registered family's name, or a spec.

    Returns
    -------
    list of (str, callable)
        Each check takes no argument and raises :class:`AssertionError` (naming the family,
        the check and what broke) when the family fails it.

    Raises
    ------
    ValueError
        An unknown family name.

    Examples
    --------
    >>> from coalloc.testing import family_checks
    >>> dict(family_checks("ctaap"))["bad_values"]()
    """
    spec = _spec(family)
    return [(name, (lambda check=check: check(spec))) for name, check in _CHECKS.items()]


def check_family(family: Union[str, FamilySpec], *,
                 checks: Optional[Sequence[str]] = None) -> None:  # fmt: skip
    """Hold a family to the house's contract: every check of :func:`family_checks`.

    Parameters
    ----------
    family : str or FamilySpec
        A registered family's name, or its spec (a family registered by a test).
    checks : sequence of str, optional
        Run only these checks (names of :func:`family_checks`); None: all of them.

    Returns
    -------
    None
        Every check passed (a failure raises).

    Raises
    ------
    AssertionError
        The first check the family fails, with the family, the check and what broke.
    ValueError
        An unknown family or check name.

    Examples
    --------
    >>> from coalloc.testing import check_family
    >>> check_family("collective", checks=["round_trip", "file_round_trip"])
    """
    pairs = family_checks(family)
    if checks is not None:
        unknown = sorted(set(checks) - set(_CHECKS))
        if unknown:
            raise ValueError(f"checks must be names of {list(_CHECKS)}, got {unknown}")
        pairs = [(name, check) for name, check in pairs if name in set(checks)]
    for _, check in pairs:
        check()
