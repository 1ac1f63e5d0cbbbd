"""Issue 39: corrupted, truncated and doubled pool snapshots (.npz) are refused with the
documented one-line error naming the file, never ``zipfile.BadZipFile`` or a silent choice."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

from coalloc._shared.jsonio import InstanceError
from coalloc.cli import main
from coalloc.collective import ResourcePool
from coalloc.collective.io import read_pool_snapshot, write_pool_snapshot


def _snapshot_bytes(tmp_path) -> bytes:
    pool = ResourcePool.from_slots(np.full((3, 2), 4.0), np.zeros((3, 2, 4)), 300.0,
                                   ["cores", "mem"])  # fmt: skip
    path = tmp_path / "good.npz"
    write_pool_snapshot(path, pool)
    return path.read_bytes()


def _refused(path) -> str:
    """The message of the refusal; anything but an InstanceError fails the test."""
    try:
        read_pool_snapshot(path)
    except InstanceError as exc:
        return str(exc)
    return ""  # accepted


def test_every_truncation_is_refused_naming_the_file(tmp_path):
    data = _snapshot_bytes(tmp_path)
    path = tmp_path / "cut.npz"
    cuts = sorted(set(range(0, len(data), max(1, len(data) // 200))) | {len(data) - 1})
    for cut in cuts:
        path.write_bytes(data[:cut])
        message = _refused(path)
        assert message.startswith(f"{path}: "), (cut, message)
        assert "\n" not in message


def test_corrupted_bytes_are_refused_or_read_back_exactly(tmp_path):
    """A flipped byte: refused with the file named, or (a byte the archive does not check)
    read as a valid pool; never another exception."""
    data = _snapshot_bytes(tmp_path)
    rng = np.random.default_rng(39)
    path = tmp_path / "flip.npz"
    refused = 0
    for pos in rng.choice(len(data), size=300, replace=False).tolist():
        bad = bytearray(data)
        bad[pos] ^= 0xFF
        path.write_bytes(bytes(bad))
        try:
            read_pool_snapshot(path)
        except InstanceError as exc:
            refused += 1
            assert str(exc).startswith(f"{path}: ")
    assert refused > 0  # the check can fail: most flips land in checked bytes


def test_a_member_given_twice_is_refused(tmp_path):
    data = _snapshot_bytes(tmp_path)
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(buf, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, src.read(info))
        first = src.infolist()[0]
        with pytest.warns(UserWarning, match="Duplicate name"):
            dst.writestr(first, src.read(first))
    path = tmp_path / "twice.npz"
    path.write_bytes(buf.getvalue())
    message = _refused(path)
    assert message.startswith(f"{path}: ") and "2 times" in message, message


def test_a_bare_npy_is_not_a_snapshot(tmp_path):
    path = tmp_path / "bare.npz"
    with open(path, "wb") as fh:
        np.save(fh, np.zeros(3))
    assert "not an .npz archive" in _refused(path)


def test_the_cli_says_it_in_one_line(tmp_path, capsys):
    data = _snapshot_bytes(tmp_path)
    path = tmp_path / "cut.npz"
    path.write_bytes(data[: len(data) // 2])
    request = tmp_path / "r.json"
    request.write_text('{"format": "coalloc.collective.request", "duration": 300, "nodes": 1}')
    assert main(["collective", "solve", str(request), str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0], err
