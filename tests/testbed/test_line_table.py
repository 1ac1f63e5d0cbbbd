"""The ``.top``/``.ptop`` readers are driven by one table of line kinds (issue 23 item 4).

Each row names a keyword, the file kind that allows it, its usage (the refusal of a line
with too few or too many tokens), its leading fields and its handler. These tests hold the
readers to the table: every keyword of a file is read, every other keyword is refused with
the table's list, and a line one token short of a row's minimum gets that row's usage.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc import testbed as tb
from coalloc._shared.jsonio import InstanceError
from coalloc.testbed.io import grammar

PARSERS = {"ptop": tb.parse_ptop, "top": tb.parse_top}
#: The shortest valid line of each row (after the nodes it may need), by (file, keyword).
GOOD = {
    ("ptop", "node"): "node p pc:1",
    ("ptop", "link"): "link l p sw 100 2",
    ("ptop", "set-type-limit"): "set-type-limit pc 2",
    ("ptop", "policy"): "policy desire d disallow",
    ("top", "node"): "node v pc",
    ("top", "link"): "link l v w 100 0 0",
    ("top", "make-vclass"): "make-vclass c 0.5 pc",
    ("top", "fix-node"): "fix-node v p",
    ("top", "node-hint"): "node-hint v p",
}
PRELUDE = {"ptop": "node sw switch:1\nnode p0 pc:1\n", "top": "node w pc\n"}


def _rows(file):
    return [k for k in grammar._LINE_KINDS if k.file == file]


def test_every_row_has_a_sample_and_each_sample_reads():
    assert {(k.file, k.keyword) for k in grammar._LINE_KINDS} == set(GOOD)
    for (file, kw), line in GOOD.items():
        text = PRELUDE[file] + ("node p pc:1\n" if kw == "link" and file == "ptop" else "")
        text += ("node v pc\n" if file == "top" and kw != "node" else "") + line + "\n"
        PARSERS[file](text)  # no error


@pytest.mark.parametrize("file", ["ptop", "top"])
def test_unknown_keyword_lists_the_table(file):
    words = [k.keyword for k in _rows(file)]
    other = [k.keyword for k in grammar._LINE_KINDS if k.keyword not in words]
    expected = f"a line starting with {', '.join(words[:-1])} or {words[-1]}"
    for kw in other + ["nodes", "Link"]:
        with pytest.raises(InstanceError) as err:
            PARSERS[file](f"{kw} x y z w v u t\n")
        assert f"<{file}>:1: expected {expected};" in str(err.value)


@pytest.mark.parametrize("kind", grammar._LINE_KINDS, ids=lambda k: f"{k.file}-{k.keyword}")
def test_too_few_tokens_gives_the_usage(kind):
    tokens = GOOD[(kind.file, kind.keyword)].split()
    assert len(tokens) == kind.min_tokens  # the samples are the shortest lines Emulab reads
    short = " ".join(tokens[: kind.min_tokens - 1])
    with pytest.raises(InstanceError) as err:
        PARSERS[kind.file](PRELUDE[kind.file] + short + "\n")
    lineno = PRELUDE[kind.file].count("\n") + 1
    assert str(err.value) == f"<{kind.file}>:{lineno}: expected {kind.usage}; got {short!r}"


@pytest.mark.parametrize("kind", [k for k in grammar._LINE_KINDS if k.max_tokens is not None],
                         ids=lambda k: f"{k.file}-{k.keyword}")  # fmt: skip
def test_too_many_tokens_gives_the_usage(kind):
    long = GOOD[(kind.file, kind.keyword)] + " extra"
    text = PRELUDE[kind.file] + ("node v pc\n" if kind.file == "top" else "") + long + "\n"
    with pytest.raises(InstanceError) as err:
        PARSERS[kind.file](text)
    assert f"expected {kind.usage}; got {long!r}" in str(err.value)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(sorted(GOOD)), min_size=1, max_size=6))
def test_reader_round_trips_any_mix_of_rows(keys):
    """Any sequence of valid rows reads, writes back and reads to an equal topology (the
    writer's format is one the table accepts)."""
    for file in ("ptop", "top"):
        lines = [PRELUDE[file].strip(), "node p pc:1" if file == "ptop" else "node v pc"]
        lines += [GOOD[k] for k in keys if k[0] == file and k[1] != "node"]
        # (a file's link lines take one form: the sample 'BW MULTIPLICITY' or the later one)
        extra = "link m p0 sw 1000 1" if ("ptop", "link") in keys else "link m p0 sw 1000 0 0 e"
        lines += ["policy desire e limit 2.5", extra] * (file == "ptop")
        parse = PARSERS[file]
        first = parse("\n".join(lines) + "\n")
        fmt = tb.format_ptop if file == "ptop" else tb.format_top
        again = parse(fmt(first))
        to_dict = tb.ptop_to_dict if file == "ptop" else tb.top_to_dict
        assert to_dict(again) == to_dict(first)
