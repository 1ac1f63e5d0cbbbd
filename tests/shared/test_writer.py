"""The one writer (``coalloc._shared.jsonio.atomic_output``): atomic, guarded, survives a kill.

Every file coalloc writes goes through it; ``test_writer_cli.py`` checks the command line's
options and ``test_writer_sources.py`` that no module writes a file any other way.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coalloc
from coalloc._shared import jsonio
from coalloc._shared.jsonio import (
    OutputIsInputError,
    atomic_output,
    check_output,
    dump_json,
    protect_inputs,
    write_text,
    write_text_atomic,
)

ROOT = Path(__file__).resolve().parents[2]
OLD = b'{"old": true}\n'


def _listing(folder: Path) -> list:
    return sorted(p.name for p in folder.iterdir())


@pytest.fixture(params=["link", "copy"])
def publish_mode(request, monkeypatch):
    """Both ways of naming the finished file: linked through /proc (where the system lets
    it) or copied to a hidden file; ``copy`` forces the second by refusing the link."""
    monkeypatch.setattr(jsonio, "_LINKABLE", {})  # what a refused link taught stays here
    if request.param == "copy":
        real = os.link

        def no_proc_link(src, dst, **kw):
            if str(src).startswith("/proc/self/fd/"):
                raise OSError(18, "Invalid cross-device link")
            return real(src, dst, **kw)

        monkeypatch.setattr(jsonio.os, "link", no_proc_link)
    return request.param


# ------------------------------------------------------------------------ writing


def test_new_and_replaced_file_get_the_text_and_no_temporary_stays(tmp_path, publish_mode):
    path = tmp_path / "out.json"
    write_text_atomic(path, "first\n")
    assert path.read_text() == "first\n"
    write_text_atomic(path, "second é\n")
    assert path.read_bytes() == "second é\n".encode()
    assert _listing(tmp_path) == ["out.json"]


def test_binary_and_csv_newlines(tmp_path, publish_mode):
    pic = tmp_path / "a.bin"
    with atomic_output(pic, binary=True) as fh:
        fh.write(bytes(range(256)))
    assert pic.read_bytes() == bytes(range(256))
    csv = tmp_path / "a.csv"
    with atomic_output(csv, newline="") as fh:
        fh.write("a,b\r\n1,2\r\n")
    assert csv.read_bytes() == b"a,b\r\n1,2\r\n"


@pytest.mark.slow  # an fsync per example
@settings(max_examples=15, deadline=None)
@given(text=st.text(max_size=300))
def test_any_text_comes_back_byte_for_byte(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("w") / "t.txt"
    with atomic_output(path, newline="") as fh:
        fh.write(text)
    assert path.read_bytes() == text.encode("utf-8")


def test_mode_of_new_file_follows_umask_and_old_file_keeps_its_mode(tmp_path):
    old = os.umask(0o027)
    try:
        new = tmp_path / "new.txt"
        write_text_atomic(new, "x")
        assert stat.S_IMODE(new.stat().st_mode) == 0o640
    finally:
        os.umask(old)
    kept = tmp_path / "kept.txt"
    kept.write_text("x")
    kept.chmod(0o600)
    write_text_atomic(kept, "y")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600 and kept.read_text() == "y"


def test_symlink_target_is_replaced_and_the_link_stays(tmp_path):
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    write_text_atomic(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new"


def test_device_is_written_in_place_not_replaced():
    before = os.stat("/dev/null")
    write_text_atomic("/dev/null", "discarded")
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


def test_missing_folder_and_folder_target_are_os_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="No such file or directory"):
        write_text_atomic(tmp_path / "nope" / "x.json", "x")
    with pytest.raises(IsADirectoryError):
        write_text_atomic(tmp_path, "x")
    assert _listing(tmp_path) == []


def test_streams_are_written_as_they_are(tmp_path):
    import io

    buf = io.StringIO()
    write_text(buf, "abc")
    dump_json({"a": 1}, buf)
    assert buf.getvalue() == 'abc{\n "a": 1\n}\n'


# --------------------------------------------------------------------- failures


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_failure_mid_write_keeps_old_file_and_leaves_nothing(tmp_path, publish_mode, error):
    path = tmp_path / "out.json"
    path.write_bytes(OLD)
    with pytest.raises(error):
        with atomic_output(path) as fh:
            fh.write("x" * 3_000_000)  # well past any buffer: on disk in the temporary file
            fh.flush()
            raise error("stop")
    assert path.read_bytes() == OLD
    assert _listing(tmp_path) == ["out.json"]


def test_failing_rename_removes_the_temporary_file(tmp_path, monkeypatch, publish_mode):
    path = tmp_path / "out.json"
    path.write_bytes(OLD)

    def refuse(src, dst):
        raise PermissionError(13, "refused", dst)

    monkeypatch.setattr(jsonio.os, "replace", refuse)
    with pytest.raises(PermissionError):
        write_text_atomic(path, "new")
    assert path.read_bytes() == OLD
    assert _listing(tmp_path) == ["out.json"]


def test_failing_copy_removes_the_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "out.json"
    path.write_bytes(OLD)
    real = os.link

    def no_proc_link(src, dst, **kw):
        if str(src).startswith("/proc/self/fd/"):
            raise OSError(18, "Invalid cross-device link")
        return real(src, dst, **kw)

    def disk_full(src_fd, dst_fd, count, offset_src=None, offset_dst=None):
        os.pwrite(dst_fd, b"partial", 0)
        if offset_dst:
            raise OSError(28, "No space left on device")
        return 7

    monkeypatch.setattr(jsonio, "_LINKABLE", {})
    monkeypatch.setattr(jsonio.os, "link", no_proc_link)
    monkeypatch.setattr(jsonio.os, "copy_file_range", disk_full)
    with pytest.raises(OSError, match="No space"):
        write_text_atomic(path, "new text, longer than seven bytes")
    assert path.read_bytes() == OLD
    assert _listing(tmp_path) == ["out.json"]


def test_copy_without_copy_file_range_gives_the_same_bytes(tmp_path, monkeypatch):
    real = os.link

    def no_proc_link(src, dst, **kw):
        if str(src).startswith("/proc/self/fd/"):
            raise OSError(18, "Invalid cross-device link")
        return real(src, dst, **kw)

    def unsupported(*args):
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(jsonio, "_LINKABLE", {})
    monkeypatch.setattr(jsonio.os, "link", no_proc_link)
    monkeypatch.setattr(jsonio.os, "copy_file_range", unsupported)
    path = tmp_path / "big.bin"
    data = os.urandom(3 << 20)
    with atomic_output(path, binary=True) as fh:
        fh.write(data)
    assert path.read_bytes() == data and _listing(tmp_path) == ["big.bin"]


_CHILD = textwrap.dedent(
    """
    import sys, time
    from coalloc._shared.jsonio import atomic_output

    with atomic_output(sys.argv[1]) as fh:
        for _ in range(64):
            fh.write("y" * (1 << 17))  # 8 MiB
        fh.flush()
        print("writing", flush=True)
        time.sleep(600)
    """
)


def _run_until(code: str, args: list, marker: str) -> subprocess.Popen:
    # the child imports the coalloc this process runs (installed, or a source tree with
    # its compiled modules), not the checkout's src/ (no compiled modules in a fresh clone)
    here = Path(coalloc.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(here), str(ROOT)])}
    child = subprocess.Popen(
        [sys.executable, "-c", code, *args], stdout=subprocess.PIPE, text=True, env=env
    )
    line = child.stdout.readline()  # blocks until the child is inside the write
    if marker not in line:
        child.kill()
        child.wait()
        pytest.fail(f"the child did not reach the write: {line!r}")
    return child


@pytest.mark.slow
def test_sigkill_mid_write_keeps_old_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "out.json"
    path.write_bytes(OLD)
    child = _run_until(_CHILD, [str(path)], "writing")
    os.kill(child.pid, signal.SIGKILL)
    assert child.wait() == -signal.SIGKILL
    child.stdout.close()
    assert path.read_bytes() == OLD
    assert _listing(tmp_path) == ["out.json"]


# ------------------------------------------------------------------ the guard


def _links(tmp_path: Path, src: Path) -> dict:
    sym, hard = tmp_path / "sym.json", tmp_path / "hard.json"
    sym.symlink_to(src)
    os.link(src, hard)
    return {
        "same": src,
        "respelt": str(src.parent / "." / src.name),
        "relative": os.path.relpath(src),
        "symlink": sym,
        "hardlink": hard,
    }


@pytest.mark.parametrize("kind", ["same", "respelt", "relative", "symlink", "hardlink"])
def test_inputs_are_refused_and_stay_byte_identical(tmp_path, kind):
    src = tmp_path / "in.json"
    src.write_bytes(OLD)
    out = _links(tmp_path, src)[kind]
    before = _listing(tmp_path)
    with pytest.raises(OutputIsInputError, match="is also an input"):
        write_text_atomic(out, "boom", inputs=[src])
    with pytest.raises(OutputIsInputError, match=r"\(instance: "):
        with protect_inputs([("instance", src)]):
            dump_json({"boom": 1}, out)
    with pytest.raises(OutputIsInputError, match=r"\(-o\) is also an input"):
        with protect_inputs([str(src)]):
            with atomic_output(out, binary=True, option="-o") as fh:
                fh.write(b"never")
    assert src.read_bytes() == OLD and _listing(tmp_path) == before
    assert os.stat(tmp_path / "hard.json").st_ino == os.stat(src).st_ino
    assert os.readlink(tmp_path / "sym.json") == str(src)


def test_protection_nests_ends_with_the_block_and_ignores_non_files(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_bytes(OLD)
    b.write_bytes(OLD)
    with protect_inputs([a, "-", None, 3, tmp_path / "missing.json"]):
        with protect_inputs([("second", b)]):
            for path in (a, b):
                with pytest.raises(OutputIsInputError):
                    check_output(path)
        with pytest.raises(OutputIsInputError):
            check_output(a)
        check_output(b)  # the inner block has ended
        write_text_atomic(tmp_path / "missing.json", "fine")  # absent then: not an input
    write_text_atomic(a, "free again")
    assert a.read_text() == "free again" and b.read_bytes() == OLD


def test_other_files_are_not_refused(tmp_path):
    src = tmp_path / "in.json"
    src.write_bytes(OLD)
    copy = tmp_path / "copy.json"
    copy.write_bytes(OLD)  # same bytes, another file
    with protect_inputs([src]):
        write_text_atomic(copy, "new")
    assert copy.read_text() == "new" and src.read_bytes() == OLD
