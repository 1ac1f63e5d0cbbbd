"""``coalloc-assign`` / ``coalloc testbed assign-compat``: assign's command line, output and
exit codes (issue 25, deliverable 2), run on Emulab's own unedited test files.

The output is read back by a parser written here from assign's output format (the
sections, the kinds, the ``(srcmac,dstmac)`` pairs), the MAC pairs are compared with the
raw ``.ptop`` text, and every printed mapping and route is checked by the family's
independent ``verify_mapping``.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc import testbed as tb
from coalloc.cli import main as coalloc_main
from coalloc.cli.assign_compat import main as assign_main
from coalloc.cli.assign_compat import run

from .test_io_speed import _mutate

DATA = Path(__file__).parent / "data" / "emulab"
COUNTERS = ("unassigned", "pnode_load", "no_connect", "link_users", "bandwidth", "desires",
            "vclass", "delay", "trivial mix", "subnodes", "max_types", "endpoints")  # fmt: skip


def parse_assign_output(text: str) -> dict:
    """assign's output as Emulab's wrappers read it: the score line, the violation
    counters, the node mapping and each edge's kind, physical links and MAC pairs."""
    lines = text.splitlines()
    out = {"score": None, "violations": None, "counters": {}, "nodes": {}, "unassigned": [],
           "edges": {}, "ended": False}  # fmt: skip
    i = 0
    while i < len(lines) and lines[i] != "Nodes:":
        line = lines[i]
        m = re.match(r"^   BEST SCORE:  (\S+) in (\d+) iters and (\S+) seconds$", line)
        if m:
            out["score"] = float(m.group(1))
        m = re.match(r"^With (\d+) violations$", line)
        if m:
            out["violations"] = int(m.group(1))
        m = re.match(r"^  ([a-z_ ]+): +(\d+)$", line)
        if m:
            out["counters"][m.group(1)] = int(m.group(2))
        i += 1
    assert i < len(lines), "no Nodes: section"
    i += 1
    while lines[i] != "End Nodes":
        tok = lines[i].split()
        if tok[0] == "unassigned:":
            out["unassigned"].append(tok[1])
        else:
            assert len(tok) == 2, lines[i]
            out["nodes"][tok[0]] = tok[1]
        i += 1
    assert lines[i + 1] == "Edges:"
    i += 2
    while lines[i] != "End Edges":
        tok = lines[i].split()
        name, kind, rest = tok[0], tok[1], tok[2:]
        if kind == "Mapping":
            assert rest == ["Failed"], lines[i]
            out["edges"][name] = ("failed", None, None)
        elif kind == "trivial":
            assert len(rest) == 4 and rest[0] == rest[2] and rest[0].endswith(":loopback")
            out["edges"][name] = ("trivial", [], [rest[0][: -len(":loopback")]])
        else:
            assert kind in ("direct", "intraswitch", "interswitch"), lines[i]
            assert len(rest) % 2 == 0, lines[i]
            plinks, macs = rest[0::2], rest[1::2]
            assert all(re.fullmatch(r"\([^,()]*(\(null\))?[^,()]*,[^,()]*(\(null\))?[^,()]*\)",
                                    m) for m in macs), lines[i]  # fmt: skip
            if kind == "direct":  # assign prints the one link twice
                assert len(plinks) == 2 and plinks[0] == plinks[1] and macs[0] == macs[1]
                plinks, macs = plinks[:1], macs[:1]
            elif kind == "intraswitch":
                assert len(plinks) == 2
            out["edges"][name] = (kind, plinks, macs)
        i += 1
    assert lines[i + 1] == "End solution"
    out["ended"] = True
    return out


def raw_macs(ptop_text: str) -> dict:
    """Link name -> '(srcmac,dstmac)' straight from the .ptop text (split on spaces)."""
    macs = {}
    for line in ptop_text.splitlines():
        tok = line.split()
        if tok and tok[0] == "link":
            ends = [t.partition(":")[2] or "(null)" for t in tok[2:4]]
            macs.setdefault(tok[1], f"({ends[0]},{ends[1]})")
    return macs


def run_text(*argv: str) -> tuple:
    buf = io.StringIO()
    status = run([str(a) for a in argv], buf)
    return status, buf.getvalue()


