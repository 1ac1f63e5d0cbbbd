"""Shared inputs cross once: how a batch ships its chunks to process and Dask workers.

Many instances of a batch usually share a large model: requests against one pool, one
testbed, one offer, one resource graph. Pickled as they are, every chunk would carry the
shared model again (a 606-node collective pool is 4 MB), and every worker would unpickle,
rebuild and re-derive it for every instance. A :class:`Shipper` replaces, in each chunk,
every part of an instance (its models, the fields of the family's ``Instance``) that an
earlier instance of the batch already held (the same object, by identity, in the calling
process) by its digest: the object itself crosses once, keyed by the SHA-256 digest of its
pickle, and a chunk carries only the digest. Only the instances' parts are looked at (no
Python callback per pickled object), and the executor pickles the chunk once with its own
pickler: what the calling process spends per instance is that pickle and little more.

* Process pools: the shared object's pickle is written once to a file of the batch's own
  temporary folder; each worker reads it on first use and keeps the object.
* Dask: the object's pickle is scattered once to every worker
  (``Client.scatter(broadcast=True)``) and the chunk's task receives it from the worker's
  memory and unpickles it (in the task's thread, one unpickling at a time: see
  ``_unpickling``); the chunk itself travels as
  its pickle (bytes), which the scheduler forwards without unpickling it. A chunk too
  large for a message (:data:`SCATTER_BYTES`) is scattered straight to one worker, or,
  when every worker runs on the calling process's machine and sees its folders (a local
  cluster, :func:`shared_folder`), written to a file its task names (issue 41: a 4 MB CTAAP
  request cost the caller 18 ms scattered, 13 ms as a file, and the workers 19 and 12 ms).
* Threads and a serial loop pass the objects themselves: nothing is pickled.

Large arrays do not go through a process pool's pipe (issue 41): a chunk is pickled once
by the calling process with protocol 5, its arrays' data out of band, and when those pass
:data:`SPILL_BYTES` (a CTAAP Fig. 3 request: 4 MB of bandwidth) they are written to a file
of the batch's folder that the worker reads and removes; the chunk's records come back the
same way (a load-sharing result carries its 77 kB placement), and so do a local Dask
cluster's (:func:`shared_folder`), not through its scheduler. A pipe costs the calling
process about 6 ms of CPU per 4 MB on the 2-core VM (its feeder thread's pickle and write,
the reader's wake-ups), a file 1-2 ms (``bench/shared/ISSUE41.md``). The objects the user
gets are those unpickling gives: the same classes, values and writeable flags.

Each worker keeps the objects it received in a small digest-keyed cache
(:data:`CACHE_SIZE` objects), so what the solvers derive from a model and keep beside it
(:func:`coalloc._shared.caches.cache_of`: routes, per-testbed tables) is built at most once
per worker and reused by the next instance on the same object. The caches a model's class
declares travelling (:func:`coalloc._shared.caches.travels`: the task mapper's routes and
topology) are built once in the calling process and cross with the model, right after its
pickle, bound to its digest: a worker installs them on receipt (and refuses, then builds its
own, a cache that names another model or whose bytes were altered). The solvers never write to a
model (house rule; ``tests/shared/test_batch_shipping.py`` checks the digests of the
shared models before and after a batch), so sharing one object between instances cannot
change an answer.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import io
import itertools
import mmap
import os
import pickle
import threading
from collections import OrderedDict
from typing import Any, Dict, Iterator, Optional, Tuple

from .._shared.caches import CacheRefused, export_caches, install_caches
from .._shared.family import FamilyInstance, problem_kinds
from .._shared.jsonio import atomic_output
from . import columnar as _columnar

#: How many shared objects a worker keeps (least recently used dropped first).
CACHE_SIZE = 32
#: How many recently shipped model objects the calling process remembers (by identity)
#: to notice that one is shared.
RECENT = 64
#: How many shared objects the calling process keeps sending by digest (least recently
#: used forgotten first: a batch of a million instances holds a bounded set of models).
KEEP = 256
_PROTOCOL = pickle.HIGHEST_PROTOCOL
#: A Dask chunk whose pickle is larger than this (a CTAAP Fig. 3 request alone is 4 MB)
#: does not travel in its task, through the scheduler: it is scattered once, straight to
#: a worker, and the task takes the future (the scheduler sees its key and its size).
SCATTER_BYTES = 1 << 20
#: Ship the caches a model's class declares travelling (:func:`coalloc._shared.caches.travels`:
#: the task mapper's routes and topology) with the model, built once in the calling process,
#: so that no worker rebuilds them (False: every worker builds its own, as before).
SHIP_CACHES = True
#: Caches larger than this stay behind (each worker builds its own): a multilevel topology
#: grows as processors squared (4.4 MB for the benchmark's 158 processors, about 100 MB for
#: 1,000), and past some size a worker builds it faster than it reads it.
CACHE_BYTES = 64 << 20
#: A process-pool chunk, or a chunk's records, whose out-of-band buffers (the data of its
#: NumPy arrays, pickle protocol 5) reach this many bytes crosses through a file of the
#: batch's folder, not the pool's pipe (None: never).
SPILL_BYTES: Optional[int] = 256 << 10
#: Map a spill file into the reader's memory (copy-on-write) rather than read it: the
#: arrays of a chunk's records are then views of one mapping, paged in when read (the
#: calling process copies nothing; one kept result keeps its chunk's mapping). POSIX only:
#: elsewhere a mapped file cannot be removed while mapped.
MAP_FILES = os.name == "posix"
#: Dask chunks with arrays, for workers that share the caller's folder (a local cluster),
#: packed as a process pool's (:meth:`Shipper._for_dask`); False: pickled in band, as
#: before h50pool (a benchmark's "before").
SPILL_DASK = True
_ALIGN = 64
_spills = itertools.count()


def _model_types() -> tuple:
    return tuple({t for kind in problem_kinds() for t in kind._field_types if isinstance(t, type)})


def digest_of(obj: Any) -> str:
    """The content digest of a model object: SHA-256 of its pickle (hex).

    Parameters
    ----------
    obj : object
        A picklable object (a family's model).

    Returns
    -------
    str
        64 hexadecimal digits; equal for the same object pickled twice.

    Examples
    --------
    >>> from coalloc.batch.shipping import digest_of
    >>> digest_of((1, 2)) == digest_of((1, 2)), len(digest_of((1, 2)))
    (True, 64)
    """
    return hashlib.sha256(pickle.dumps(obj, protocol=_PROTOCOL)).hexdigest()


class _Ref:
    """A shared model in a packed chunk: its digest (the object crosses once, apart)."""

    __slots__ = ("digest",)

    def __init__(self, digest: str):
        self.digest = digest

    def __reduce__(self):
        return (_Ref, (self.digest,))


class _Parts:
    """An instance whose shared parts travel as :class:`_Ref`; rebuilt in the worker as
    unpickling builds any instance (``cls.__new__(cls, *parts)``: no validation again)."""

    __slots__ = ("cls", "parts")

    def __init__(self, cls: type, parts: tuple):
        self.cls = cls
        self.parts = parts

    def __reduce__(self):
        return (_Parts, (self.cls, self.parts))


class _Packed:
    """A chunk whose shared models are :class:`_Ref` digests (what crosses). For a process
    pool a :class:`_Spill`: the chunk pickled once by the calling process (no Python
    callback per object), its arrays' data in a file when large. For Dask its pickle,
    as a :class:`pickle.PickleBuffer` (Dask sends it out of band, without a copy): the
    scheduler, which runs in the calling process of a local cluster, would
    otherwise unpickle the instances of every task and pickle them again for the worker
    (a testbed's experiments cost 2 ms a piece that way); bytes it passes on as they are."""

    __slots__ = ("chunk", "files", "back")

    def __init__(self, chunk: Any, files: Dict[str, Optional[str]], back: Optional[str] = None):
        self.chunk = chunk  # the chunk, its pickle (Dask), or a _Spill (a process pool)
        self.files = files  # digest -> file of its pickle (None: Dask hands it over)
        self.back = back  # a process pool: the folder the records may come back through

    def __reduce__(self):
        return (_Packed, (self.chunk, self.files, self.back))


class _Spill:
    """An object pickled with protocol 5, its out-of-band buffers (arrays' data) either
    beside the pickle (``buffers``, small ones) or in the file ``path`` (``sizes`` bytes
    each, in order), which :meth:`load` reads and removes. ``costs``: a chunk's records'
    per-instance seconds, readable before loading (the chunk sizer's)."""

    __slots__ = ("head", "buffers", "path", "sizes", "costs")

    def __init__(self, head: bytes, buffers: Optional[list], path: Optional[str] = None,
                 sizes: Optional[list] = None, costs: Optional[list] = None):  # fmt: skip
        self.head, self.buffers, self.path, self.sizes, self.costs = (head, buffers, path,
                                                                      sizes, costs)  # fmt: skip

    def __reduce__(self):
        return (_Spill, (self.head, self.buffers, self.path, self.sizes, self.costs))

    def load(self) -> Any:
        """The object (its file, if any, mapped or read, and removed)."""
        buffers = self.buffers
        if self.path is not None:
            try:
                buffers = _file_buffers(self.path, self.sizes)
            finally:
                try:
                    os.unlink(self.path)  # a mapping outlives the name
                except OSError:
                    pass
        return pickle.loads(self.head, buffers=buffers)


class _InFile:
    """A chunk's pickle in a file of a folder the Dask workers share with the calling
    process (a local cluster: :func:`shared_folder`): the task carries only the path, and
    the worker reads the pickle, removes the file and unpickles it (:meth:`load`)."""

    __slots__ = ("path",)

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (_InFile, (self.path,))

    def load(self) -> Any:
        with open(self.path, "rb") as fh:
            blob = fh.read()
        try:
            os.unlink(self.path)
        except OSError:
            pass
        return pickle.loads(blob)


def _offsets(sizes: list) -> list:
    """Where each buffer starts in a spill file: every one at a multiple of 64 bytes (the
    arrays a mapping gives are aligned as an allocation's)."""
    out, at = [], 0
    for size in sizes:
        out.append(at)
        at += -(-size // _ALIGN) * _ALIGN
    return out


def _file_buffers(path: str, sizes: list) -> list:
    """The buffers of a spill file: views of one private (copy-on-write) mapping of it
    (:data:`MAP_FILES`: nothing copied now; the pages are read when an array is), else one
    bytearray each, read."""
    offsets = _offsets(sizes)
    end = offsets[-1] + sizes[-1] if sizes else 0
    with open(path, "rb") as fh:
        if MAP_FILES and end > 0:
            view = memoryview(mmap.mmap(fh.fileno(), end, access=mmap.ACCESS_COPY))
            return [view[at : at + size] for at, size in zip(offsets, sizes)]
        buffers = []
        for at, size in zip(offsets, sizes):
            buffer = bytearray(size)
            fh.seek(at)
            if fh.readinto(buffer) != size:
                raise OSError(f"{path}: shorter than its buffers")
            buffers.append(buffer)
        return buffers


def spill(obj: Any, folder: Optional[str]) -> _Spill:
    """``obj`` pickled once (protocol 5), its buffers in a new file of ``folder`` when they
    reach :data:`SPILL_BYTES` (and the file can be written), else beside the pickle."""
    buffers: list = []
    head = pickle.dumps(obj, protocol=_PROTOCOL, buffer_callback=buffers.append)
    if not buffers:
        return _Spill(head, None)
    try:
        raws = [b.raw() for b in buffers]
    except BufferError:  # a buffer that is not contiguous: all in band
        return _Spill(pickle.dumps(obj, protocol=_PROTOCOL), None)
    size = sum(r.nbytes for r in raws)
    if folder is not None and SPILL_BYTES is not None and size >= SPILL_BYTES:
        path = os.path.join(folder, f"spill-{os.getpid()}-{next(_spills)}")
        try:
            with open(path, "wb") as fh:
                for raw in raws:
                    fh.write(raw)
                    if raw.nbytes % _ALIGN:
                        fh.write(bytes(_ALIGN - raw.nbytes % _ALIGN))
            return _Spill(head, None, path, [r.nbytes for r in raws])
        except OSError:  # e.g. the folder is gone (a batch that ended): through the pipe
            try:
                os.unlink(path)
            except OSError:
                pass
    # as the buffers were: a read-only one stays read-only (READONLY_BUFFER in the head)
    return _Spill(head, [bytes(r) if r.readonly else bytearray(r) for r in raws])


class Shipper:
    """Pack a batch's chunks so that each shared model crosses once per worker.

    Parameters
    ----------
    folder : str, optional
        Where the pickles of shared objects go (process pools: the batch's temporary
        folder, removed with it); with ``client``, a folder every Dask worker reads (a
        local cluster: :func:`shared_folder`), where the chunks too large for a message go
        instead of being scattered.
    client : distributed.Client, optional
        Scatter shared objects to every worker of this Dask client instead.
    """

    def __init__(self, folder: Optional[str] = None, client: Any = None):
        self.folder = folder
        self.client = client
        self.types = _model_types()
        self.instance_type = FamilyInstance
        self.recent: OrderedDict[int, Any] = OrderedDict()  # id -> object (kept alive)
        self.shared: OrderedDict[int, Tuple[Any, str]] = OrderedDict()  # id -> (obj, digest)
        self.files: Dict[str, Optional[str]] = {}  # digest -> file (or None with Dask)
        self.futures: Dict[str, Any] = {}  # digest -> Dask future of the object
        self.bytes_sent = 0  # each shared object's pickle, once
        self.instances = 0
        self.scattered = 0  # Dask chunks sent straight to a worker (SCATTER_BYTES)
        self.in_files = 0  # ... or through a file of a folder the workers share (folder)
        self._workers: list = []  # the workers they go to in turn

    def _share(self, obj: Any) -> str:
        blob = pickle.dumps(obj, protocol=_PROTOCOL)
        digest = hashlib.sha256(blob).hexdigest()
        if digest not in self.files:
            extra = self._caches(obj, digest)
            if extra:  # right after the model's pickle: one file, one scattered value
                blob = b"".join((blob, extra))
            if self.client is not None:
                # its pickle, not the object: a Dask worker stores bytes as they come, and
                # the task's thread unpickles them (see unpack)
                self.futures[digest] = self.client.scatter(blob, broadcast=True, hash=False)
                self.files[digest] = None
            else:
                path = os.path.join(self.folder, f"{digest}.pickle")
                with atomic_output(path, binary=True) as fh:
                    fh.write(blob)
                self.files[digest] = path
            self.bytes_sent += len(blob)
        self.shared[id(obj)] = (obj, digest)
        while len(self.shared) > KEEP:  # a long batch of ever new models: bounded memory
            _, (_, old) = self.shared.popitem(last=False)
            if all(d != old for _, d in self.shared.values()):
                self.files.pop(old, None)  # sent again (same digest) if it comes back
                self.futures.pop(old, None)  # chunks already submitted hold theirs
        return digest

    def _caches(self, obj: Any, digest: str) -> Optional[bytes]:
        """The travelling caches of ``obj`` bound to ``digest`` (built here once), or None."""
        if not SHIP_CACHES:
            return None
        try:
            extra = export_caches(obj, digest)
        except Exception:  # a cache that does not build or pickle: the workers build theirs
            return None
        return extra if extra is not None and len(extra) <= CACHE_BYTES else None

    def _digest_if_shared(self, obj: Any) -> Optional[str]:
        if not isinstance(obj, self.types):
            return None
        key = id(obj)
        entry = self.shared.get(key)
        if entry is not None and entry[0] is obj:
            self.shared.move_to_end(key)
            return entry[1]
        if key in self.recent and self.recent[key] is obj:  # the second time: shared
            del self.recent[key]
            return self._share(obj)
        self.recent[key] = obj
        if len(self.recent) > RECENT:
            self.recent.popitem(last=False)
        return None

    def share(self, obj: Any) -> str:
        """The digest of the model ``obj``, which every instance of a chunk holds: shared
        (sent once) if it is not yet, as :meth:`_share_within` would."""
        key = id(obj)
        entry = self.shared.get(key)
        if entry is not None and entry[0] is obj:
            self.shared.move_to_end(key)
            return entry[1]
        self.recent.pop(key, None)
        return self._share(obj)

    def seen_any(self, values: tuple) -> bool:
        """Whether one of the models ``values`` may be shared or seen before (by identity;
        an object that reused a gone one's id answers True too: the caller then packs the
        chunk row by row, which tells them apart)."""
        ids = list(map(id, values))
        return any(map(self.shared.__contains__, ids)) or any(map(self.recent.__contains__, ids))

    def note(self, values: tuple) -> None:
        """Remember the models ``values`` as seen once (:meth:`_digest_if_shared`'s first
        sighting), the :data:`RECENT` latest kept."""
        self.recent.update(zip(map(id, values), values))
        while len(self.recent) > RECENT:
            self.recent.popitem(last=False)

    def pack(self, chunk: list) -> Tuple[_Packed, dict]:
        """``(payload, keywords)`` for ``submit(_solve_chunk, payload, *args, **keywords)``.

        Only the parts of each instance (its fields: the models) are looked at: an instance
        whose part an earlier instance of the batch also held travels as a :class:`_Parts`
        with that part's digest in its place.
        """
        out: Any = []
        used: Dict[str, None] = {}
        columns = _columnar.pack(self, chunk) if _columnar.COLUMNAR and len(chunk) > 1 else None
        if columns is not None:  # one class: a struct of arrays, not a row per instance
            out = columns
            used.update(dict.fromkeys(columns.digests()))
        elif len(chunk) > 1:  # a model two instances of this chunk hold is shared from the
            self._share_within(chunk)  # first (not inline: no worker builds for a copy)
        for index, item, seed in chunk if columns is None else ():
            if isinstance(item, self.instance_type):
                parts = None
                for k, part in enumerate(item):
                    digest = self._digest_if_shared(part)
                    if digest is not None:
                        if parts is None:
                            parts = list(item)
                        parts[k] = _Ref(digest)
                        used[digest] = None
                if parts is not None:
                    item = _Parts(type(item), tuple(parts))
            out.append((index, item, seed))
        self.instances += len(chunk)
        keywords = {}
        if self.client is not None:  # local workers: large records come back as files too
            out, back = self._for_dask(out, keywords), self.folder
        else:  # a process pool: pickled here once, large arrays through a file
            out = spill(out, self.folder)
            back = self.folder
        files = {d: self.files[d] for d in used}
        if self.client is not None and files:
            keywords["shared"] = {d: self.futures[d] for d in files}
        return _Packed(out, files, back), keywords

    def _for_dask(self, out: list, keywords: dict) -> Any:
        """What a Dask task carries for the chunk ``out``: its pickle out of band (Dask
        sends its frames without a copy), a file of the shared folder when it is larger
        than a message, or scattered straight to a worker (``keywords["data"]``).

        For workers that share :attr:`folder` (a local cluster) a chunk holding arrays is
        packed as a process pool's: pickled once, out of band, its arrays' bytes written
        straight to a file of the folder when they reach :data:`SPILL_BYTES` (the worker
        maps it), else beside the pickle (a :class:`_Spill`). Before (h50pool) such a chunk
        was pickled in band (its arrays copied into the pickle), then written whole to the
        file: a CTAAP Fig. 3 request, 4 MB of arrays, cost the calling process's main thread
        4.3 ms on a command-line Dask cluster against 1.7 ms on a process pool
        (``bench/shared/ISSUE41.md``, h50pool).
        """
        if self.folder is not None and SPILL_DASK:
            packed = spill(out, self.folder)
            if packed.path is None and packed.buffers is None:
                blob = packed.head  # nothing out of band: the in-band pickle, as before
            else:
                if packed.path is not None:
                    self.in_files += 1
                size = len(packed.head) + sum(len(b) for b in packed.buffers or ())
                if size <= SCATTER_BYTES:
                    return packed
                # a large pickle beside its arrays: through the folder, not the scheduler
                blob = pickle.dumps(packed, protocol=_PROTOCOL)
        else:
            blob = pickle.dumps(out, protocol=_PROTOCOL)
        big = len(blob) > SCATTER_BYTES  # never through the scheduler: as a file
        in_file = self._in_file(blob) if big and self.folder is not None else None
        if in_file is not None:  # the workers share the folder (a local cluster)
            return in_file
        if big:  # straight to a worker, not through the scheduler
            keywords["data"] = self._scatter_one(blob)
            return None
        return pickle.PickleBuffer(blob)

    def _share_within(self, chunk: list) -> None:
        seen: Dict[int, None] = {}
        for _, item, _ in chunk:
            if isinstance(item, self.instance_type):
                for part in item:
                    if isinstance(part, self.types):
                        key = id(part)
                        if key in seen:
                            entry = self.shared.get(key)
                            if entry is None or entry[0] is not part:
                                self.recent.pop(key, None)
                                self._share(part)
                        else:
                            seen[key] = None

    def _in_file(self, blob: bytes) -> Any:
        """``blob`` written to a new file of the shared folder, as an :class:`_InFile`
        (Dask: the task carries its path; else the pickle, scattered, when it cannot be
        written)."""
        path = os.path.join(self.folder, f"chunk-{os.getpid()}-{next(_spills)}")
        try:
            with open(path, "wb") as fh:
                fh.write(blob)
        except OSError:  # e.g. a full disk: the way without the folder
            try:
                os.unlink(path)
            except OSError:
                pass
            return None
        self.in_files += 1
        return _InFile(path)

    def _scatter_one(self, blob: bytes) -> Any:
        """A Dask future of ``blob`` held by one worker, sent there by this client directly
        where it can reach the workers (else, as Dask does by default, by the scheduler).

        The workers take turns: Dask's scatter of one object always picks the first worker
        (its round robin starts afresh at every call), and the tasks, which run where their
        data is, would all queue there (measured: 11.0 s against 6.6-9.8 s in the task)."""
        self.scattered += 1
        if not self._workers:
            try:
                self._workers = sorted(self.client.scheduler_info()["workers"])
            except Exception:  # a client that does not tell: let Dask choose
                self._workers = []
            # none known (a cluster whose workers have not registered yet, or all gone for
            # now): let Dask choose this time, and look again at the next chunk
            self._workers = self._workers or [None]
        target = self._workers[self.scattered % len(self._workers)]
        if self.scattered % (4 * len(self._workers)) == 0 or target is None:
            self._workers = []  # look again now and then: workers come and go
        where = {} if target is None else {"workers": [target]}
        try:
            return self.client.scatter(blob, direct=True, hash=False, **where)
        except (OSError, TimeoutError, ValueError):  # out of the client's reach, or gone
            return self.client.scatter(blob, hash=False)

    def close(self) -> None:
        """Let the batch's shared objects go (Dask releases them when their futures go)."""
        self.futures.clear()
        self.shared.clear()
        self.recent.clear()


#: Dask chunks too large for a message (:data:`SCATTER_BYTES`) go through a file of a
#: folder the workers share with the calling process when every worker runs on its machine
#: (a local cluster) and reads a file the caller wrote there (:func:`shared_folder`): the
#: task then carries the path, and neither the scheduler nor a scatter carries the bytes
#: (False: always scattered).
DASK_FILES = True


def _local_hosts() -> set:
    """The names and addresses of this machine a Dask worker's address may use."""
    import socket

    hosts = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}
    try:
        name = socket.gethostname()
        hosts.add(name)
        hosts.update(info[4][0] for info in socket.getaddrinfo(name, None))
    except OSError:  # pragma: no cover - no resolver: the loopback names only
        pass
    return hosts


def shared_folder(client: Any, make_folder: Any) -> Optional[str]:
    """A folder, made by ``make_folder()``, that every worker of the Dask ``client`` reads
    (each on this machine, each seeing a file written there), else None (removed again).

    Parameters
    ----------
    client : distributed.Client
        The batch's client.
    make_folder : callable
        Returns a new folder of the calling process (removed by the batch at its end).

    Returns
    -------
    str or None
        The folder, or None when a worker runs elsewhere or does not see it.
    """
    from urllib.parse import urlparse

    if not DASK_FILES:
        return None
    try:
        workers = list(client.scheduler_info()["workers"])
        hosts = {urlparse(address).hostname for address in workers}
    except Exception:  # a client that does not tell: scatter, as before
        return None
    if not workers or not hosts <= _local_hosts():
        return None
    folder = make_folder()
    probe = os.path.join(folder, "probe")
    try:
        with open(probe, "wb"):
            pass
        seen = client.run(os.path.exists, probe)
    except Exception:  # a worker that cannot be asked: scatter
        seen = {}
    if len(seen) == len(workers) and all(seen.values()):
        os.unlink(probe)
        return folder
    import shutil

    shutil.rmtree(folder, ignore_errors=True)
    return None


_gc_lock = threading.Lock()
_gc_state = {"depth": 0, "was_enabled": False}


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while the calling process packs a chunk or
    loads its records (nested and from several threads: the collector comes back, as it
    was, when the last one leaves).

    Pickling a chunk builds thousands of short-lived containers (a testbed experiment's
    rows, the pickler's memo) that count as allocations: with the batch's instances just
    generated and not yet old, they set off collections of the whole heap. On the
    benchmark's 3,000 testbed instances (``bench/shared/ISSUE41.md``, h46disp) the caller's
    packing took 88-97 us per instance with the collector and 37-40 us without; what it
    builds is freed by reference counting when the pickle is done (no cycles), so nothing
    is left for the collector to find.
    """
    with _gc_lock:
        if _gc_state["depth"] == 0:
            _gc_state["was_enabled"] = gc.isenabled()
            gc.disable()
        _gc_state["depth"] += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_state["depth"] -= 1
            if _gc_state["depth"] == 0 and _gc_state["was_enabled"]:
                gc.enable()


def received(records: Any) -> Any:
    """A chunk's records as its future gave them: a :class:`_Spill` loaded (its file read
    and removed), anything else as it is."""
    return records.load() if isinstance(records, _Spill) else records


# ----------------------------------------------------------------- the worker side

_cache: OrderedDict[str, Any] = OrderedDict()
_cache_lock = threading.Lock()
#: One unpickling at a time in a worker process. Unpickling imports the classes' modules;
#: two threads importing a package whose modules import each other can see one of them
#: partially initialized ("cannot import name ... from partially initialized module",
#: seen on a Dask worker that unpickled a scattered model in its event loop while the task
#: thread unpickled a chunk: the scattered models now travel as pickles, unpickled here).
_unpickling = threading.RLock()


#: What this worker did with the caches that came with its models (tests, benchmarks).
cache_stats = {"installed": 0, "refused": 0}


def _start_afresh() -> None:
    """A forked worker starts as a spawned one does: no model held, no cache counted, its
    own locks. Without this a fork copies the parent's cache, which holds whatever the
    parent unpacked in-process (an in-process Dask worker, a test), and the worker then
    serves digests of models no batch of its pool sent (a lock another parent thread held
    at the fork would also stay held)."""
    global _cache_lock, _unpickling
    _cache.clear()
    cache_stats.update(installed=0, refused=0)
    _cache_lock = threading.Lock()
    _unpickling = threading.RLock()


if hasattr(os, "register_at_fork"):  # POSIX; a spawned worker imports this module afresh
    os.register_at_fork(after_in_child=_start_afresh)


def _receive(digest: str, fh: Any) -> Any:
    """The model of digest ``digest`` from ``fh`` (its pickle, then the caches exported with
    it, if any), remembered, with those caches installed beside it."""
    obj = _remember(digest, pickle.load(fh))
    extra = fh.read()
    if extra:
        try:
            install_caches(obj, extra, digest)
            cache_stats["installed"] += 1
        except CacheRefused:  # another model's, or altered: this worker builds its own
            cache_stats["refused"] += 1
    return obj


def _remember(digest: str, obj: Any) -> Any:
    # Its digest as this process pickles it on arrival, before any solve: the parent's may
    # differ for the same content (a set's order follows the process's string hashing).
    arrived = digest_of(obj)
    with _cache_lock:
        kept = _cache.get(digest)
        if kept is not None:  # another thread of this worker was first: one object
            _cache.move_to_end(digest)
            return kept[0]
        _cache[digest] = (obj, arrived)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return obj


def _lookup(digest: str) -> Any:
    with _cache_lock:
        entry = _cache.get(digest)
        if entry is None:
            return None
        _cache.move_to_end(digest)
        return entry[0]


def unpack(payload: Any, shared: Optional[dict] = None, data: Optional[bytes] = None) -> list:
    """The chunk a :class:`Shipper` packed, its shared objects from this worker's cache
    (else from ``shared``, what Dask handed over, or the file the parent wrote); ``data``:
    the chunk's pickle, when Dask handed it over apart (:data:`SCATTER_BYTES`)."""
    if not isinstance(payload, _Packed):
        return payload  # threads, serial, a plain chunk resubmitted after a crash
    with _unpickling:
        got: Dict[str, Any] = {}
        for digest, path in payload.files.items():
            obj = _lookup(digest)
            if obj is None:
                if shared is not None and digest in shared:  # Dask: what it was scattered as
                    obj = _receive(digest, io.BytesIO(shared[digest]))
                else:
                    with open(path, "rb") as fh:
                        obj = _receive(digest, fh)
            got[digest] = obj
        packed = payload.chunk if payload.chunk is not None else data
        if isinstance(packed, (bytes, bytearray, memoryview, pickle.PickleBuffer)):  # Dask
            packed = pickle.loads(packed)
        while isinstance(packed, (_Spill, _InFile)):  # a process pool; local Dask workers
            packed = packed.load()  # (an _InFile may hold a _Spill: Shipper._for_dask)
    if isinstance(packed, _columnar._Chunk):
        return packed.rows(got)
    chunk = []
    for index, item, seed in packed:
        if isinstance(item, _Parts):
            parts = [got[p.digest] if isinstance(p, _Ref) else p for p in item.parts]
            item = item.cls.__new__(item.cls, *parts)
        chunk.append((index, item, seed))
    return chunk


def _cache_counts() -> dict:
    """How many caches that came with a model this worker installed and refused (tests)."""
    return dict(cache_stats)


def _cached_digests() -> list:
    """``(digest, digest on arrival, digest now)`` of every object this worker holds: the
    solves left it unchanged when the last two are equal (tests)."""
    with _cache_lock:
        items = list(_cache.items())
    return [(d, arrived, digest_of(obj)) for d, (obj, arrived) in items]
