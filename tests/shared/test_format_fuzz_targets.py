"""The fuzzers' line-format targets are built from the specs (issue 37): one target per
``LineFormat`` of a registered family (``FamilySpec.line_formats``), named by its ``target``
(the names of before kept), its seed file the format's ``sample`` written by its writer.
Referees: the target names of before (main at 605f77f), the committed corpus, the toy
family's line format (a reader and writer written in the test)."""

from __future__ import annotations

from pathlib import Path

import pytest

from coalloc._shared.family import families, register_family, unregister_family
from coalloc._shared.formats_line import LineFormat
from tests._fuzz import fuzz_modules
from tests.shared.test_family import random_instance, read_toy_text, toy_spec, write_toy_text

ROOT = Path(__file__).resolve().parents[2]

#: ``fuzz/targets.py``'s targets at main 605f77f, when the line formats' were written by hand.
TARGETS_BEFORE = {"taskmap", "collective_json", "collective_csv", "swf", "testbed_top",
                  "testbed_ptop", "gap", "instances", "formats", "options", "results", "cli"}


@pytest.fixture(scope="module")
def fuzz():
    """``fuzz/targets.py`` and ``fuzz/make_corpus.py`` (:func:`tests._fuzz.fuzz_modules`)."""
    with fuzz_modules() as modules:
        yield modules


def test_every_target_of_before_is_kept_and_each_line_format_has_one(fuzz):
    targets, _ = fuzz
    assert TARGETS_BEFORE <= set(targets.TARGETS)
    line = [fmt for spec in families().values() for fmt in spec.line_formats]
    assert len(line) >= 8  # the five families' (a sixth family's join them)
    for fmt in line:
        assert targets.TARGETS[fmt.target].__name__ == f"t_{fmt.target}", fmt.name
    assert {f.target for f in line} == (set(targets.TARGETS) - TARGETS_BEFORE) | {
        "collective_csv", "swf", "testbed_top", "testbed_ptop", "gap"}


def test_the_committed_corpus_holds_every_line_formats_seed(fuzz):
    _, make_corpus = fuzz
    seeds = make_corpus.line_seeds()
    assert set(seeds) == {fmt.target for _, fmt in fuzz[0].registered_line_formats()}
    for target, files in seeds.items():
        assert any((ROOT / "fuzz" / "corpus" / target).iterdir()), target
        for name, data in files.items():  # a sample written, or LINE_SAMPLES's
            assert (ROOT / "fuzz" / "corpus" / target / name).read_bytes() == data, (target, name)


def test_each_line_target_reads_its_seed_and_refuses_damage_naming_the_file(fuzz):
    targets, make_corpus = fuzz
    for target, files in make_corpus.line_seeds().items():
        for data in files.values():
            targets.TARGETS[target](data)  # no Finding
            targets.TARGETS[target](data[: len(data) // 2] + b"\x00\xff garbage")


def test_a_registered_line_format_is_fuzzed_without_editing_the_targets(fuzz):
    targets, _ = fuzz
    register_family(toy_spec())
    try:
        found = {fmt.target: fmt for _, fmt in targets.registered_line_formats()}
    finally:
        unregister_family("knapsack")
    fmt = found["line_toy_knapsack_text"]
    target = targets.line_target(fmt)
    target(b"capacity 3.0\n1.0 2.0\n2.0 2.0\n")
    target(b"capacity x\n")  # refused with the file's name: no Finding


def test_a_writer_whose_file_its_reader_refuses_is_a_finding(fuzz):
    targets, _ = fuzz

    def write_bad(path, inst):
        write_toy_text(path, inst)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write("not a number\n")

    fmt = LineFormat("toy.bad.text", "a bad toy", option="toybad", detect=("text",),
                     read=read_toy_text, write=write_bad,
                     sample=lambda: random_instance(0, 3))  # fmt: skip
    with pytest.raises(targets.Finding, match="does not write and read back"):
        targets.line_target(fmt)(b"capacity 3.0\n1.0 2.0\n")
