"""The build finds a new family's kernels by glob (issue 37, the kernels' place).

``setup.py`` builds every ``src/_core/<family>/*.pyx`` and ``*.cpp`` into
``coalloc.<family>.<stem>`` with no list of families or modules written by hand
(``docs/architecture.md``, "The kernels' place"). Here its discovery code (everything before
the ``setup()`` call that compiles) runs in a scratch tree holding a sixth family's sources,
with recording stand-ins for the extension classes: the sixth family's modules are found,
named and given their folder's include path, without an edit to ``setup.py``.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class _Recorded:
    def __init__(self, name, sources, **kwargs):
        self.name, self.sources, self.kwargs = name, sources, kwargs


def _discovered(tree_root: Path) -> dict:
    """``{module name: _Recorded}`` of what setup.py would build in ``tree_root``."""
    source = (ROOT / "setup.py").read_text()
    body = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and node.module.split(".")[0] in (
                "Cython", "pybind11", "setuptools"):  # fmt: skip
            continue
        body.append(node)
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "cpp_ext"
                                                for t in node.targets):  # fmt: skip
            break
    else:
        raise AssertionError("setup.py no longer assigns cpp_ext: update this test")
    names = {"Extension": _Recorded, "Pybind11Extension": _Recorded, "build_ext": object,
             "cythonize": None, "setup": None, "__name__": "setup_discovery"}  # fmt: skip
    here = os.getcwd()
    os.chdir(tree_root)
    try:
        exec(compile(ast.Module(body=body, type_ignores=[]), "setup.py", "exec"), names)
    finally:
        os.chdir(here)
    return {e.name: e for e in (*names["cython_ext"], *names["cpp_ext"])}


def _touch(path: Path, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_build_finds_a_sixth_familys_kernels_by_glob(tmp_path, monkeypatch):
    monkeypatch.delenv("COALLOC_BUILD_ONLY", raising=False)
    _touch(tmp_path / "src/_core/include/coalloc/common/rng.hpp")
    _touch(tmp_path / "src/_core/include/coalloc/sixth/k.hpp")
    _touch(tmp_path / "src/_core/ctaap/_cleanup.pyx")
    _touch(tmp_path / "src/_core/sixth/_kernel.pyx")
    _touch(tmp_path / "src/_core/sixth/_kernel.pxd")
    _touch(tmp_path / "src/_core/sixth/_fast.cpp")
    found = _discovered(tmp_path)
    assert set(found) == {"coalloc.ctaap._cleanup", "coalloc.sixth._kernel",
                          "coalloc.sixth._fast"}  # fmt: skip
    kernel = found["coalloc.sixth._kernel"]
    assert kernel.sources == ["src/_core/sixth/_kernel.pyx"]
    assert "src/_core/sixth" in kernel.kwargs["include_dirs"]
    assert "src/_core/sixth/_kernel.pxd" in kernel.kwargs["depends"]
    assert "src/_core/include/coalloc/sixth/k.hpp" in kernel.kwargs["depends"]
    assert found["coalloc.sixth._fast"].sources == ["src/_core/sixth/_fast.cpp"]


def test_the_discovery_of_this_checkout_is_every_core_source():
    """The same code on the real tree: one module per ``src/_core/<family>/`` source."""
    core = ROOT / "src" / "_core"
    want = {f"coalloc.{p.parent.name}.{p.stem}"
            for p in [*core.glob("*/*.pyx"), *core.glob("*/*.cpp")]
            if p.parent.name != "include"}  # fmt: skip
    assert want and set(_discovered(ROOT)) == want