def check_mapped(ptop_file: Path, top_file: Path, text: str) -> dict:
    """Everything printed is a valid mapping of the files (verify_mapping as the referee)."""
    out = parse_assign_output(text)
    top, ptop = tb.read_top(top_file), tb.read_ptop(ptop_file)
    assert out["violations"] == 0 and not out["unassigned"]
    assert out["counters"] == dict.fromkeys(COUNTERS, 0)
    assert list(out["nodes"]) == list(top.nodes)  # in the .top file's order, as assign
    assert list(out["edges"]) == list(top.links)
    routes = {e: (v[1] if v[0] != "trivial" else "trivial") for e, v in out["edges"].items()}
    report = tb.verify_mapping(top, ptop, out["nodes"], routes)
    assert report.ok, report.violations
    macs = raw_macs(ptop_file.read_text())
    for e, (kind, plinks, printed) in out["edges"].items():
        if kind == "trivial":
            assert out["nodes"][top.links[e].a] == out["nodes"][top.links[e].b] == printed[0]
            continue
        n_trunks = sum(ptop.nodes[ptop.links[p].a].is_switch and
                       ptop.nodes[ptop.links[p].b].is_switch for p in plinks)  # fmt: skip
        assert kind == ("interswitch" if n_trunks else "direct" if len(plinks) == 1
                        else "intraswitch"), (e, kind, plinks)  # fmt: skip
        for p, m in zip(plinks, printed):
            assert macs[p.split("#")[0] if p not in macs else p] == m, (p, m)
    return out


MAPPED = [("test.ptop", "test.top"), ("test.ptop", "dtest.top"), ("dtest.ptop", "test.top"),
          ("dtest.ptop", "dtest.top"), ("test2.ptop", "test2a.top"),
          ("test_ugly.ptop", "test.top"), ("test_ugly.ptop", "test_ugly.top"),
          ("test_ugly.ptop", "test2a.top"), ("test2.ptop", "test.top")]  # fmt: skip


@pytest.mark.parametrize("ptop_name, top_name", MAPPED)
def test_emulab_files_mapped_and_checked(ptop_name, top_name):
    status, text = run_text("-s", "1", DATA / ptop_name, DATA / top_name)
    assert status == 0, text
    assert text.startswith("seed = 1\n")
    out = check_mapped(DATA / ptop_name, DATA / top_name, text)
    assert out["score"] is not None and out["ended"]


def test_same_seed_same_output_and_seed_from_environment(monkeypatch):
    args = ("-s", "7", DATA / "test_ugly.ptop", DATA / "test_ugly.top")
    mask = re.compile(r"and \S+ seconds")
    a, b = run_text(*args), run_text(*args)
    assert a[0] == b[0] == 0 and mask.sub("", a[1]) == mask.sub("", b[1])
    monkeypatch.setenv("ASSIGN_SEED", "7")  # as assign: no -s, $ASSIGN_SEED
    c = run_text(DATA / "test_ugly.ptop", DATA / "test_ugly.top")
    assert mask.sub("", c[1]) == mask.sub("", a[1])


def test_options_anywhere_and_x_y_files():
    """GNU getopt as assign's: options after the files, -x/-y naming the files."""
    base = run_text("-s", "3", DATA / "test2.ptop", DATA / "test2a.top")
    moved = run_text(DATA / "test2.ptop", DATA / "test2a.top", "-s", "3", "-p", "-P", "-d",
                     "-H", "2.5", "-c", "0.5", "-S", "pack", "-g", "-o", "-R", "-F")  # fmt: skip
    named = run_text("-y", DATA / "test2a.top", "-x", DATA / "test2.ptop", "-s3", "-f", "text")
    with_params = run_text("-s", "3", DATA / "test2.ptop", DATA / "test2a.top", "spin=1")
    mask = re.compile(r"and \S+ seconds")
    texts = {mask.sub("", t) for _, t in (base, moved, named, with_params)}
    assert len(texts) == 1 and {s for s, _ in (base, moved, named, with_params)} == {0}


@pytest.mark.parametrize("ptop_name, top_name, why", [
    ("test.ptop", "test_ugly.top", "*** 11 nodes of type pc requested, but only 4 available "
                                   "nodes of type pc found"),
    ("test2.ptop", "test_ugly.top", "*** 11 nodes of type pc requested, but only 5 available "
                                    "nodes of type pc found"),
    ("dtest.ptop", "test2a.top", "*** No possible mapping for C"),
])  # fmt: skip
def test_impossible_is_2_with_a_reason(ptop_name, top_name, why):
    status, text = run_text("-s", "1", DATA / ptop_name, DATA / top_name)
    assert status == 2, text
    assert why in text and "Nodes:" not in text
    assert text.splitlines()[-1].startswith("***")
    # and indeed no method here maps it (the exact method proves it)
    r = tb.assign(tb.read_top(DATA / top_name), tb.read_ptop(DATA / ptop_name), "exact")
    assert r.mapping is None and r.status == "infeasible"


