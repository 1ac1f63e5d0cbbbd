"""Layer moves inside a timed multilevel search (``timedorder.layers_in_search``; h59edge
follow-up): untimed nothing changes; timed, the run's best link-bound finest answer is
lowered and offered, the tries capped (``layer_refine(tries=...)``), a run whose call keeps
nothing gets no more calls, a deadline inside keeps the moves kept. Every answer verified."""

import numpy as np
import pytest

import coalloc.taskmap as tm
from coalloc._shared import interrupt
from coalloc.taskmap import layermoves, timedorder
from coalloc.taskmap.refinement import RefineState

from ._layered_case import found as _found
from ._layered_case import layered_case as _case
from ._layered_case import verified as _verified


class _Inc:
    def __init__(self, value, timed=True, early=None):
        self.early_by = 1.0 if timed else None
        self.value, self.offers = value, []
        self.early, self.early_best = (np.inf, None) if early is None else early

    def offer(self, value, m, depth, history, **counts):
        self.offers.append((value, m.copy(), depth))
        self.value = min(self.value, value)

    def offer_early(self, value, m, history, **counts):  # (as _Incumbent's: lower only)
        if value < min(self.value, self.early) * (1 - 1e-12):
            self.early, self.early_best = value, (m.copy(), list(history), counts)
            self.offers.append((value, m.copy(), "held"))


def test_untimed_the_start_is_returned_unchanged_and_nothing_offered():
    tasks, res, topo, fine, m = _case()
    found, inc, run = _found(topo, fine, m), _Inc(np.inf, timed=False), {"moves": 0}
    inc.value = found[0]
    assert timedorder.layers_in_search(topo, fine, found, inc, run, res.links) is found
    assert inc.offers == [] and run == {"moves": 0}


def test_off_the_start_is_returned_unchanged(monkeypatch):
    monkeypatch.setattr(timedorder, "LAYERS_SEARCH", False)
    tasks, res, topo, fine, m = _case()
    found = _found(topo, fine, m)
    inc = _Inc(found[0])
    assert timedorder.layers_in_search(topo, fine, found, inc, {"moves": 0}, res.links) is found
    assert inc.offers == []


def test_timed_the_best_start_is_lowered_offered_and_verified(monkeypatch):
    """SEARCH_REPLACE True: offered to the run and returned as the start's answer."""
    monkeypatch.setattr(timedorder, "SEARCH_REPLACE", True)
    tasks, res, topo, fine, m = _case()
    found = _found(topo, fine, m)
    inc, run = _Inc(found[0]), {"moves": 0}
    out = timedorder.layers_in_search(topo, fine, found, inc, run, res.links)
    assert out[0] < found[0] * (1 - 1e-9)
    assert _verified(tasks, res, topo, out[1], out[0]) == pytest.approx(out[0])
    assert len(inc.offers) == 1 and inc.offers[0][0] == out[0] and inc.offers[0][2] == 0
    assert np.array_equal(inc.offers[0][1], out[1]) and run["moves"] > 0
    assert out[3:] == found[3:] and out[2][-1] == out[0]


def test_timed_by_default_the_lowered_answer_is_held_and_the_start_unchanged():
    """SEARCH_REPLACE False (the default): held by offer_early, the start returned as it
    was (the run's own choices unchanged); a second call goes on from the held answer."""
    assert timedorder.SEARCH_REPLACE is False
    tasks, res, topo, fine, m = _case()
    found = _found(topo, fine, m)
    inc, run = _Inc(found[0]), {"moves": 0}
    assert timedorder.layers_in_search(topo, fine, found, inc, run, res.links) is found
    assert len(inc.offers) == 1 and inc.offers[0][2] == "held"
    value, held = inc.offers[0][0], inc.offers[0][1]
    assert value < found[0] * (1 - 1e-9) and inc.early == value
    assert _verified(tasks, res, topo, held, value) == pytest.approx(value)
    timedorder.layers_in_search(topo, fine, found, inc, run, res.links)
    assert inc.early <= value and all(v <= value for v, _, _ in inc.offers[1:])


