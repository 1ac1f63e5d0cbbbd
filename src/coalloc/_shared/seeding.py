"""The one seed policy of the package.

* A user ``seed`` is an int (or None for fresh entropy). :func:`check_seed` validates it;
  :func:`resolve_seed` also turns None into a fresh seed drawn from the operating system,
  which a randomised method records in its result (``result.seed``), so that a run with
  ``seed=None`` can be replayed: solving again with ``seed=result.seed`` gives its answer.
* :func:`streams` turns a seed into named :class:`numpy.random.SeedSequence` streams
  (children of ``SeedSequence(seed)``, spawned in the order of the names), and
  :func:`stream_seed` gives the 32-bit word a stream hands to NumPy.
* :func:`kernel_seed` is the one helper that derives the explicit 64-bit seed a compiled
  kernel's xoshiro generator takes (and its twin's, :mod:`coalloc._shared.xoshiro`): from the
  user's seed and a stream name, from a ``SeedSequence`` or a ``Generator``, or the seed
  itself. Every family derives its kernels' seeds through it; the forms that families used
  before there was one helper (a 32-bit stream word, a 63-bit draw) are kept as ``bits=``
  so that every seed gives the answers it gave before.
* :func:`instance_seed` is the seed of instance ``i`` of a batch.

No function here touches NumPy's global generator; the same seed gives the same answer
whatever the thread count or executor.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence

import numpy as np

__all__ = [
    "check_seed",
    "resolve_seed",
    "fresh_seed",
    "streams",
    "stream_seed",
    "kernel_seed",
    "instance_seed",
    "MASK64",
]

MASK64 = (1 << 64) - 1


def check_seed(seed: Any, argname: str = "seed") -> Optional[int]:
    """Validate a user seed: an int (NumPy integers accepted) or None.

    Raises
    ------
    TypeError
        For anything else (bools included), naming ``argname``.
    """
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"{argname} must be an int or None, got {type(seed).__name__}")
    return int(seed)


def fresh_seed() -> int:
    """A fresh 64-bit seed from the operating system's entropy (what ``seed=None`` means).

    Returns
    -------
    int
        A seed in ``[0, 2**64)``.
    """
    return int(np.random.SeedSequence().entropy) & MASK64


def resolve_seed(seed: Any, argname: str = "seed") -> int:
    """Validate a user seed and make it concrete: None becomes :func:`fresh_seed`.

    A randomised method calls it once, on entry, derives every stream and kernel seed from
    the value it returns, and records that value in its result, so that a run with
    ``seed=None`` draws fresh entropy and can still be replayed.

    Parameters
    ----------
    seed : int or None
    argname : str
        The name the error message gives the argument.

    Returns
    -------
    int
        ``seed`` itself, or a fresh seed when it is None.

    Raises
    ------
    TypeError
        As :func:`check_seed`.

    Examples
    --------
    >>> resolve_seed(7)
    7
    >>> resolve_seed(None) != resolve_seed(None)
    True
    """
    seed = check_seed(seed, argname)
    return fresh_seed() if seed is None else seed


def streams(seed: Any, names: Sequence[str]) -> Dict[str, np.random.SeedSequence]:
    """Independent named streams of ``seed``: ``SeedSequence(seed).spawn(len(names))``.

    Parameters
    ----------
    seed : int, SeedSequence or None
    names : sequence of str
        One name per stream; the order fixes which child each name gets, so a family must
        append new streams at the end to keep its old answers.

    Returns
    -------
    dict of str to SeedSequence
    """
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return dict(zip(names, ss.spawn(len(names))))


def stream_seed(stream: np.random.SeedSequence) -> int:
    """The first 32-bit word of a stream: the seed NumPy or a kernel is given."""
    return int(stream.generate_state(1)[0])


def kernel_seed(
    seed: Any,
    stream: Optional[str] = None,
    *,
    names: Optional[Sequence[str]] = None,
    bits: int = 64,
) -> int:
    """The explicit seed of a compiled kernel (and of its twin), derived from a user's seed.

    Every family derives its kernels' seeds here, in one of these forms:

    * ``kernel_seed(seed, stream, names=STREAMS)``: the stream ``stream`` of ``seed``, that
      is child ``names.index(stream)`` of ``SeedSequence(seed).spawn(len(names))`` (see
      :func:`streams`), and its first 64-bit word;
    * ``kernel_seed(seed)`` with an int: the seed itself, modulo ``2**64``;
    * ``kernel_seed(ss)`` with a ``SeedSequence``: its first 64-bit word;
    * ``kernel_seed(rng)`` with a ``Generator``: one draw (a new seed per call: a kernel
      called several times from one stream);
    * ``kernel_seed(None)``: fresh entropy.

    ``bits`` keeps the two forms older families used, so that their answers stay the same:
    ``bits=32`` is a stream's (or a ``SeedSequence``'s) first 32-bit word
    (:func:`stream_seed`), ``bits=63`` a ``Generator``'s ``integers(2**63)``.

    Parameters
    ----------
    seed : int, SeedSequence, Generator or None
        The user's seed (or a stream or a generator derived from it).
    stream : str, optional
        The stream's name; requires ``names``.
    names : sequence of str, optional
        The family's ordered stream names (new streams are appended at the end).
    bits : {64, 32, 63}, default 64
        64 for every new kernel; 32 and 63 are the legacy forms above.

    Returns
    -------
    int
        A seed in ``[0, 2**bits)`` (an int seed without a stream: ``seed mod 2**64``).

    Raises
    ------
    TypeError
        For a seed of another type.
    ValueError
        For a stream without ``names`` or not among them, or a ``bits`` the form does
        not take.

    Examples
    --------
    >>> kernel_seed(5)
    5
    >>> kernel_seed(5, "migrate", names=("init", "migrate")) == kernel_seed(
    ...     streams(5, ("init", "migrate"))["migrate"])
    True
    """
    if stream is not None:
        if names is None or stream not in names:
            raise ValueError(f"stream {stream!r} must be one of the names given, got {names!r}")
        if isinstance(seed, np.random.Generator):
            raise TypeError(
                "a stream is derived from an int seed or a SeedSequence, not a Generator"
            )
        seed = streams(check_seed(seed) if not isinstance(seed, np.random.SeedSequence) else seed,
                       names)[stream]  # fmt: skip
    if isinstance(seed, np.random.SeedSequence):
        if bits == 32:
            return int(seed.generate_state(1)[0])
        _bits(bits, (64, 32))
        return int(seed.generate_state(1, dtype=np.uint64)[0])
    if isinstance(seed, np.random.Generator):
        if bits == 63:
            return int(seed.integers(2**63))
        _bits(bits, (64, 63))
        return int(seed.integers(0, 2**64, dtype=np.uint64))
    _bits(bits, (64,))
    if seed is None:
        return int(np.random.SeedSequence().generate_state(1, dtype=np.uint64)[0])
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(
            f"seed must be an int, a numpy Generator, a SeedSequence or None, got "
            f"{type(seed).__name__}"
        )
    return int(seed) & MASK64


def _bits(bits: int, allowed: tuple) -> None:
    if bits not in allowed:
        raise ValueError(f"bits must be one of {allowed} for this form, got {bits!r}")


def instance_seed(seed: int, index: int) -> int:
    """The seed instance ``index`` of a batch with seed ``seed`` is solved with.

    It is the first 32-bit word of ``numpy.random.SeedSequence(seed).spawn(index + 1)[index]``
    (computed directly, without spawning the earlier children): independent streams for
    the instances, a function of ``seed`` and ``index`` only. To re-solve one instance of a
    batch on its own: ``coalloc.solve(request, offer, seed=instance_seed(seed, index))``.

    Parameters
    ----------
    seed : int
        The batch seed (non-negative).
    index : int
        Position of the instance in the batch (non-negative).

    Returns
    -------
    int
        A seed in ``[0, 2**32)``.

    Examples
    --------
    >>> from coalloc.batch import instance_seed
    >>> instance_seed(7, 1) == instance_seed(7, 1) != instance_seed(7, 2)
    True
    """
    for name, value in (("seed", seed), ("index", index)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    seq = np.random.SeedSequence(int(seed), spawn_key=(int(index),))
    return int(seq.generate_state(1, np.uint32)[0])
