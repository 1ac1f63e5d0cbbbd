"""Limits of the CTAAP solver: a batch's timeout reaches the NumPy twins' loops."""

from __future__ import annotations

import coalloc
from tests._timeouts import assert_times_out


def test_a_thread_batch_timeout_stops_the_numpy_twins():
    # step 1 on the twins runs for many seconds (its setup, one vectorised pass, ~0.3 s)
    request, offer = coalloc.generators.fig2(2, n_tasks=150, n_clusters=10, seed=1)
    assert_times_out(coalloc.ctaap.Instance(request, offer), "ctaap", backend="numpy",
                     local_search=0)  # fmt: skip