def test_a_start_that_is_not_the_runs_best_is_left():
    tasks, res, topo, fine, m = _case()
    found = _found(topo, fine, m)
    inc = _Inc(found[0] * 0.5)  # another start is better
    assert timedorder.layers_in_search(topo, fine, found, inc, {"moves": 0}, res.links) is found
    assert inc.offers == []


def test_the_held_early_answer_is_moved_when_it_is_the_best():
    """After the grown starts (``found`` None) the answer held by ``offer_early`` is the one
    moved, and held again (lower)."""
    tasks, res, topo, fine, m = _case()
    value = _found(topo, fine, m)[0]
    inc = _Inc(np.inf, early=(value, (m.copy(), [value], {})))
    assert timedorder.layers_in_search(topo, fine, None, inc, {"moves": 0}, res.links) is None
    assert inc.offers and inc.early == inc.offers[-1][0] < value * (1 - 1e-9)
    assert _verified(tasks, res, topo, inc.early_best[0], inc.early) == pytest.approx(inc.early)


def test_a_call_that_keeps_nothing_ends_the_runs_calls(monkeypatch):
    tasks, res, topo, fine, m = _case()
    found, run = _found(topo, fine, m), {"moves": 0}
    monkeypatch.setattr(timedorder, "SEARCH_TRIES", 0)  # no try: nothing kept
    assert timedorder.layers_in_search(topo, fine, found, _Inc(found[0]), run, res.links) is found
    assert run["layers_idle"] is True
    monkeypatch.setattr(timedorder, "SEARCH_TRIES", 16)
    inc = _Inc(found[0])
    assert timedorder.layers_in_search(topo, fine, found, inc, run, res.links) is found
    assert inc.offers == []


@pytest.mark.parametrize("tries", [1, 2, 3])
def test_the_tries_cap_counts_the_bottleneck_moves_calls(monkeypatch, tries):
    tasks, res, topo, fine, m = _case()
    calls, real = [0], layermoves.refine

    def spy(state, k):
        calls[0] += 1
        return real(state, k)

    monkeypatch.setattr(layermoves, "refine", spy)
    st = RefineState(topo, fine, m.copy())
    before = st.maximum()
    layermoves.layer_refine(topo, res.links, st, tries=tries)
    assert calls[0] <= tries and st.maximum() <= before * (1 + 1e-12)


def test_a_deadline_inside_keeps_the_moves_kept_and_raises(monkeypatch):
    """The deadline passes in the second try's bottleneck moves: the first try's layer move
    (kept) is offered, then the deadline is raised again."""
    tasks, res, topo, fine, m = _case()
    found = _found(topo, fine, m)
    calls, real = [0], layermoves.refine

    def spy(state, k):
        calls[0] += 1
        if calls[0] == 2:
            raise interrupt.DeadlinePassed()
        return real(state, k)

    monkeypatch.setattr(layermoves, "refine", spy)
    inc = _Inc(found[0])
    with pytest.raises(interrupt.DeadlinePassed):
        timedorder.layers_in_search(topo, fine, found, inc, {"moves": 0}, res.links)
    assert len(inc.offers) == 1
    for value, mapping, _ in inc.offers:
        assert value < found[0] * (1 - 1e-12)
        assert _verified(tasks, res, topo, mapping, value) == pytest.approx(value)


def test_a_timed_solve_with_and_without_the_step_verifies(monkeypatch):
    tasks, res, _, _, _ = _case()
    for on in (False, True):
        monkeypatch.setattr(timedorder, "LAYERS_SEARCH", on)
        r = tm.solve(tasks, res, seed=0, time_limit=2.0)
        report = tm.verify_mapping(tasks, res, r.mapping, claimed=r.max_occupancy)
        assert report.valid and report.matches