def test_policy_and_type_limit_and_fixed_are_2(tmp_path):
    ptop = tmp_path / "p.ptop"
    ptop.write_text((DATA / "dtest.ptop").read_text() + "set-type-limit pc 2\n")
    status, text = run_text("-s", "1", ptop, DATA / "dtest.top")
    assert status == 2 and "you are only allowed to use 2" in text
    ptop.write_text((DATA / "dtest.ptop").read_text() + "policy desire special disallow\n")
    status, text = run_text("-s", "1", ptop, DATA / "dtest.top")
    assert status == 2 and "*** Policy precheck failed!" in text
    top = tmp_path / "t.top"
    top.write_text((DATA / "dtest.top").read_text() + "fix-node A nowhere\n")
    status, text = run_text("-s", "1", DATA / "dtest.ptop", top)
    assert status == 2 and "*** Fixed physical node: nowhere not available." in text


RING_PTOP = (
    "node s1 switch:1\nnode s2 switch:1\nnode a pc:1\nnode b pc:1\nnode c pc:1\nnode d pc:1\n"
    + "".join(f"link {p}{k} {p}:{p}{k} {s} 100 0 0 ethernet\n"
              for p, s in zip("abcd", ["s1", "s1", "s2", "s2"]) for k in range(2))
    + "link t s1 s2 100 0 0 ethernet\n"
)  # fmt: skip
RING_TOP = ("node w pc\nnode x pc\nnode y pc\nnode z pc\nlink l1 w x 100 0 0 ethernet\n"
            "link l2 x y 100 0 0 ethernet\nlink l3 y z 100 0 0 ethernet\n"
            "link l4 z w 100 0 0 ethernet\n")  # fmt: skip


def test_not_found_is_1_retryable_with_the_whole_solution(tmp_path):
    """A 4-ring on two switches joined by one 100 trunk: every split needs 200 across it;
    no counting argument proves it, the mapper gives up: exit 1, assign's sections."""
    (tmp_path / "p.ptop").write_text(RING_PTOP)
    (tmp_path / "t.top").write_text(RING_TOP)
    status, text = run_text("-s", "1", tmp_path / "p.ptop", tmp_path / "t.top")
    assert status == 1, text
    out = parse_assign_output(text)
    assert out["unassigned"] == ["w", "x", "y", "z"] and not out["nodes"]
    assert out["violations"] == out["counters"]["unassigned"] == 4
    assert {k for k, *_ in out["edges"].values()} == {"failed"}
    # the referee agrees that nothing maps it
    r = tb.assign(tb.parse_top(RING_TOP), tb.parse_ptop(RING_PTOP), "exact")
    assert r.mapping is None


def test_trivial_links_and_r_flag(tmp_path):
    (tmp_path / "p.ptop").write_text("node sw switch:1\nnode big pc:2\n"
                                     "link b0 big:eth0 sw 100 0 0 ethernet\n")  # fmt: skip
    (tmp_path / "t.top").write_text("node x pc\nnode y pc\n"
                                    "link l x y 100 0 0 ethernet trivial_ok\n")  # fmt: skip
    status, text = run_text("-s", "1", tmp_path / "p.ptop", tmp_path / "t.top")
    assert status == 0, text
    assert "l trivial big:loopback (big/null,(null)) big:loopback (big/null,(null)) \n" in text
    check_mapped(tmp_path / "p.ptop", tmp_path / "t.top", text)
    # -r: trivial links not allowed; one interface cannot carry the link: impossible
    status, text = run_text("-r", "-s", "1", tmp_path / "p.ptop", tmp_path / "t.top")
    assert status in (1, 2) and "\nl trivial" not in text


def test_summary_and_prechecks_only():
    status, text = run_text("-u", "-s", "1", DATA / "test.ptop", DATA / "test.top")
    assert status == 0 and text.splitlines()[-1] == "End summary"
    assert "Total physical nodes used: 3" in text
    status, text = run_text("-n", "-s", "1", DATA / "test.ptop", DATA / "test.top")
    assert status == 0 and "Nodes:" not in text and "Type precheck passed." in text


