"""Micro-benchmarks: every compiled kernel against its NumPy twin (pytest-benchmark).

Kept out of the default test run (pytest's testpaths is tests/); run with

    python -m pytest bench/ctaap/test_kernels.py --benchmark-only
    python -m pytest bench/ctaap/test_kernels.py --benchmark-only --benchmark-group-by=param:n

Inputs are the paper's Fig. 2 (n = 50) and Fig. 3 (n = 500) setups, fixed seeds.
"""

import numpy as np
import pytest

from coalloc.ctaap import _bmatching, _cleanup, _softassign, _violations
from coalloc.ctaap._reference import cleanup as ref_cleanup
from coalloc.ctaap._reference import matching as ref_matching
from coalloc.ctaap._reference import softassign as ref_softassign
from coalloc.ctaap._reference import violations as ref_violations
from coalloc.ctaap.generators import fig2, fig3
from coalloc.ctaap.model import KernelLinks, RankedLinks, compatibility

SIZES = [50, 500]
IMPLS = ["compiled", "numpy"]


def instance(n):
    req, off = fig2(2, seed=1) if n == 50 else fig3(n, seed=1)
    B, BT = req.bandwidth, req.bandwidth_transpose
    compat = compatibility(req, off).view(np.uint8)
    rank, order = _softassign.edge_ranks(B.indptr, B.indices, B.data, off.bandwidth)
    rng = np.random.default_rng(0)
    X = 1.0 + 1e-3 * rng.random((n + 1, off.m + 1))
    weights = rng.random((n, off.m))
    assign = np.where(compat.any(axis=1), np.argmax(compat, axis=1), -1).astype(np.int64)
    return dict(req=req, off=off, B=B, BT=BT, compat=compat, rank=rank, order=order, X=X,
                weights=weights, assign=assign)  # fmt: skip


CASES = {n: instance(n) for n in SIZES}


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("n", SIZES)
def test_compute_q(benchmark, n, impl):
    c = CASES[n]
    B = c["B"]
    Q = np.empty((n, c["off"].m))
    args = (B.indptr, B.indices, c["rank"], c["order"], c["X"], 0.0, -1.0)
    if impl == "compiled":
        benchmark(_softassign.compute_q, *args, Q)
    else:
        benchmark(ref_softassign.compute_q_reference, *args)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("n", SIZES)
def test_sinkhorn(benchmark, n, impl):
    c = CASES[n]
    cap = c["off"].capacity
    if impl == "compiled":
        benchmark(lambda: _softassign.sinkhorn(c["X"].copy(), cap, 30, 0.0))
    else:
        benchmark(ref_softassign.sinkhorn_reference, c["X"], cap, 30, 0.0)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("n", SIZES)
def test_graduated_assignment(benchmark, n, impl):
    c = CASES[n]
    B, off = c["B"], c["off"]
    ranked = RankedLinks(B.indptr, B.indices, c["rank"], c["order"], B.indptr, B.indices,
                         c["rank"], c["order"])  # fmt: skip
    args = (ranked, c["compat"], off.capacity)
    plan = {"symmetric": True, "f_ok": 0.0, "f_bad": -1.0, "q_scale": 1.0, "beta0": 0.5,
            "beta_f": 10.0, "beta_r": 1.075, "max_outer": 4, "max_inner": 30,
            "tol_outer": 1e-2, "tol_inner": 1e-2}  # fmt: skip
    if impl == "compiled":
        benchmark(lambda: _softassign.graduated_assignment(*args, c["X"].copy(), plan))
    else:
        benchmark.pedantic(ref_softassign.graduated_assignment_reference,
                           args=(*args, c["X"], plan), rounds=3)  # fmt: skip


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("n", SIZES)
def test_violation_counts(benchmark, n, impl):
    c = CASES[n]
    B = c["B"]
    args = (B.indptr, B.indices, B.data, c["off"].bandwidth, c["assign"])
    if impl == "compiled":
        benchmark(_violations.violation_counts, *args, np.empty(n, dtype=np.int64))
    else:
        benchmark(ref_violations.violation_counts_reference, *args)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("n", SIZES)
def test_b_matching(benchmark, n, impl):
    c = CASES[n]
    args = (c["weights"], c["compat"], c["off"].capacity, True)
    if impl == "compiled":
        benchmark(_bmatching.b_matching, *args)
    else:
        benchmark(ref_matching.b_matching_reference, *args)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("n", SIZES)
def test_match_and_clean(benchmark, n, impl):
    """Steps 2-3: compiled fused loop vs the literal loop (full recount every round)."""
    c = CASES[n]
    B, BT, off = c["B"], c["BT"], c["off"]
    links = KernelLinks(B.indptr, B.indices, B.data, BT.indptr, BT.indices, BT.data)
    args = (links, off.bandwidth, c["weights"], c["compat"], off.capacity, True)
    if impl == "compiled":
        benchmark(lambda: _cleanup.match_and_clean(*args, np.empty(n, dtype=np.int64)))
    else:
        benchmark.pedantic(ref_cleanup.match_and_clean_reference, args=args, rounds=3)
