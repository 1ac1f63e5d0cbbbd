"""Issue 39: a ``.top`` or ``.ptop`` with a NUL byte (or another control character) in a
name is refused with the file, line and column, never read as a type or node name."""

from __future__ import annotations

import pytest

from coalloc._shared.jsonio import InstanceError
from coalloc.testbed.io import read_ptop, read_top

TOP = "node a pc\nnode b pc\nlink l a b 100000 0 0\n"
PTOP = "node sw switch:1 *lan:*\nnode pc1 pc:1\nlink l1 pc1 sw 100000 0 0\n"


@pytest.mark.parametrize("char", ["\0", "\x01", "\x1b", "\x7f"])
@pytest.mark.parametrize("reader, text, kind", [(read_top, TOP, "top"), (read_ptop, PTOP, "ptop")])
def test_a_control_character_in_a_name_is_refused(tmp_path, reader, text, kind, char):
    path = tmp_path / f"x.{kind}"
    path.write_text(text, encoding="utf-8")
    reader(path)  # the clean file is read
    bad = (
        text.replace("pc", f"p{char}c", 1)
        if kind == "top"
        else text.replace("pc1 pc:1", f"pc1 p{char}c:1")
    )
    path.write_text(bad, encoding="utf-8")
    with pytest.raises(InstanceError, match=rf"^{path}:\d: expected printable text") as info:
        reader(path)
    assert "\n" not in str(info.value)


def test_the_nul_names_its_line_and_column(tmp_path):
    path = tmp_path / "x.top"
    path.write_text("node a pc\nnode b p\0c\n", encoding="utf-8")
    with pytest.raises(InstanceError, match=r":2: expected printable text, not a NUL byte "
                       r"\(column 9\)"):  # fmt: skip
        read_top(path)
