"""The fuzz targets and seed corpus come from the list of families (issue 37 item 1): the
``formats`` target reads every registered JSON format (``FamilySpec.formats``) and its seeds
are the formats' own examples, the ``instances`` target's seeds the families' ``fuzz_seeds``;
so a family is fuzzed by registering, with no hand-written list to edit (the toy family of
``test_family.py`` shows it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coalloc._shared.family import families
from tests._fuzz import fuzz_modules

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def fuzz():
    """``fuzz/targets.py`` and ``fuzz/make_corpus.py`` (:func:`tests._fuzz.fuzz_modules`)."""
    with fuzz_modules() as modules:
        yield modules


def test_every_registered_format_is_a_formats_seed(fuzz):
    targets, make_corpus = fuzz
    names = [fmt.name for _, fmt in targets.registered_formats()]
    assert names == [f.name for spec in families().values() for f in spec.formats]
    seeds = make_corpus.format_seeds()
    with_examples = {f.name for spec in families().values() for f in spec.formats if f.examples}
    assert {key.split("-", 1)[1].rsplit("-", 1)[0] for key in seeds} == with_examples
    for key, data in seeds.items():  # the first byte picks the format the file is written in
        _, fmt = targets.registered_formats()[data[0]]
        assert json.loads(data[1:])["format"] == fmt.name, key


def test_the_committed_formats_corpus_is_the_registrys(fuzz):
    """``fuzz/corpus/formats/`` holds exactly what ``make_corpus.py`` writes from the
    registry (a new family's format: run it and commit its seeds)."""
    _, make_corpus = fuzz
    folder = ROOT / "fuzz" / "corpus" / "formats"
    committed = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert committed == make_corpus.format_seeds()


def test_the_formats_target_reads_seeds_and_refuses_damage_naming_the_file(fuzz):
    targets, make_corpus = fuzz
    for data in make_corpus.format_seeds().values():
        targets.t_formats(data)  # read, solved when small, verified: no Finding
    # a damaged document is refused by the checker, the file named (no Finding either)
    for data in make_corpus.format_seeds().values():
        doc = json.loads(data[1:])
        doc["unknown_key"] = 1
        targets.t_formats(data[:1] + json.dumps(doc).encode())
        targets.t_formats(data[:1] + b"{not json")


def test_a_reader_that_takes_what_its_checker_refuses_is_a_finding(fuzz, monkeypatch):
    """The target's own referee can fail: a kind reader made lax is caught."""
    targets, make_corpus = fuzz
    from coalloc._shared.family import kind_of_format

    k, fmt = next((k, f) for k, (_, f) in enumerate(targets.registered_formats())
                  if f.name == "coalloc.loadshare.instance")  # fmt: skip
    kind = kind_of_format(fmt.name)
    good = next(d for d in make_corpus.format_seeds().values() if d[0] == k)
    original = kind.from_dict.__func__
    monkeypatch.setattr(kind, "from_dict", classmethod(
        lambda cls, data, *, source: original(cls, {x: v for x, v in data.items()
                                                    if x != "unknown_key"}, source=source)))
    doc = json.loads(good[1:])
    doc["unknown_key"] = 1
    with pytest.raises(targets.Finding, match="the reader took a document its checker refuses"):
        targets.t_formats(bytes([k]) + json.dumps(doc).encode())


def test_a_registered_family_is_fuzzed_without_editing_the_targets(fuzz):
    """The toy knapsack family, registered: its format is among the ``formats`` target's,
    its example a seed, read by the target (solved and verified)."""
    from coalloc._shared.family import register_family, unregister_family
    from tests.shared.test_family import toy_spec

    targets, make_corpus = fuzz
    register_family(toy_spec())
    try:
        fmts = targets.registered_formats()
        k = [f.name for _, f in fmts].index("toy.knapsack.instance")
        seeds = {key: d for key, d in make_corpus.format_seeds().items() if d[0] == k}
        assert list(seeds) == [f"{k:02d}-toy.knapsack.instance-0"]
        for data in seeds.values():
            targets.t_formats(data)
        refused = bytes([k]) + b'{"format": "toy.knapsack.instance", "values": [1]}'
        targets.t_formats(refused)  # refused naming the file: no Finding
    finally:
        unregister_family("knapsack")


def test_a_kilobyte_key_is_refused_in_one_short_line(fuzz):
    """The CI fuzzer's ``formats`` target drew a collective instance whose pool held a
    1.5 kB key (a mutation merged a key with the data after it): the refusal printed it whole
    (2.6 kB, a Finding). Every seed with such a key in each of its objects is refused in one
    short line now."""
    targets, make_corpus = fuzz
    key = "format0, 0, 2.928, 0.755], [" + "0.48, 0.927, " * 120
    for data in make_corpus.format_seeds().values():
        doc = json.loads(data[1:])
        for value in [doc, *(v for v in doc.values() if isinstance(v, dict))]:
            value[key] = 1
        targets.t_formats(data[:1] + json.dumps(doc).encode())  # no Finding
