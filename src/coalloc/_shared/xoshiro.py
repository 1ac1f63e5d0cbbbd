"""The Python twin of the compiled kernels' random generator, written once.

Every compiled kernel that draws random numbers uses ``coalloc::Xoshiro256ss`` of
``src/_core/include/coalloc/common/xoshiro.hpp`` (xoshiro256** seeded through splitmix64,
Blackman & Vigna), or, for the counter-based draws of the load-sharing kernels, the
``coalloc::splitmix64`` step of the same header. The NumPy/Python twins of those kernels
(``<family>/_reference/``) reproduce the streams bit for bit with the classes here, so that a
twin returns exactly what its kernel returns:

* :class:`Xoshiro256`: ``next()`` (64-bit word), ``below(bound)`` (``next() % bound``) and
  ``uniform()`` (``(next() >> 11) * 2**-53``), as ``Xoshiro256ss`` does;
* :class:`SplitMix64`: successive splitmix64 outputs of a 64-bit state (``next()``);
* :func:`splitmix64`: one step, ``(new_state, output)``.

Python ints are unbounded, so every operation is masked to 64 bits. Any change here changes
what the twins draw and breaks their parity with the kernels: do not touch the arithmetic.
"""

from __future__ import annotations

from typing import Tuple

__all__ = ["MASK64", "GOLDEN", "splitmix64", "SplitMix64", "Xoshiro256"]

#: ``2**64 - 1``: the mask that keeps Python ints to the kernels' ``uint64_t``.
MASK64 = (1 << 64) - 1
#: splitmix64's increment (the golden ratio in 64 bits).
GOLDEN = 0x9E3779B97F4A7C15


def splitmix64(x: int) -> Tuple[int, int]:
    """One splitmix64 step from state ``x``: ``(x + GOLDEN, output)``, both 64-bit.

    Parameters
    ----------
    x : int
        The state (taken modulo ``2**64``).

    Returns
    -------
    tuple of int
        The advanced state and the output word, as ``coalloc::splitmix64`` gives them.

    Examples
    --------
    >>> splitmix64(0)[1] == 0xE220A8397B1DCDAF
    True
    """
    x = (int(x) + GOLDEN) & MASK64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return x, z ^ (z >> 31)


def _rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (64 - k))) & MASK64


class SplitMix64:
    """Successive splitmix64 outputs of a 64-bit state (the draws of ``_gapls``).

    Parameters
    ----------
    seed : int
        The initial state (taken modulo ``2**64``).
    """

    def __init__(self, seed: int) -> None:
        self.state = int(seed) & MASK64

    def next(self) -> int:
        """Advance the state and return the next 64-bit output."""
        self.state, z = splitmix64(self.state)
        return z


class Xoshiro256:
    """xoshiro256** seeded through splitmix64: the twin of ``coalloc::Xoshiro256ss``.

    The four state words are four successive splitmix64 outputs of ``seed``.

    Parameters
    ----------
    seed : int
        The 64-bit seed (taken modulo ``2**64``).

    Examples
    --------
    >>> a, b = Xoshiro256(7), Xoshiro256(7)
    >>> [a.next() for _ in range(3)] == [b.next() for _ in range(3)]
    True
    >>> 0 <= Xoshiro256(1).below(10) < 10 and 0.0 <= Xoshiro256(1).uniform() < 1.0
    True
    """

    def __init__(self, seed: int) -> None:
        x = int(seed) & MASK64
        self.s = []
        for _ in range(4):
            x, z = splitmix64(x)
            self.s.append(z)

    def next(self) -> int:
        """The next 64-bit word."""
        s = self.s
        result = (_rotl((s[1] * 5) & MASK64, 7) * 9) & MASK64
        t = (s[1] << 17) & MASK64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 45)
        return result

    def below(self, bound: int) -> int:
        """Uniform integer in ``[0, bound)``, ``bound >= 1``: ``next() % bound`` (the
        kernels' rule, modulo bias at most ``bound / 2**64``)."""
        return self.next() % int(bound)

    def uniform(self) -> float:
        """Uniform float in ``[0, 1)`` with 53 random bits: ``(next() >> 11) * 2**-53``."""
        return float(self.next() >> 11) * 2.0**-53
