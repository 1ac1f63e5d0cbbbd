"""Mutated .top/.ptop files: the readers either parse them or raise one InstanceError."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc import InstanceError
from coalloc import testbed as tb

from .test_io import PTOP, TOP

TOKENS = ["node", "link", "*", "-", ":", "?+", "pc:1", "x:y", "1e999", "nan", "-1", "0",
          "ethernet", "emulated", "trivial_ok", "fix-node", "make-vclass", "lan", "*lan:*",
          "a", "pc1", "sw0", "#", "set-type-limit", "policy", "desire", "limit", ""]


@st.composite
def mutated(draw, text):
    lines = text.splitlines()
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(lines) - 1))
        words = lines[i].split()
        op = draw(st.sampled_from(["drop", "swap", "insert", "dupline", "delline"]))
        if op == "drop" and words:
            words.pop(draw(st.integers(0, len(words) - 1)))
        elif op == "swap" and words:
            words[draw(st.integers(0, len(words) - 1))] = draw(st.sampled_from(TOKENS))
        elif op == "insert":
            words.insert(draw(st.integers(0, len(words))), draw(st.sampled_from(TOKENS)))
        elif op == "dupline":
            lines.insert(i, lines[i])
        elif op == "delline" and len(lines) > 1:
            lines.pop(i)
            continue
        lines[i] = " ".join(words)
    return "\n".join(lines)


@settings(max_examples=150, deadline=None)
@given(mutated(PTOP), mutated(TOP))
def test_mutated_files_parse_or_raise_instance_error(ptop_text, top_text):
    parsed = []
    for parse, text in ((tb.parse_ptop, ptop_text), (tb.parse_top, top_text)):
        try:
            parsed.append(parse(text, "f"))
        except InstanceError as exc:
            assert str(exc).startswith("f")
            parsed.append(None)
    if all(p is not None for p in parsed):
        try:
            r = tb.assign(parsed[1], parsed[0])
        except ValueError as exc:  # e.g. fix-node naming a node the testbed lacks
            assert "fix-node" in str(exc)
            return
        if r.success:
            assert tb.verify_mapping(parsed[1], parsed[0], r.mapping, r.routes).ok
