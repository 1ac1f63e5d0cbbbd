"""Slow, obviously-correct NumPy versions of every compiled kernel.

The tests compare each compiled kernel with its twin here on many random inputs; the
benchmarks time them side by side. Nothing in the solvers imports this package.
"""
