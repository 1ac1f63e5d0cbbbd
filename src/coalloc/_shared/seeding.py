"""The one seed policy of the package.

* A user ``seed`` is an int (or None for fresh entropy). :func:`check_seed` validates it.
* :func:`streams` turns it into named :class:`numpy.random.SeedSequence` streams (children
  of ``SeedSequence(seed)``, spawned in the order of the names), and :func:`stream_seed`
  gives the 32-bit word a stream hands to NumPy or a kernel.
* :func:`kernel_seed` gives the explicit 64-bit seed a compiled kernel's xoshiro generator
  takes, from an int, a ``SeedSequence``, a ``Generator`` or None.
* :func:`instance_seed` is the seed of instance ``i`` of a batch.

No function here touches NumPy's global generator; the same seed gives the same answer
whatever the thread count or executor.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence

import numpy as np

__all__ = ["check_seed", "streams", "stream_seed", "kernel_seed", "instance_seed", "MASK64"]

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


def kernel_seed(seed: Any) -> int:
    """The explicit 64-bit seed of a compiled kernel.

    An int is taken modulo ``2**64``; a ``SeedSequence`` gives its first 64-bit word; a
    ``Generator`` draws one; None draws fresh entropy.

    Raises
    ------
    TypeError
        For anything else.
    """
    if seed is None:
        return int(np.random.SeedSequence().generate_state(1, dtype=np.uint64)[0])
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**64, dtype=np.uint64))
    if isinstance(seed, np.random.SeedSequence):
        return int(seed.generate_state(1, dtype=np.uint64)[0])
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(
            f"seed must be an int, a numpy Generator, a SeedSequence or None, got "
            f"{type(seed).__name__}"
        )
    return int(seed) & MASK64


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
