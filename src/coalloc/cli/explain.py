"""``coalloc <family> explain FILES``: why a request cannot be met in full, in one sentence.

Every family group gets the command (a family whose CLI defines its own ``explain`` keeps
it). Each file is an instance file of the family (its JSON ``"format"``; for the testbed,
also a ``.top`` and a ``.ptop`` given together); the command prints, per instance, the
family's explanation (:meth:`coalloc.FamilyInstance.explain`): the minimal conflict, how it
was proved and the nearest request that fits, or that the whole request can be met.
``--json`` prints one JSON object per instance instead (the explanation's ``to_dict()``).

The solve commands of every family take ``--explain`` through :func:`add_explain_options`:
when their answer is a "no" (no mapping, no admissible start, tasks left out, load that
waits, no assignment of every item) :func:`explain_no` computes the family's explanation,
:func:`explanation_lines` prints it after the answer (one sentence per conflict) and the
``--json`` output carries it under ``explanation`` (:func:`explanation_json`).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Dict, List, Optional, Tuple

from .._shared.constraints import EXPLAIN_TIME
from .._shared.jsonio import InstanceError
from ._common import add_output_option, add_table_option

__all__ = [
    "add_command",
    "add_explain_options",
    "explain_no",
    "explanation_lines",
    "explanation_json",
]

#: What ``--explain`` says when the budget ran out before a conflict was proved.
UNDECIDED = (
    "no conflict proved within {s:g} s (--explain-time): the request may fit with another "
    "method or a longer --time-limit, or its conflict needs a longer search"
)


def add_explain_options(p: argparse.ArgumentParser, also: str = "") -> None:
    """Add ``--explain`` and ``--explain-time S`` to a family's solve command.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The solve command's parser.
    also : str, optional
        What else ``--explain`` prints for this command (added to its help).

    Examples
    --------
    >>> parser = argparse.ArgumentParser()
    >>> add_explain_options(parser)
    >>> args = parser.parse_args(["--explain", "--explain-time", "2"])
    >>> args.explain, args.explain_time
    (True, 2.0)
    """
    p.add_argument(
        "--explain",
        action="store_true",
        help="when the answer is a 'no', say why: a minimal conflict, how it was proved and "
        "the nearest request that fits (with --json: under 'explanation')" + also,
    )
    add_table_option(
        p,
        "--explain-time",
        EXPLAIN_TIME,
        name="time_limit",
        default=10.0,
        metavar="S",
        help="seconds for --explain's explanation (default 10)",
    )


def explain_no(args: argparse.Namespace, instance: Any, result: Any) -> Optional[Dict[str, Any]]:
    """The explanation ``--explain`` asks for, when ``result`` is a "no" of ``instance``.

    Parameters
    ----------
    args : argparse.Namespace
        The command's arguments (``explain``, ``explain_time``).
    instance : FamilyInstance
        The solved instance (its ``explain`` and ``_meets_all``).
    result : Result
        The command's result; the explanation found is attached to it
        (``result.explanation``, in its ``to_dict()``).

    Returns
    -------
    dict or None
        None when ``--explain`` was not given, the family has no explainer or the result
        meets the whole request;
        otherwise ``{"explanation": Explanation or None, "seconds": budget}`` (None: no
        conflict proved in the budget).
    """
    if not getattr(args, "explain", False) or type(instance)._explain_function is None:
        return None  # not asked, or a family without a "why not" (it refuses nothing)
    if instance._meets_all(result):
        return None
    found = instance.explain(result, time_limit=args.explain_time)
    return {"explanation": found, "seconds": float(args.explain_time)}


def explanation_lines(asked: Optional[Dict[str, Any]], prefix: str = "  why not: ") -> List[str]:
    """The lines ``--explain`` prints after the answer: one sentence per conflict.

    Parameters
    ----------
    asked : dict or None
        What :func:`explain_no` returned.
    prefix : str, default "  why not: "
        Put before the sentence (``"# why not: "`` keeps a comment of assign's format).

    Returns
    -------
    list of str
        No line when nothing was asked or there is nothing to explain.

    Examples
    --------
    >>> explanation_lines({"explanation": None, "seconds": 2.0})[0][:40]
    '  why not: no conflict proved within 2 s'
    """
    if asked is None:
        return []
    found = asked["explanation"]
    if found is None:
        return [prefix + UNDECIDED.format(s=asked["seconds"])]
    return [prefix + found.sentence]


def explanation_json(asked: Optional[Dict[str, Any]], doc: Dict[str, Any]) -> Dict[str, Any]:
    """``doc`` with ``explanation`` set when ``--explain`` was asked for a "no".

    Parameters
    ----------
    asked : dict or None
        What :func:`explain_no` returned.
    doc : dict
        The command's JSON document (modified and returned).

    Returns
    -------
    dict
        ``doc``; its ``explanation`` is the explanation's ``to_dict()``, or null when no
        conflict was proved in the budget.
    """
    if asked is not None:
        found = asked["explanation"]
        doc["explanation"] = None if found is None else found.to_dict()
    return doc


def _instances(family: str, files: List[str]) -> List[Tuple[str, Any]]:
    """(name, instance) per file, read by the file's format."""
    from .._shared.sniff import sniff
    from ..batch.worker import read_problem

    if family == "testbed" and len(files) == 2 and all(sniff(f).kind != "json" for f in files):
        from .. import testbed  # TOP PTOP, each recognised by content (a swap named)

        top, ptop = testbed.io.read_topologies(files[0], files[1], command="testbed explain")
        return [(f"{files[0]} onto {files[1]}", testbed.Instance(top, ptop))]
    out = []
    for path in files:
        if family == "loadshare" and sniff(path).kind == "orlib-gap":
            from .. import loadshare  # OR-Library text: one instance per FILE#k

            instances, _ = loadshare.read_gap_file(path, command="loadshare explain")
            for k, gap in enumerate(instances, start=1):
                out.append((f"{path}#{k}", loadshare.GapProblem(gap)))
            continue
        inst = read_problem(path)
        if inst.family != family:
            raise InstanceError(f"{path}: an instance of {inst.family!r}, not of {family!r}")
        out.append((path, inst))
    return out


#: The families whose ``explain --result`` says what binds a saved result.
BINDS = ("ctaap", "taskmap")


def _binds(family: str, inst: Any, path: str) -> Dict[str, Any]:
    """What binds the saved result ``path`` of ``inst`` (CTAAP: the clusters and links that
    cap the allocation; task mapping: the bottleneck and the witness of the bound)."""
    from types import SimpleNamespace

    if family == "ctaap":
        from ..ctaap.explain import explain_binding
        from ..ctaap.io import read_result

        data = read_result(path)
        saved = SimpleNamespace(assignment=data["assignment"], status=data.get("status"),
                                bound=data.get("bound"))  # fmt: skip
        return explain_binding(inst.request, inst.offer, saved)
    from ..taskmap.explain import explain_result
    from ..taskmap.io import read_mapping_result

    data = read_mapping_result(path)
    saved = SimpleNamespace(mapping=data["mapping"], bound=data.get("bound"),
                            method=data.get("method", "saved"))  # fmt: skip
    return explain_result(inst.task_graph, inst.resource_graph, saved)


#: The families whose ``explain --plot`` draws the conflict.
PICTURES = ("collective", "testbed")


def _picture(family: str, inst: Any, found: Any, path: str) -> None:
    """Draw ``found`` on the family's picture (:func:`plot_explanation`), saved at ``path``
    through the package's guarded writer."""
    if family == "collective":
        from ..collective.plot import plot_explanation

        fig = plot_explanation(inst.request, inst.pool, found, path=path)
    else:
        from ..testbed.plot import plot_explanation

        fig = plot_explanation(inst.top, inst.ptop, found, path=path)
    from .._shared.plotting import import_pyplot

    import_pyplot().close(fig)


def _run(args: argparse.Namespace) -> int:
    instances = _instances(args.family, args.files)
    if args.plot is not None:
        from .._shared.jsonio import check_output

        if len(instances) != 1:
            raise ValueError(f"--plot goes with one instance, got {len(instances)}")
        check_output(args.plot, args.files, option="--plot")  # before the explanation's work
    if args.result is not None:
        if args.family not in BINDS:
            raise ValueError(f"--result: what binds a saved result is explained for "
                             f"{' and '.join(BINDS)}, not {args.family}")  # fmt: skip
        if len(instances) != 1:
            raise ValueError(f"--result goes with one instance file, got {len(instances)}")
    for name, inst in instances:
        found = inst.explain(time_limit=args.time_limit)
        binds = None if args.result is None else _binds(args.family, inst, args.result)
        if args.json:
            doc = {
                "file": name,
                "kind": inst.kind,
                "explanation": None if found is None else found.to_dict(),
            }
            if binds is not None:
                doc["binds"] = binds
            print(json.dumps(doc))
            continue
        if binds is not None:
            print(f"{args.result}: what binds: {binds['sentence']}")
        if args.plot is not None and found is not None:
            _picture(args.family, inst, found, args.plot)
            if not args.json:
                print(f"picture written to {args.plot}")
        if binds is not None and found is None:
            continue
        elif found is None:
            print(f"{name}: nothing to explain: the whole request can be met (or the "
                  f"family refuses nothing).")  # fmt: skip
        else:
            print(f"{name}: {found.sentence}")
    sys.stdout.flush()
    return 0


def add_command(subparsers: Any, family: str) -> None:
    """Add ``explain`` to a family's command group.

    Parameters
    ----------
    subparsers : argparse subparsers action
        The family group's subcommands.
    family : str
        The family's name.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="coalloc collective")
    >>> add_command(parser.add_subparsers(dest="subcommand"), "collective")
    >>> parser.parse_args(["explain", "x.json"]).files
    ['x.json']
    """
    p = subparsers.add_parser(
        "explain",
        help="why a request cannot be met in full: a minimal conflict and the "
        "nearest request that fits",
        description="Why each instance's request cannot be met in full: the smallest part of "
        "it that conflicts with the resources, how that was proved, and the nearest request "
        "that fits (each fix solved before it is offered).",
    )
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="instance files of the family (testbed: also TOP PTOP)",
    )
    add_table_option(
        p,
        "--time-limit",
        EXPLAIN_TIME,
        default=10.0,
        metavar="S",
        help="seconds per explanation (default 10)",
    )  # the explainers' table
    p.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per instance (the explanation's fields)",
    )
    if family in BINDS:
        p.add_argument(
            "--result",
            metavar="RESULT",
            default=None,
            help="a saved result of the instance (the solve command's --output): also say "
            "what binds it (CTAAP: the clusters and links that cap the allocation; task "
            "mapping: the bottleneck and the witness of the lower bound)",
        )
    if family in PICTURES:
        add_output_option(
            p,
            "--plot",
            metavar="FILE.png",
            help="also draw the conflict (collective: the window, the nodes and their "
            "blocked slots; testbed: the conflict's nodes and the PCs they can use); the "
            "suffix picks the format (needs the [plot] extra)",
        )
    p.set_defaults(func=_run, family=family, result=None, plot=None)
