"""No module of coalloc writes a file except through the one writer.

Every module under ``src/coalloc`` is parsed; a call that writes a file (``open`` in a
writing mode, ``os.open`` with a writing flag, ``Path.write_text``/``write_bytes``,
``json.dump``, ``pickle.dump``, ``np.save``, ``savefig``, ``tofile``, ``to_csv``,
``os.replace``/``rename``/``link``, ``shutil`` copies, ``tempfile`` files) must sit in one of
the places :data:`ALLOWED` names, each with its reason. A family's ``write_*`` function
writes through :func:`coalloc._shared.jsonio.dump_json`, ``write_text`` or
``atomic_output``.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator, Optional, Tuple

SRC = Path(__file__).resolve().parents[2] / "src" / "coalloc"

#: (module, function or None for the whole module) -> why it may write directly.
ALLOWED = {
    ("_shared/jsonio.py", "_named_copy"): "the writer: its hidden temporary file",
    ("_shared/jsonio.py", "_copy"): "the writer: the nameless file copied into the hidden one",
    ("_shared/jsonio.py", "_publish"): "the writer: link and rename into place",
    ("_shared/jsonio.py", "atomic_output"): "the writer: its nameless temporary file, "
    "and devices or pipes (no rename possible) opened in place",
    ("_shared/plotting.py", "save_figure"): "savefig into the writer's file object",
    ("collective/io/snapshot.py", "write_pool_snapshot"): "np.savez into the writer's file object",
    ("_shared/milp/cbc.py", None): "scratch files of CBC (model, solution, log) inside its "
    "own TemporaryDirectory; never a user's file",
    ("_shared/milp/highs.py", None): "os.devnull (HiGHS's banner) and the pipes to and from "
    "the HiGHS child (pickle); no file",
    ("_shared/milp/_highs_child.py", None): "the HiGHS child's pipe to its parent (pickle over "
    "an inherited descriptor); no file",
    ("batch/shipping.py", "spill"): "the arrays of a chunk or of its results, as scratch "
    "files inside the batch's own temporary folder (read and removed by the other side); "
    "never a user's file",
    ("batch/shipping.py", "_in_file"): "a Dask chunk's pickle as a scratch file inside the "
    "batch's own temporary folder, shared with local workers (read and removed by the "
    "worker); never a user's file",
    ("batch/shipping.py", "shared_folder"): "an empty probe file inside the batch's own "
    "temporary folder (do the local Dask workers see it?), removed at once",
    ("cli/__init__.py", "_broken_pipe"): "standard output pointed at os.devnull after its "
    "reader went away",
}

_MODULE_CALLS = {
    "os": {"replace", "rename", "renames", "link", "symlink", "truncate", "fdopen"},
    "shutil": {"copy", "copy2", "copyfile", "copyfileobj", "copytree", "move"},
    "json": {"dump"},
    "pickle": {"dump"},
    "np": {"save", "savez", "savez_compressed", "savetxt"},
    "numpy": {"save", "savez", "savez_compressed", "savetxt"},
    "tempfile": {"mkstemp", "NamedTemporaryFile", "TemporaryFile", "SpooledTemporaryFile"},
}
_METHOD_CALLS = {"write_text", "write_bytes", "savefig", "tofile", "to_csv", "to_parquet"}
_WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND", "O_TMPFILE"}


def _mode_writes(call: ast.Call, position: int) -> bool:
    mode = call.args[position] if len(call.args) > position else None
    for kw in call.keywords:
        if kw.arg == "mode":
            mode = kw.value
    if mode is None:
        return False
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return any(c in mode.value for c in "wax+")
    return True  # a mode computed at run time: it may write


def writes(call: ast.Call) -> Optional[str]:
    """What the call writes, as text, or None when it writes no file."""
    f = call.func
    if isinstance(f, ast.Name) and f.id == "open" and _mode_writes(call, 1):
        return "open(..., writing mode)"
    if isinstance(f, ast.Attribute):
        owner = f.value.id if isinstance(f.value, ast.Name) else None
        if f.attr == "open" and owner == "os":
            flags = {n.attr for n in ast.walk(call) if isinstance(n, ast.Attribute)}
            return "os.open(writing flags)" if flags & _WRITE_FLAGS else None
        if f.attr == "open" and owner not in ("os", "io") and _mode_writes(call, 0):
            return ".open(writing mode)"
        if owner == "io" and f.attr == "open" and _mode_writes(call, 1):
            return "io.open(..., writing mode)"
        if owner in _MODULE_CALLS and f.attr in _MODULE_CALLS[owner]:
            return f"{owner}.{f.attr}"
        if f.attr in _METHOD_CALLS:
            return f".{f.attr}"
    return None


def scan(tree: ast.AST) -> Iterator[Tuple[Optional[str], int, str]]:
    """``(enclosing top-level or nested function name, line, what)`` of every writing call."""

    def visit(node: ast.AST, func: Optional[str]) -> Iterator[tuple]:
        for child in ast.iter_child_nodes(node):
            name = func
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = child.name
            if isinstance(child, ast.Call):
                what = writes(child)
                if what:
                    yield name, child.lineno, what
            yield from visit(child, name)

    yield from visit(tree, None)


def _all_writes() -> list:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for func, line, what in scan(ast.parse(path.read_text(encoding="utf-8"))):
            found.append((rel, func, line, what))
    return found


def test_every_file_write_goes_through_the_writer():
    stray = [
        f"{rel}:{line} in {func or '<module>'}: {what}"
        for rel, func, line, what in _all_writes()
        if (rel, func) not in ALLOWED and (rel, None) not in ALLOWED
    ]
    assert not stray, (
        "files written outside the one writer (use coalloc._shared.jsonio.atomic_output, "
        f"write_text or dump_json): {stray}"
    )


def test_every_allowed_place_still_writes():
    used = {(rel, func) for rel, func, _, _ in _all_writes()}
    used |= {(rel, None) for rel, _ in used}
    stale = sorted(str(key) for key in ALLOWED if key not in used)
    assert not stale, f"ALLOWED names places that write nothing any more: {stale}"


def test_the_scanner_sees_writes_and_only_writes():
    code = """
def bad(p, fig, a, obj, fh):
    open(p, "w")
    open(p, mode="ab")
    Path(p).write_text("x")
    fig.savefig(p)
    json.dump(obj, fh)
    np.save(p, a)
    os.replace(p, p + "~")
    os.open(p, os.O_WRONLY | os.O_CREAT)
    Path(p).open("w")

def good(p, s):
    open(p)
    open(p, "rb")
    s.replace("a", "b")
    os.open(p, os.O_RDONLY)
    json.dumps({})
    Path(p).open()
"""
    hits = list(scan(ast.parse(code)))
    assert {f for f, _, _ in hits} == {"bad"}
    assert len(hits) == 9