BAD_LINES = [
    ("link l9 pa S 100 0\n", "ptop", 14, "link l9 pa S 100 0"),  # a cut line
    ("link l9 pa nowhere 100 0 0 ethernet\n", "ptop", 14, "nowhere"),
    ("link l9 pa S 0 0 0 ethernet\n", "ptop", 14, "bandwidth > 0"),
    ("node pe pc:x\n", "ptop", 14, "pc"),
    ("frob pa\n", "ptop", 14, "frob"),
    ("node pa pc:1\n", "ptop", 14, "'pa' already defined on line 2"),
    ("node pe pc:1 - f:1 - bogus\n", "ptop", 14, "bogus"),
    ("link vl4 A B 100 0\n", "top", 7, "link vl4 A B 100 0"),
    ("link vl4 A Q 100 0 0 ethernet\n", "top", 7, "Q"),
    ("link vl4 A B 100 0 0 ethernet nosuchflag\n", "top", 7, "nosuchflag"),
]  # fmt: skip


@pytest.mark.parametrize("extra, kind, lineno, token", BAD_LINES)
def test_bad_input_is_255_one_line_naming_file_line_token(tmp_path, extra, kind, lineno, token):
    files = {"ptop": tmp_path / "x.ptop", "top": tmp_path / "x.top"}
    files["ptop"].write_text((DATA / "test.ptop").read_text() + (extra if kind == "ptop" else ""))
    files["top"].write_text((DATA / "test.top").read_text() + (extra if kind == "top" else ""))
    status, text = run_text("-s", "1", files["ptop"], files["top"])
    assert status == 255, text
    lines = text.splitlines()
    assert lines[0] == "seed = 1" and len(lines) == 2
    assert lines[1].startswith(f"{files[kind]}:{lineno}: ") and token in lines[1], lines[1]


@pytest.mark.parametrize("argv", [
    ["-q", "a", "b"], ["-s"], ["-s", "x1", "a", "b"], ["only-one-file"], [],
    ["-S", "spread", "a", "b"], ["-l", "soon", "a", "b"], ["-f", "xml", "a", "b"],
])  # fmt: skip
def test_bad_command_line_is_255(argv):
    status, text = run_text(*argv)
    assert status == 255 and text.strip()
    assert "Nodes:" not in text


def test_missing_file_and_bad_cparam_are_255(tmp_path):
    status, text = run_text("-s", "1", tmp_path / "none.ptop", DATA / "test.top")
    assert status == 255 and f"*** Unable to open ptop file {tmp_path / 'none.ptop'}" in text
    status, text = run_text("-s", "1", DATA / "test.ptop", DATA / "test.top", "novalue")
    assert status == 255 and "*** Expected a configuration parameter, got novalue" in text


def test_coalloc_subcommand_and_console_entry(capsys):
    args = ["-s", "1", str(DATA / "test.ptop"), str(DATA / "test.top")]
    assert coalloc_main(["testbed", "assign-compat", *args]) == 0
    via_cli = capsys.readouterr().out
    assert assign_main(args) == 0
    via_entry = capsys.readouterr().out
    mask = re.compile(r"and \S+ seconds")
    assert mask.sub("", via_cli) == mask.sub("", via_entry) == mask.sub("", run_text(*args)[1])
    assert coalloc_main(["testbed", "assign-compat", "-q"]) == 255
    assert coalloc_main(["testbed", "assign-compat", "-s", "1", str(DATA / "test.ptop"),
                         str(DATA / "test_ugly.top")]) == 2  # fmt: skip


