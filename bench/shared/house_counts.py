"""Floor-plan counts of a source tree (issue 37): modules over 800 lines, functions with 10 or
more parameters and with over 100 lines of body (an ``ast`` walk, every ``def`` counted), and
the imperative parameter checks left beside the constraint tables.

An imperative parameter check (:func:`parameter_checks`) is, inside a function, either a call
of one of the shared value checkers (``number``, ``integer``, ``choice``, ``time_limit``,
``check_backend``, ``fraction``, ``check_exact_options``, or an alias of them) whose first
argument is one of the function's parameters that has a default, or an ``if`` whose body is
one ``raise ValueError/TypeError(...)`` and whose test reads such a parameter. Parameters
with a default are a method's tuning parameters; the problem's arguments (instance data,
validated in the models) have none. The checkers' own module, the constraint tables and the
CLI are left out.

Run: ``python bench/shared/house_counts.py src/coalloc``.
"""

from __future__ import annotations

import ast
import pathlib
import sys


def _parameters(args: ast.arguments) -> int:
    return (len(args.args) + len(args.kwonlyargs) + len(args.posonlyargs)
            + (args.vararg is not None) + (args.kwarg is not None))  # fmt: skip


def _body_lines(node: ast.FunctionDef) -> int:
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring is not body
    return body[-1].end_lineno - body[0].lineno + 1 if body else 0


#: The shared value checkers of ``coalloc._shared.params`` and the names they are imported as.
CHECKERS = {"number", "integer", "choice", "time_limit", "check_backend", "fraction",
            "check_exact_options", "_time_limit", "_limit"}  # fmt: skip
#: Modules that are the checking machinery itself, not a method's imperative checks.
NOT_COUNTED = ("_shared/params.py", "_shared/constraints.py", "cli/")


def _defaulted(fn: ast.FunctionDef) -> set:
    a = fn.args
    pos = a.posonlyargs + a.args
    names = {x.arg for x in pos[len(pos) - len(a.defaults) :]} if a.defaults else set()
    return names | {x.arg for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None}


def parameter_checks(tree: ast.AST) -> list:
    """``(line, function, what)`` of every imperative parameter check of a module."""
    out = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = _defaulted(fn)
        for node in ast.walk(fn):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                if name in CHECKERS and node.args:
                    a0 = node.args[0]
                    if isinstance(a0, ast.Name) and a0.id in params:
                        out.append((node.lineno, fn.name, f"{name}({a0.id})"))
            elif (isinstance(node, ast.If) and len(node.body) == 1
                  and isinstance(node.body[0], ast.Raise)):  # fmt: skip
                exc = node.body[0].exc
                if getattr(getattr(exc, "func", None), "id", None) in ("ValueError", "TypeError"):
                    read = {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)}
                    if read & params:
                        out.append((node.lineno, fn.name, f"if-raise {sorted(read & params)}"))
    return out


def main(root: pathlib.Path) -> None:
    big, wide, long_ = [], 0, 0
    checks: dict = {}
    for path in sorted(root.rglob("*.py")):
        text = path.read_text()
        rel = path.relative_to(root).as_posix()
        if not rel.startswith(NOT_COUNTED):
            found = parameter_checks(ast.parse(text))
            if found:
                part = rel.split("/")[0] if "/" in rel else "(top)"
                checks[part] = checks.get(part, 0) + len(found)
        if text.count("\n") > 800:
            big.append((text.count("\n"), str(path.relative_to(root))))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                wide += _parameters(node.args) >= 10
                long_ += _body_lines(node) > 100
    print("modules over 800 lines:", sorted(big, reverse=True))
    print("functions with >= 10 parameters:", wide)
    print("functions with > 100 lines of body:", long_)
    print("imperative parameter checks:", sum(checks.values()), dict(sorted(checks.items())))


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]))
