"""A chunk of one instance class crosses as columns (issue 41, h51pool): the indexes as a
range, one seed, each field as one column (a shared model's digest once, a family's
column packer, or a list). The worker's rows are the caller's: the same indexes, seeds
and instances, whose answers and ``verify`` reports are the serial run's, on many random
chunks; a mutated packer fails that referee; a chunk that is not one class, or whose
model the batch shares from an earlier chunk, goes row by row as before."""

from __future__ import annotations

import pickle
import tempfile

import pytest
from bench.shared.scaling import answer, family_batch
from hypothesis import given, settings
from hypothesis import strategies as st

import coalloc
from coalloc.batch import columnar
from coalloc.batch.errors import _deferred_seed, _resolve_seed
from coalloc.batch.shipping import Shipper, unpack
from coalloc.testbed import _columns

from ._batch_referee import same_verified_answers

_FAMILIES = ("testbed", "collective", "loadshare")  # task mapping: a second per solve
_POOLS = {f: family_batch(f, 24, seed=5, small=True) for f in _FAMILIES}


def _crossed(chunks: list) -> tuple:
    """Each chunk packed by one shipper for a process pool, pickled and unpacked as a
    worker does; ``(rows, how many went as columns)``."""
    used = []
    real = columnar.pack

    def counting(shipper, chunk):
        out = real(shipper, chunk)
        used.append(out is not None)
        return out

    with tempfile.TemporaryDirectory() as folder:
        shipper = Shipper(folder=folder)
        columnar.pack, rows = counting, []
        try:
            for chunk in chunks:
                payload, _ = shipper.pack(chunk)
                rows.append(unpack(pickle.loads(pickle.dumps(payload, protocol=5))))
        finally:
            columnar.pack = real
    return rows, sum(used)


def _same_rows(got: list, want: list, seed_of) -> None:
    """The same indexes, seeds and instances: each solved with its seed gives the same
    answer, and the family's ``verify`` judges both results alike."""
    assert [(i, s) for i, _, s in got] == [(i, s) for i, _, s in want]
    for (index, inst, s), (_, orig, _) in zip(got, want):
        assert type(inst) is type(orig)
        mine, theirs = inst.solve(seed=seed_of(index, s)), orig.solve(seed=seed_of(index, s))
        assert answer(mine) == answer(theirs)
        assert inst.verify(mine).to_dict() == orig.verify(theirs).to_dict()


def _seed_of(index, s):
    return _resolve_seed(s, index)


@st.composite
def chunks(draw) -> list:
    """A few chunks of a batch: one family or several, consecutive indexes or not, one
    seed or one each, instances drawn from a family's pool (shared models, repeats)."""
    families = draw(st.lists(st.sampled_from(_FAMILIES), min_size=1, max_size=2, unique=True))
    out, index = [], 0
    for _ in range(draw(st.integers(1, 3))):
        size = draw(st.integers(1, 6))
        one_seed = draw(st.booleans())
        rows = []
        for _ in range(size):
            family = draw(st.sampled_from(families))
            inst = _POOLS[family][draw(st.integers(0, len(_POOLS[family]) - 1))]
            index += draw(st.integers(1, 3)) if not one_seed else 1
            rows.append((index, inst, 7 if one_seed else draw(st.integers(0, 99))))
        out.append(rows)
    return out


@pytest.mark.slow
@settings(max_examples=40, deadline=None, derandomize=True)
@given(chunks())
def test_random_chunks_cross_as_the_same_rows(drawn):
    rows, _ = _crossed(drawn)
    for got, want in zip(rows, drawn):
        _same_rows(got, want, _seed_of)


@pytest.mark.parametrize("family", _FAMILIES)
def test_a_chunk_of_one_family_goes_as_columns(family):
    batch = _POOLS[family][:12]
    drawn = [[(i, inst, 3) for i, inst in enumerate(batch[:6])],
             [(i + 6, inst, 3) for i, inst in enumerate(batch[6:])]]  # fmt: skip
    rows, used = _crossed(drawn)
    assert used == 2
    for got, want in zip(rows, drawn):
        _same_rows(got, want, _seed_of)


def test_a_mutated_packer_fails_the_referee(monkeypatch):
    batch = family_batch("testbed", 40, seed=2, small=True)
    drawn = [[(i, inst, 1) for i, inst in enumerate(batch)]]
    real = _columns.pack

    def swapped(tops):  # a faulty packer: two experiments' columns exchanged
        tops = list(tops)
        tops[0], tops[1] = tops[1], tops[0]
        return real(tops)

    monkeypatch.setattr(_columns, "pack", swapped)
    columnar._packers.clear()
    try:
        rows, used = _crossed(drawn)
    finally:
        columnar._packers.clear()
    assert used == 1
    with pytest.raises(AssertionError):
        _same_rows(rows[0], drawn[0], _seed_of)


def test_the_knob_off_goes_row_by_row(monkeypatch):
    monkeypatch.setattr(columnar, "COLUMNAR", False)
    drawn = [[(i, inst, 0) for i, inst in enumerate(_POOLS["testbed"][:5])]]
    rows, used = _crossed(drawn)
    assert used == 0
    _same_rows(rows[0], drawn[0], _seed_of)


def test_a_model_shared_from_an_earlier_chunk_goes_row_by_row():
    ptop = _POOLS["testbed"][0].ptop
    tops = [inst.top for inst in _POOLS["testbed"][:4]]
    first = [(0, coalloc.testbed.Instance(tops[0], ptop), 0)]
    again = [(1, coalloc.testbed.Instance(tops[0], ptop), 0),  # tops[0] seen before
             (2, coalloc.testbed.Instance(tops[1], ptop), 0)]  # fmt: skip
    rows, used = _crossed([first, again])
    assert used == 0  # the first chunk is one instance; the second names a model seen
    _same_rows(rows[1], again, _seed_of)


def test_a_batch_seed_crosses_once():
    seed = _deferred_seed(11)
    drawn = [[(i, inst, seed) for i, inst in enumerate(_POOLS["loadshare"][:8])]]
    with tempfile.TemporaryDirectory() as folder:
        payload, _ = Shipper(folder=folder).pack(drawn[0])
    chunk = pickle.loads(payload.chunk.head)
    assert isinstance(chunk, columnar._Chunk)
    assert chunk.indexes == (0, 8) and chunk.seeds[0] == "one"
    assert [f[0] for f in chunk.fields] == ["ref"]  # the one shared problem, by digest


@pytest.mark.slow
@pytest.mark.parametrize("family", ["testbed", "collective", "loadshare"])
def test_a_process_batch_of_columns_matches_serial(family):
    batch = family_batch(family, 60, seed=4, small=True)
    serial = coalloc.solve_many(batch, executor="serial", seed=9)
    got = coalloc.solve_many(batch, executor="processes", n_jobs=2, seed=9, chunksize=7)
    same_verified_answers(batch, got, serial)


class _Noted(coalloc.loadshare.Instance):  # a subclass holding more than its fields
    pass


def test_an_instance_with_more_than_its_fields_goes_row_by_row():
    items = []
    for i, inst in enumerate(_POOLS["loadshare"][:3]):
        noted = _Noted(*inst)
        noted.note = i
        items.append((i, noted, 0))
    rows, used = _crossed([items])
    assert used == 0  # (its rows drop the note with its shared parts, as before h51pool)
    assert all(type(inst) is _Noted for _, inst, _ in rows[0])
    _same_rows(rows[0], items, _seed_of)
