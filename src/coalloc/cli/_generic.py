"""The command-line group of a family without a CLI module of its own, built from the protocol.

A registered family whose :class:`~coalloc._shared.family.FamilySpec` names no ``cli``
module gets ``coalloc <family> solve FILE`` (solve one instance file, print the result and
its verification as one JSON line) and ``coalloc <family> solve-batch FILE... -o OUT`` (the
batch runner every family shares), both from its ``FamilyInstance`` kinds alone, and, when
its spec declares what ``generate`` writes (``spec.generate``), ``coalloc <family> generate
[KIND] [options] -o FILE`` with the options of its generators (:mod:`coalloc.cli._generate`).
"""

from __future__ import annotations

import argparse
import json
from typing import Any, List

from .._shared.family import FamilySpec
from .._shared.result import jsonable
from . import _common as common
from .explain import add_explain_options, explain_no, explanation_json

__all__ = ["GenericGroup", "kind_methods"]


def kind_methods(spec: FamilySpec) -> List[str]:
    """Every method name of the family's problem kinds, in order, without repeats."""
    out: List[str] = []
    for kind in spec.kinds:
        out.extend(m for m in kind.methods if m not in out)
    return out


class GenericGroup:
    """``add_commands(sub)`` of a family's generic group (what ``cli.GROUPS`` holds)."""

    def __init__(self, spec: FamilySpec) -> None:
        self.spec = spec

    def _cmd_solve(self, args: argparse.Namespace) -> int:
        from ..batch import read_problem

        problem = read_problem(args.file)
        if problem.family != self.spec.name:
            raise ValueError(f"{args.file}: a {problem.family} instance, not {self.spec.name}")
        params = common.solver_params(args)
        problem.check_params(args.method, params)
        result = problem.solve(args.method, seed=args.seed, **params)
        report = problem.verify(result)
        ok = bool(result.has_solution and report.ok)
        why = explain_no(args, problem, result)  # --explain: a "no" carries its explanation
        line = explanation_json(why, {"file": args.file, "ok": ok, **result.to_dict(),
                                      "verify": report.to_dict()})  # fmt: skip
        print(json.dumps(jsonable(line)))
        return 0 if ok else 1

    def _cmd_solve_batch(self, args: argparse.Namespace) -> int:
        return common.run_batch(args, self.spec.name)

    def add_commands(self, sub: Any) -> None:
        """Add ``solve``, ``solve-batch`` (and ``generate``, if declared) for the family to
        ``sub``."""
        methods = kind_methods(self.spec)
        p = sub.add_parser("solve", help="solve one instance file; print result and check (JSON)")
        formats = ", ".join(k.format for k in self.spec.kinds)
        p.add_argument("file", help=f"instance file ({formats})")
        p.add_argument("--method", default=None, choices=methods,
                       help="method (default: the problem kind's default)")  # fmt: skip
        common.add_seed(p)
        common.add_params(p, "KEY=VALUE")
        add_explain_options(p)
        p.set_defaults(func=self._cmd_solve)

        p = sub.add_parser("solve-batch", help="solve many instance files in parallel")
        common.add_batch_options(p, methods, None, "KEY=VALUE")
        p.set_defaults(func=self._cmd_solve_batch)

        if self.spec.generate:
            from ._generate import add_generate, run_generate

            p = add_generate(sub, self.spec.name, help="write a generated instance file")
            common.add_output(p, "file to write", required=True)
            p.set_defaults(func=run_generate)
