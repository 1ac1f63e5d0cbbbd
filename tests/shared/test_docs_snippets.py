"""Every ```python block of README.md and docs/*.md runs as written (issue 23 item 6).

Each block runs in a fresh namespace inside an empty temporary folder, so a block that reads
a file must ship it with the package or write it first. A block written as a doctest
(``>>>`` prompts, the pages Sphinx renders) is run by :mod:`doctest` and its printed
outputs must match. Blocks are independent: none may rely on a previous block's names.
"""

from __future__ import annotations

import doctest
import re
from pathlib import Path
from typing import List, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)

#: Blocks that take over ~1.5 s (marked slow), by ``page:first line of code``.
SLOW = {
    "README.md:import coalloc",  # the batch of 300 Fig. 2 instances
}

def _blocks() -> List[Tuple[str, int, str]]:
    out = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            line = text[: match.start()].count("\n") + 2  # the block's first line of code
            out.append((page.name, line, match.group(1)))
    return out


BLOCKS = _blocks()


def _key(page: str, code: str) -> str:
    first = next((ln.strip() for ln in code.splitlines() if ln.strip()), "")
    return f"{page}:{first}"


def _params():
    for page, line, code in BLOCKS:
        key = _key(page, code)
        marks = []
        if key in SLOW:
            marks.append(pytest.mark.slow)
        yield pytest.param(page, line, code, id=f"{page}:{line}", marks=marks)


def test_the_pages_have_python_blocks():
    assert {page for page, _, _ in BLOCKS} >= {"README.md", "index.md", "ctaap.md"}
    assert len(BLOCKS) >= 15


def test_every_marked_block_exists():
    keys = {_key(page, code) for page, _, code in BLOCKS}
    assert SLOW <= keys, SLOW - keys


@pytest.mark.parametrize("page, line, code", list(_params()))
def test_block_runs(page, line, code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    name = f"{page}:{line}"
    if code.lstrip().startswith(">>>"):
        test = doctest.DocTestParser().get_doctest(code, {}, name, name, line)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        runner.run(test)
        assert runner.failures == 0, f"{name}: {runner.failures} doctest example(s) failed"
    else:
        exec(compile(code, name, "exec"), {"__name__": "__main__"})