@pytest.mark.slow
def test_module_runs_as_a_process():
    """What Emulab's wrapper sees: the exit status of a process and its standard output."""
    proc = subprocess.run([sys.executable, "-m", "coalloc.cli.assign_compat", "-s", "1",
                           str(DATA / "test2.ptop"), str(DATA / "test2a.top")],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    check_mapped(DATA / "test2.ptop", DATA / "test2a.top", proc.stdout)
    proc = subprocess.run([sys.executable, "-m", "coalloc.cli.assign_compat", "-z"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 255


def test_generated_experiments_with_lans_on_a_deterlab_like_testbed(tmp_path):
    """LANs (a virtual LAN node on a switch: 'direct' links to it), inter-switch paths and
    typed nodes: every printed mapping passes verify_mapping, every kind is the path's."""
    from coalloc.testbed import generators as g

    (tmp_path / "t.ptop").write_text(tb.format_ptop(g.deterlab(60, 3, seed=2)))
    kinds = set()
    for s in range(12):
        (tmp_path / "x.top").write_text(tb.format_top(
            g.random_topology(3 + s, seed=s, p_typed=0.3, p_desire=0.3)))  # fmt: skip
        status, text = run_text("-s", s + 1, tmp_path / "t.ptop", tmp_path / "x.top")
        assert status == 0, text
        out = check_mapped(tmp_path / "t.ptop", tmp_path / "x.top", text)
        kinds |= {v[0] for v in out["edges"].values()}
    assert kinds == {"direct", "intraswitch", "interswitch"}


def test_signals_end_it_as_assign_does(monkeypatch, capsys):
    """SIGUSR1 or SIGINT: '*** Killed with signal N - exiting!' and status 2; the previous
    handlers are put back."""
    import os
    import signal

    import coalloc.cli.assign_compat as ac

    before = signal.getsignal(signal.SIGUSR1)
    before_int = signal.getsignal(signal.SIGINT)  # not always Python's own: an imported
    # library may have set one (dask_jobqueue.runner does, at import, in the same worker)
    for sig in (signal.SIGUSR1, signal.SIGINT):
        monkeypatch.setattr(ac, "run", lambda argv, sig=sig: os.kill(os.getpid(), sig))
        assert ac.main(["x", "y"]) == 2
        assert capsys.readouterr().out == f"*** Killed with signal {int(sig)} - exiting!\n"
    assert signal.getsignal(signal.SIGUSR1) == before
    assert signal.getsignal(signal.SIGINT) is before_int


def test_a_closed_pipe_and_an_internal_refusal(monkeypatch):
    import coalloc.cli.assign_compat as ac

    def closed(argv):
        raise BrokenPipeError

    monkeypatch.setattr(ac, "run", closed)
    assert ac.main([]) == 141
    monkeypatch.undo()

    def refuses(*args, **kwargs):
        raise ValueError("a value the mapper refuses\nin two lines")

    monkeypatch.setattr(tb, "assign", refuses)
    status, text = run_text("-s", "1", DATA / "test.ptop", DATA / "test.top")
    assert status == 255
    assert text.splitlines()[-1] == "*** Internal error: a value the mapper refuses in two lines"


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(["ptop", "top"]), st.integers(0, 2**32 - 1))
def test_mutated_emulab_files_give_one_of_assigns_answers(which, seed):
    """Emulab's test.ptop/test.top with tokens replaced, dropped or lines repeated: the exit
    status is one of assign's, bad input is one line after the seed, a mapping is valid."""
    import random
    import tempfile

    texts = {k: (DATA / f"test.{k}").read_text() for k in ("ptop", "top")}
    texts[which] = _mutate(random.Random(seed), texts[which])
    with tempfile.TemporaryDirectory() as d:
        paths = {k: Path(d) / f"m.{k}" for k in texts}
        for k, text in texts.items():
            paths[k].write_text(text)
        status, out = run_text("-s", "1", paths["ptop"], paths["top"])
        assert status in (0, 1, 2, 255), out
        lines = out.splitlines()
        if status == 255:
            assert len(lines) == 2 and lines[1].startswith(f"{paths[which]}:"), out
        elif status == 0:
            check_mapped(paths["ptop"], paths["top"], out)
        elif status == 2:
            assert lines[-1].startswith("***"), out
        else:
            parse_assign_output(out)


@pytest.mark.parametrize("flags", [
    ["-s", "123456", "-uod", "-c", ".75", "-H", "3", "-F", "-P"],
    ["-S", "pack", "-F", "-P"], ["-R", "-P"], ["-f", "text", "-F"],
])  # fmt: skip
def test_the_command_lines_emulabs_mapper_builds(flags):
    """tbsetup/mapper builds assign's command line from these switches (and a trailing
    PN=1.0 parameter with -R): each maps Emulab's test files as without them."""
    extra = ["PN=1.0"] if "-R" in flags else []
    status, text = run_text(*flags, DATA / "test2.ptop", DATA / "test2a.top", *extra)
    assert status == 0, text
    check_mapped(DATA / "test2.ptop", DATA / "test2a.top", text)
    assert ("Summary:" in text) == any(f.startswith("-u") for f in flags)


def test_summary_lines_as_assign_prints_them():
    """The -u summary of Emulab's test files, in the shape assign prints it (its 2016 build
    prints the same lines for its own mapping of these files: A, B, C on pa, pb, pc)."""
    status, text = run_text("-u", "-s", "1", DATA / "test.ptop", DATA / "test.top")
    assert status == 0
    out = parse_assign_output(text)
    summary = text.split("End solution\n", 1)[1].splitlines()
    used = sorted(set(out["nodes"].values()))
    expected = ["Summary:", "S 0 vnodes, 600 nontrivial BW, 0 trivial BW, type=(null)"]
    ptop = tb.read_ptop(DATA / "test.ptop")
    for p in used:
        expected.append(f"{p} 1 vnodes, 200 nontrivial BW, 0 trivial BW, type=pc")
        expected += [f"    100 {lk.name}" for lk in ptop.interfaces(p)]
    assert summary == [*expected, "Total physical nodes used: 3", "End summary"]
