"""One referee for a batch run on another executor: the serial run's answers, and each
result judged by its family's ``verify`` on the object that crossed."""

from __future__ import annotations

from bench.shared.scaling import answer


def same_verified_answers(batch, got, serial) -> None:
    """``got`` gives ``serial``'s answers, each verified alike, most of them solved."""
    assert [answer(r) for r in got] == [answer(r) for r in serial]
    oks = 0
    for inst, result, alone in zip(batch, got, serial):
        report = inst.verify(result)  # the family's referee, on the object that crossed
        assert report.to_dict() == inst.verify(alone).to_dict()
        assert report.ok or result.status == "infeasible"
        oks += report.ok
    assert oks >= len(batch) // 2  # mostly solved: not a comparison of empty answers
