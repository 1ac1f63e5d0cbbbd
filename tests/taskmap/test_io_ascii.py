"""Issue 39: the METIS and Scotch readers take ASCII digits and ASCII white space only
(Python's ``int('٣')`` is 3, ``'1\u20032'.split()`` two tokens: neither is the format)."""

from __future__ import annotations

import io

import pytest

from coalloc._shared.jsonio import InstanceError
from coalloc.taskmap.graphfiles import read_metis_graph, read_scotch_graph

METIS = "3 3\n2 3\n1 3\n1 2\n"  # a triangle
SCOTCH = "0\n3 6\n0 000\n2 1 2\n2 0 2\n2 0 1\n"


@pytest.mark.parametrize("digit", ["\u0663", "\uff13", "\u09e9", "\U0001d7db"])  # 3s
@pytest.mark.parametrize("reader, text", [(read_metis_graph, METIS), (read_scotch_graph, SCOTCH)])
def test_unicode_digits_are_refused(reader, text, digit):
    assert reader(io.StringIO(text)).n == 3  # the ASCII file is read
    bad = text.replace("3", digit, 1)
    with pytest.raises(InstanceError, match="not an integer"):
        reader(io.StringIO(bad))


@pytest.mark.parametrize("space", ["\u2003", "\u00a0", "\u3000"])
@pytest.mark.parametrize("reader, text", [(read_metis_graph, METIS), (read_scotch_graph, SCOTCH)])
def test_unicode_spaces_do_not_split_tokens(reader, text, space):
    lines = text.splitlines(keepends=True)
    lines[1] = lines[1].replace(" ", space, 1)
    with pytest.raises(InstanceError):
        reader(io.StringIO("".join(lines)))
