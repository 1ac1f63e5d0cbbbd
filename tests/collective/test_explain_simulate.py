"""The simulator's "why not" (issue 38): every rejection it explains, judged by brute force.

Each booking of the run is captured (``on_booking``), so the timetables a rejected request
met are rebuilt independently of the simulator; on them the family's ``brute_force`` method
(every start, every node set; not the scan the explanation uses) must reject the recorded
conflict, accept every recorded fix, accept the request at its ``nearest_start`` and reject
it at any start before that.
"""

from __future__ import annotations

import json

import pytest

import coalloc.collective as co
from coalloc.cli import main
from coalloc.collective.simulate import simulate


def _fits(pool, doc) -> bool:
    return co.coallocate(pool, co.CollectiveRequest(**doc), "brute_force").has_solution


def _stream(seed):
    """A small pool and six requests, several of which it must reject."""
    pool, _ = co.generators.random_instance(5, 2, n_properties=2, load=0.3, seed=seed)
    reqs = []
    for k in range(6):
        _, req = co.generators.random_instance(5, 2 + (k + seed) % 3, n_properties=2,
                                               collective=bool(k % 2), seed=100 * seed + k)
        doc = {**req.to_dict(), "duration": 900.0 + 300 * (k % 3)}
        doc["latest_start"] = doc["earliest_start"] + 900.0  # a narrow window: rejections
        reqs.append((60.0 * k, co.CollectiveRequest(**doc)))  # fmt: skip
    return pool, reqs


@pytest.mark.parametrize("seed", range(8))
def test_every_explained_rejection_holds_on_the_timetables_it_met(seed):
    pool, reqs = _stream(seed)
    booked = []
    sim = simulate(pool, reqs, explain=True, explain_time=20.0, explain_budget=600.0,
                   on_booking=lambda q, r, res, p: booked.append(
                       (q, res.start, r.duration, res.resources, res.amounts)))  # fmt: skip
    assert any(not rec["accepted"] for rec in sim.records)  # something to judge
    for q, rec in enumerate(sim.records):
        if rec["accepted"]:
            assert "explained" not in rec
            continue
        assert rec["explained"] == "yes", rec  # the scan is the method: every "no" is proved
        met = pool.copy()
        for q2, start, dur, nodes, amounts in booked:
            if q2 < q:
                met.reserve(start, dur, nodes, amounts)
        e = rec["explanation"]
        assert e["sound"] is True and not _fits(met, e["conflict"])
        for r in e["relaxations"]:
            assert r["checked"] and _fits(met, r["changes"]["request"]), r["sentence"]
        later = [r for r in e["relaxations"] if r["kind"] == "later_start"]
        if rec["nearest_start"] is None:
            assert not later
            continue
        moved = later[0]["changes"]["request"]
        assert moved["latest_start"] == rec["nearest_start"] and _fits(met, moved)
        before = dict(moved, latest_start=rec["nearest_start"] - 1.0)
        assert before["latest_start"] < moved["earliest_start"] or not _fits(met, before)


def test_explanations_stop_when_the_budget_is_spent():
    pool = co.ResourcePool([[4.0], [4.0]], ["cores"])
    reqs = [(0.0, co.CollectiveRequest(3600, 2, 0, 600, {"cores": 3}))] * 4
    sim = simulate(pool, reqs, explain=True, explain_budget=1e-9)
    assert [r.get("explained") for r in sim.records] == [None] + ["budget spent"] * 3
    assert all(r["explanation"] is None for r in sim.records[1:])


def test_without_explain_the_records_are_unchanged():
    pool = co.ResourcePool([[4.0], [2.0]], ["cores"])
    reqs = [(0.0, co.CollectiveRequest(600, 2, 0, 600, {"cores": 3}))]
    rec = simulate(pool, reqs).records[0]
    assert not rec["accepted"] and "explanation" not in rec and "explained" not in rec


