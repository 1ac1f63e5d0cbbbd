"""Caches kept beside the models, never on them.

The models are read-only: no solver (and no model method) writes a cache onto a model
object. What a solver derives from a model once and reuses (the testbed's per-testbed
tables and routes, the task mapper's routes) lives in a dictionary that :func:`cache_of`
keeps beside the model, keyed by the model's identity and dropped when the model is
garbage-collected. A pickled model therefore never carries a warm cache: a process worker
builds its own (and the time a solve takes does not depend on where its model came from).

Examples
--------
>>> class Model:
...     pass
>>> m = Model()
>>> cache_of(m).setdefault("tables", []).append(1)
>>> cache_of(m)
{'tables': [1]}
>>> vars(m)  # nothing written onto the model
{}
"""

from __future__ import annotations

import hashlib
import pickle
import threading
import weakref
from typing import Any, Callable, Dict, Optional, Tuple

__all__ = ["cache_of", "export_caches", "install_caches", "travels", "CacheRefused"]

# Why not weakref.WeakKeyDictionary (issue 37 item 5, reviewed): it keys by the model's
# hash and equality, so it works only while every model class keeps object identity for
# both (they do today; a model compared by value would then share its cache with every
# equal model, or raise if unhashable), and its look-up makes a weak reference per call:
# 1.16 us against 0.95 us here (timeit, 200,000 calls, load 10 on 2 cores). The reuse of a
# dead model's id is handled twice: the weak reference's callback drops the entry when the
# model dies, and a hit counts only if the entry's reference still points at this very
# object (tests/shared/test_caches.py puts a new model at a dead one's address).
_lock = threading.RLock()  # re-entrant: a weakref callback may run inside (GC)
#: id(model) -> (weak reference to the model, its cache). Keyed by identity, not by
#: equality: two equal models built apart keep their own caches, and models need not be
#: hashable.
_caches: Dict[int, Tuple[weakref.ref, dict]] = {}


def _forget(key: int, ref: weakref.ref) -> None:
    with _lock:
        entry = _caches.get(key)
        if entry is not None and entry[0] is ref:
            del _caches[key]


def cache_of(model: Any) -> dict:
    """The cache dictionary kept beside ``model`` (empty on first use).

    Thread-safe to obtain; what callers store in it is theirs to make thread-safe (the
    solvers store values computed deterministically from the model, so two threads that
    race store equal values).

    Parameters
    ----------
    model : object
        A model object that supports weak references (every model class of the package).

    Returns
    -------
    dict
        The same dictionary for the same model object as long as it lives.

    Examples
    --------
    >>> class Model:
    ...     pass
    >>> a, b = Model(), Model()
    >>> cache_of(a) is cache_of(a), cache_of(a) is cache_of(b)
    (True, False)
    """
    key = id(model)
    entry = _caches.get(key)
    if entry is not None and entry[0]() is model:
        return entry[1]
    with _lock:
        entry = _caches.get(key)
        if entry is not None and entry[0]() is model:
            return entry[1]
        cache: dict = {}
        ref = weakref.ref(model, lambda r, key=key: _forget(key, r))
        _caches[key] = (ref, cache)
        return cache


# ------------------------------------------------- caches that travel with their model
#
# A batch ships a shared model to each worker once (coalloc.batch.shipping); what the
# solvers derive from it and keep in cache_of would be rebuilt by every worker. A model
# class that registers here (travels) names the cache entries worth shipping and how to
# fill them: the calling process fills them once, exports them beside the model's pickle,
# and each worker installs them into cache_of(model) on receipt. An export is bound to the
# digest of the model it derives from and carries a checksum of its own bytes: a worker
# refuses one that names another model or was altered (CacheRefused), and then builds its
# own as before.

#: model class -> (cache keys that travel, function that fills them in cache_of(model),
#: pack, unpack: see travels)
_TRAVEL: Dict[type, Tuple[Tuple[str, ...], Optional[Callable[[Any], None]],
                          Optional[Callable[[Any, dict], dict]],
                          Optional[Callable[[Any, dict], dict]]]] = {}  # fmt: skip
_FORMAT = "coalloc.caches/1"


class CacheRefused(ValueError):
    """An exported cache that does not belong to the model it was offered for, or whose
    bytes do not match their checksum."""


