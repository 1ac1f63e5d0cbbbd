"""Strict load-sharing files (issue 15 item 2) and the fuzzer's findings in the GAP reader."""

import io
import json

import numpy as np
import pytest

from coalloc import InstanceError, loadshare
from coalloc.loadshare import io as lio

GOOD = {"format": "coalloc.loadshare.instance", "version": 1, "capacity": [5, 5, 4],
        "job_size": [4, 3, 1], "job_origin": [0, 0, 2], "groups": [0, 0, 1]}  # fmt: skip


@pytest.mark.parametrize("key, value, words", [
    ("capacity", [5, True, 4], r"capacity\[1\]: expected a finite number >= 0, got the boolean"),
    ("job_size", [4, "3", 1], r"job_size\[1\]: expected a finite number"),
    ("job_origin", [0, 0], r"job_origin: expected one node per job \(3"),
    ("job_origin", [0, 0, 3], r"job_origin\[2\]: expected a node index in \[0, 3\), got 3"),
    ("job_origin", [0, 0, 2**63], r"job_origin\[2\]: expected an integer"),
    ("job_origin", [0, 0, 1.0], r"job_origin\[2\]: expected an integer"),
    ("groups", [0, 1], r"groups: expected one group per node \(3"),
    ("group", [0, 0, 1], r"group: unknown key 'group'"),
    ("version", True, r"unsupported version True"),
])  # fmt: skip
def test_bad_problem_files_name_the_field(key, value, words):
    doc = dict(GOOD, **{key: value})
    buf = io.StringIO(json.dumps(doc))
    buf.name = "bad.json"
    with pytest.raises(InstanceError, match=words) as info:
        lio.read_problem(buf)
    assert str(info.value).startswith("bad.json: ")


def test_problem_round_trip_is_exact_including_no_jobs():
    for prob in (lio.problem_from_dict(GOOD), loadshare.LoadSharingProblem([1.0], [], [])):
        first = io.StringIO()
        lio.write_problem(first, prob)
        second = io.StringIO()
        lio.write_problem(second, lio.read_problem(io.StringIO(first.getvalue())))
        assert second.getvalue() == first.getvalue()


def test_gap_numbers_beyond_int64_are_refused_naming_the_file():
    """Fuzzer finding: a 40-digit weight raised OverflowError from NumPy (no file name)."""
    text = " 2 4\n 17 43 3 15 9 11 5 6\n 22 " + "1" * 40 + " 15 10 11 5 6 5\n 32 32\n"
    with pytest.raises(InstanceError, match=r"g\.txt: number 12 \(1111.*\) is too large"):
        lio.parse_gap(text, "g.txt")
    ok = lio.parse_gap(text.replace("1" * 40, "7"), "g.txt")
    assert ok[0].weight[0, 1] == 7


def test_gap_costs_not_exact_as_floats_are_refused_and_the_rest_round_trips():
    """Fuzzer finding: a 16-digit cost was read (costs are float64) but could not be written
    back, since the writer refuses costs that are not exact integers."""
    text = " 2 4\n 17 43 36 {}\n 30 34 49 39\n 22 18 15 10\n 11 5 6 5\n 32 32\n"
    for big in (2**52, -(2**52), 6666666666666647, 2**61):
        with pytest.raises(InstanceError, match=r"g\.txt: instance 1: a cost of \d+ is too large"):
            lio.parse_gap(text.format(big), "g.txt")
    for fine in (2**52 - 1, -(2**52 - 1), 0):
        got = lio.parse_gap(text.format(fine), "g.txt")[0]
        out = io.StringIO()
        lio.write_gap(out, got)
        again = lio.parse_gap(out.getvalue(), "g.txt")[0]
        assert int(again.cost[0, 3]) == fine
        assert np.array_equal(again.cost, got.cost)


def test_unknown_keys_with_a_newline_stay_on_one_line():
    """Fuzzer finding: a key holding a newline split the error message over two lines."""
    buf = io.StringIO(json.dumps(dict(GOOD, **{"versi\n": 1})))
    buf.name = "bad.json"
    with pytest.raises(InstanceError, match=r"unknown key 'versi\\n'") as info:
        lio.read_problem(buf)
    assert "\n" not in str(info.value)


def test_verify_placement_reports_bad_entries_instead_of_raising():
    """Fuzzer findings: 'x', 1e400 (inf) and 10**400 in a result file raised ValueError,
    OverflowError or TypeError from int(); they are placement problems."""
    prob = loadshare.LoadSharingProblem([4, 4], [3, 3], [0, 0])
    for bad in ("x", float("inf"), 10**400, None, [1], 2, -1, 0.5, True):
        rep = loadshare.verify_placement(prob, [0, bad])
        assert not rep.ok and "job 1 is placed on" in rep.problems[0], (bad, rep.problems)
    assert loadshare.verify_placement(prob, [0, 1.0]).ok
    for bad_placement in (None, 3, "01", {"0": 1}):
        with pytest.raises(TypeError, match="placement must be a sequence"):
            loadshare.verify_placement(prob, bad_placement)
    with pytest.raises(TypeError, match="claimed must be a number"):
        loadshare.verify_placement(prob, [0, 1], claimed="6")
    with pytest.raises(ValueError, match="claimed is too large"):
        loadshare.verify_placement(prob, [0, 1], claimed=10**400)


