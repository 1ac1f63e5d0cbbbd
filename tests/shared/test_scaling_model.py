"""The batch speed-up model of docs/performance.md (bench/shared/scaling_cpu.predict): a
worker's start (its imports, paid once) is kept apart from its per-instance CPU."""

import pytest
from bench.shared.scaling_cpu import predict
from hypothesis import given, settings
from hypothesis import strategies as st


def _makespan_speedup(s, k, w, start):
    """Independent referee: ``w`` workers on ``w + 1`` cores, instances dealt round-robin,
    each worker paying ``start`` once; the caller idle."""
    loads = [start + s * len(range(j, k, w)) for j in range(w)]
    return s * k / max(loads)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(s=st.floats(1e-4, 1.0), w=st.integers(1, 64), start=st.floats(0.0, 1.0),
       per=st.integers(1, 50))  # fmt: skip
def test_the_start_is_paid_once_per_worker(s, w, start, per):
    k = w * per  # whole rounds: the referee's busiest worker is the mean one
    # what a 2-worker run measures per instance: the serial work plus the two starts
    measured = s + 2 * start / k
    got = predict(s, 0.0, measured, 0.0, 1.0, w, start=start, batch=(k, 2))
    assert got == pytest.approx(_makespan_speedup(s, k, w, start), rel=1e-9)


@settings(max_examples=80, deadline=None, derandomize=True)
@given(s=st.floats(1e-4, 1.0), w=st.integers(1, 64), start=st.floats(0.0, 1.0),
       k=st.integers(1, 400))  # fmt: skip
def test_instances_are_whole_the_busiest_worker_solves_ceil_k_over_w(s, w, start, k):
    """Any batch length: the busiest worker has ceil(k / w) instances (h49pool; the model
    before read k / w, 16.0x for a 57-instance CTAAP batch on 16 workers, at most 14.25x)."""
    measured = s + 2 * start / k
    got = predict(s, 0.0, measured, 0.0, 1.0, w, start=start, batch=(k, 2))
    assert got == pytest.approx(_makespan_speedup(s, k, w, start), rel=1e-9)


def test_a_tenth_of_a_second_caps_16_workers_on_a_10_s_batch_near_14x():
    s, k = 0.01, 1024  # about 10 s of serial work, whole rounds of 16
    assert predict(s, 0.0, s, 0.0, 1.0, 16, batch=(k, 2)) == pytest.approx(16.0)
    capped = predict(s, 0.0, s + 0.2 / k, 0.0, 1.0, 16, start=0.1, batch=(k, 2))
    assert capped == pytest.approx(10.24 / (10.24 / 16 + 0.1))
    assert 13.7 < capped < 13.9


def test_without_a_batch_the_model_is_per_instance():
    assert predict(1.0, 0.1, 1.2, 0.0, 1.1, 16) == pytest.approx(1 / max(1.2 * 1.1 / 16, 0.1,
                                                                           1.3 / 17))  # fmt: skip
