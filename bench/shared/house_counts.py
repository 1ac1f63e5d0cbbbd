"""Floor-plan counts of a source tree (issue 37): modules over 800 lines, functions with 10 or
more parameters and with over 100 lines of body (an ``ast`` walk, every ``def`` counted).

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


def main(root: pathlib.Path) -> None:
    big, wide, long_ = [], 0, 0
    for path in sorted(root.rglob("*.py")):
        text = path.read_text()
        if text.count("\n") > 800:
            big.append((text.count("\n"), str(path.relative_to(root))))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                wide += _parameters(node.args) >= 10
                long_ += _body_lines(node) > 100
    print("modules over 800 lines:", sorted(big, reverse=True))
    print("functions with >= 10 parameters:", wide)
    print("functions with > 100 lines of body:", long_)


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]))