def test_explain_arguments_are_checked():
    pool = co.ResourcePool([[4.0]], ["cores"])
    reqs = [(0.0, co.CollectiveRequest(600, 1))]
    with pytest.raises(TypeError, match="explain"):
        simulate(pool, reqs, explain="yes")
    with pytest.raises(ValueError, match="explain_time"):
        simulate(pool, reqs, explain=True, explain_time=0)
    with pytest.raises(ValueError, match="explain_budget"):
        simulate(pool, reqs, explain=True, explain_budget=float("inf"))


def test_simulate_command_writes_the_explanations(tmp_path, capsys):
    pool = co.ResourcePool([[4.0], [4.0]], ["cores"])
    co.io.write_pool(str(tmp_path / "pool.json"), pool)
    one = {"arrival": 0, **co.CollectiveRequest(3600, 2, 0, 600, {"cores": 3}).to_dict()}
    (tmp_path / "w.json").write_text(json.dumps(
        {"format": "coalloc.collective.workload", "version": 1, "requests": [one, one]}))
    out = tmp_path / "records.jsonl"
    assert main(["collective", "simulate", str(tmp_path / "pool.json"), str(tmp_path / "w.json"),
                 "--explain", "--records", str(out)]) == 0  # fmt: skip
    text = capsys.readouterr().out
    summary = json.loads(text[: text.rindex("}") + 1])
    assert summary["explained"] == {"yes": 1}
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    assert recs[1]["nearest_start"] == 3600.0 and "No start fits" in recs[1]["explanation"][
        "sentence"]  # fmt: skip


class _Clock:
    """A clock the test moves: explanations and bookings take the seconds it says."""

    def __init__(self):
        self.now = 0.0

    def monotonic(self):
        return self.now


def test_the_explain_budget_is_a_share_of_the_runs_own_time(monkeypatch):
    import coalloc.collective.explain as explain_mod
    import coalloc.collective.simulate as sim_mod

    clock, given = _Clock(), []

    def explain_request(pool, request, *, time_limit):  # takes 0.4 s of the run's clock
        given.append(time_limit)
        clock.now += 0.4
        return None

    def booked(*_):  # every booking takes 4 s of the run's own time
        clock.now += 4.0

    monkeypatch.setattr(sim_mod, "time", clock)
    monkeypatch.setattr(explain_mod, "explain_request", explain_request)
    pool = co.ResourcePool([[4.0], [4.0]], ["cores"])
    no = co.CollectiveRequest(600, 3, 0, 600)  # 3 nodes of 2: rejected
    yes = co.CollectiveRequest(60, 1, 0, 600)
    reqs = [(float(k), r) for k, r in enumerate([no, no, no, no, yes, no])]
    sim = simulate(pool, reqs, explain=True, explain_time=1.0, explain_share=0.5,
                   on_booking=booked)  # fmt: skip
    # 1 s (explain_time) before the run has any time of its own, then what is left of it;
    # the booking's 4 s grant 2 s more (share 0.5): the last rejection gets a whole 1 s
    assert given == pytest.approx([1.0, 0.6, 0.2, 1.0])
    assert [r.get("explained") for r in sim.records][3:5] == ["budget spent", None]
    # the old absolute cap still holds beside the share
    given.clear()
    clock.now = 0.0
    simulate(pool, reqs, explain=True, explain_time=1.0, explain_budget=0.5, on_booking=booked)
    assert given == pytest.approx([0.5, 0.1])  # 0.5 s in all, whatever the share grants


def test_explain_share_is_checked():
    pool = co.ResourcePool([[4.0]], ["cores"])
    reqs = [(0.0, co.CollectiveRequest(600, 1))]
    for bad in (-0.1, float("inf")):
        with pytest.raises(ValueError, match="explain_share"):
            simulate(pool, reqs, explain=True, explain_share=bad)
    with pytest.raises(TypeError, match="explain_share"):
        simulate(pool, reqs, explain=True, explain_share="half")