def travels(cls: type, keys: Tuple[str, ...], fill: Optional[Callable[[Any], None]] = None,
            *, pack: Optional[Callable[[Any, dict], dict]] = None,
            unpack: Optional[Callable[[Any, dict], dict]] = None) -> None:  # fmt: skip
    """Declare that the cache entries ``keys`` of a ``cls`` model travel with it in batches.

    Parameters
    ----------
    cls : type
        The model class (instances of subclasses travel too).
    keys : tuple of str
        The :func:`cache_of` keys shipped; their values must pickle (and unpickle to an
        equivalent, read-only value), or ``pack`` must make them so.
    fill : callable, optional
        ``fill(model)`` builds those entries in ``cache_of(model)``; called once in the
        calling process by :func:`export_caches` (``fill=True``).
    pack, unpack : callable, optional
        ``pack(model, entries) -> entries`` turns the entries into what pickles (e.g. a
        read-only mapping into a dict, a view of the model's own parts left out), in the
        calling process; ``unpack(model, entries) -> entries`` turns them back, in the
        worker, on the model as received. Both keep the keys.
    """
    if not isinstance(cls, type):
        raise TypeError(f"cls must be a class, got {type(cls).__name__}")
    for name, f in (("fill", fill), ("pack", pack), ("unpack", unpack)):
        if f is not None and not callable(f):
            raise TypeError(f"{name} must be callable or None, got {type(f).__name__}")
    _TRAVEL[cls] = (tuple(str(k) for k in keys), fill, pack, unpack)


def _spec(model: Any) -> Optional[tuple]:
    for cls in type(model).__mro__:
        spec = _TRAVEL.get(cls)
        if spec is not None:
            return spec
    return None


def export_caches(model: Any, digest: str, fill: bool = True) -> Optional[bytes]:
    """The travelling cache entries of ``model`` as bytes bound to its ``digest``.

    Parameters
    ----------
    model : object
        A shared model.
    digest : str
        The content digest the model is shipped under
        (:func:`coalloc.batch.shipping.digest_of`).
    fill : bool
        Build missing entries first (the class's ``fill``), else export what exists.

    Returns
    -------
    bytes or None
        None when the class has no travelling caches or none is built.

    Examples
    --------
    >>> class M:
    ...     pass
    >>> travels(M, ("t",), lambda m: cache_of(m).setdefault("t", [1, 2]))
    >>> a, b = M(), M()
    >>> blob = export_caches(a, "d" * 64)
    >>> install_caches(b, blob, "d" * 64), cache_of(b)
    (['t'], {'t': [1, 2]})
    """
    spec = _spec(model)
    if spec is None:
        return None
    keys, filler, pack, _ = spec
    cache = cache_of(model)
    if fill and filler is not None and any(k not in cache for k in keys):
        filler(model)
    entries = {k: cache[k] for k in keys if k in cache}
    if not entries:
        return None
    if pack is not None:
        entries = pack(model, entries)
    payload = pickle.dumps(entries, protocol=pickle.HIGHEST_PROTOCOL)
    envelope = {
        "format": _FORMAT,
        "model": str(digest),
        "sha256": hashlib.sha256(payload).hexdigest(),
        "payload": payload,
    }
    return pickle.dumps(envelope, protocol=pickle.HIGHEST_PROTOCOL)


def install_caches(model: Any, blob: bytes, digest: str) -> list:
    """Install into ``cache_of(model)`` the entries :func:`export_caches` exported.

    Entries the model already has are kept (never replaced).

    Parameters
    ----------
    model : object
        The model as received.
    blob : bytes
        What :func:`export_caches` returned.
    digest : str
        The digest ``model`` was shipped under.

    Returns
    -------
    list of str
        The keys installed.

    Raises
    ------
    CacheRefused
        ``blob`` is not an export, was exported for another model (digest) or for another
        class, or its payload does not match its checksum; nothing is installed.
    """
    try:
        envelope = pickle.loads(blob)
        ok = isinstance(envelope, dict) and envelope.get("format") == _FORMAT
    except Exception as exc:  # unreadable bytes: refused, never half-installed
        raise CacheRefused(f"not a cache export ({type(exc).__name__}: {exc})") from None
    if not ok:
        raise CacheRefused("not a cache export")
    if envelope.get("model") != digest:
        raise CacheRefused(f"a cache of model {str(envelope.get('model'))[:12]}..., "
                           f"offered for model {str(digest)[:12]}...")  # fmt: skip
    payload = envelope.get("payload")
    if not isinstance(payload, bytes) or hashlib.sha256(payload).hexdigest() != envelope.get(
        "sha256"
    ):
        raise CacheRefused("the cache's bytes do not match their checksum")
    spec = _spec(model)
    entries = pickle.loads(payload)
    if spec is None or not isinstance(entries, dict) or not set(entries) <= set(spec[0]):
        raise CacheRefused(f"not a cache of a {type(model).__name__}")
    if spec[3] is not None:
        entries = spec[3](model, entries)
    cache = cache_of(model)
    installed = []
    for key, value in entries.items():
        if key not in cache:
            cache.setdefault(key, value)
            installed.append(key)
    return installed