def test_cli_verify_names_the_result_file(tmp_path, capsys):
    from coalloc.cli import main

    lio.write_problem(tmp_path / "p.json", lio.problem_from_dict(GOOD))
    (tmp_path / "r.json").write_text('{"placement": null}')
    assert main(["loadshare", "verify", str(tmp_path / "p.json"), str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert "r.json: placement must be a sequence" in err and "Traceback" not in err


def test_values_whose_sum_overflows_are_refused():
    """Fuzzer finding: capacities of 1e308 passed the model, then verify's fsum overflowed."""
    with pytest.raises(ValueError, match="capacity sums to more than the largest float"):
        loadshare.LoadSharingProblem([1e308, 1e308], [1.0], [0])
    with pytest.raises(ValueError, match="job_size sums to more than the largest float"):
        loadshare.LoadSharingProblem([1.0], [1e308, 1e308], [0, 0])
    buf = io.StringIO(json.dumps(dict(GOOD, capacity=[1e308, 1e308, 1])))
    buf.name = "big.json"
    with pytest.raises(InstanceError, match="big.json: capacity sums to more"):
        lio.read_problem(buf)
    assert loadshare.LoadSharingProblem([1e307, 1e307], [1.0], [0]).n_nodes == 2


GAP_TEXT = " 2 4\n 17 43 3 15 9 11 5 6\n 22 7 15 10 11 5 6 5\n 32 32\n"


@pytest.mark.parametrize("token, shown", [
    ("1_0", "'1_0'"),  # int() reads 10
    ("\u0661\u0660", "'١٠'"),  # Arabic-Indic digits: int() reads 10
    ("\uff11\uff10", "'１０'"),  # full-width digits
    ("1\u00a00", "'1\\xa00'"),  # a no-break space is not a separator of the format
    ("1\x1c0", "'1\\x1c0'"),  # nor is a file separator (str.split() splits there)
])  # fmt: skip
def test_gap_reader_takes_ascii_integers_only(token, shown):
    """Issue 30 item 9: the GAP reader read 1_0 and Unicode digits as numbers."""
    with pytest.raises(InstanceError) as info:
        lio.parse_gap(GAP_TEXT.replace(" 32\n", f" {token}\n"), "g.txt")
    assert str(info.value) == f"g.txt: not an integer: {shown}"
    good = lio.parse_gap(GAP_TEXT.replace(" 32\n", " +10\n"), "g.txt")[0]
    assert good.capacity.tolist() == [32, 10]


def test_unbounded_parameters_are_bounded():
    """Issue 30 item 9: GAP iterations and DMCF generations without an upper bound ran for
    ever (or overflowed the kernel's int64) when nothing stopped them."""
    from coalloc.loadshare import dmcf, gap

    inst = loadshare.generate_gap("a", 2, 6, seed=1)
    with pytest.raises(ValueError, match=r"iterations must be an integer in \[0, 1000000000\]"):
        loadshare.solve_gap(inst, "heuristic", iterations=10**30)
    assert loadshare.solve_gap(inst, "heuristic", iterations=gap.MAX_ITERATIONS // 10**6).status
    prob = loadshare.LoadSharingProblem([5, 5], [3, 4], [0, 0])
    for name in ("max_generations", "patience"):
        with pytest.raises(ValueError, match=rf"{name} must be an integer in \[\d, 10000000\]"):
            loadshare.dmcf_gga(prob, coalition_size=1, **{name: dmcf.MAX_GENERATIONS + 1})
    with pytest.raises(ValueError, match=r"chunks must be an integer in \[1, 1000000\]"):
        loadshare.dmcf_gga(prob, coalition_size=1, chunks=10**30)


def test_generators_refuse_what_cannot_fit_before_allocating():
    """A 100000 x 100000 GAP and a grid of 1e11 nodes raised MemoryError from NumPy; sizes
    far below the totals drew jobs for ever."""
    with pytest.raises(ValueError, match="GAP instance of 100000 x 100000 needs about"):
        loadshare.generate_gap("a", 100000, 100000)
    with pytest.raises(ValueError, match="grid of 100000000000 nodes needs about"):
        loadshare.generators.paper_setup(10**11)
    with pytest.raises(ValueError, match=r"would draw about .* jobs \(at most 1e8\)"):
        loadshare.generators.paper_setup(10, job_size=(1e-6, 1e-6))
    with pytest.raises(ValueError, match="light must be"):
        loadshare.generators.paper_setup(10, light=(float("inf"), 1.0))
    assert loadshare.generators.paper_setup(10).n_nodes == 10
