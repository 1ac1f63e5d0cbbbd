"""Write the seed corpus ``fuzz/corpus/<target>/`` from the families' generators and writers.

Run from the repository root: ``python fuzz/make_corpus.py``. The files are small (a fuzzer
mutates small files best) and deterministic (fixed seeds).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys

import coalloc
from coalloc import collective, loadshare, testbed
from coalloc._shared.family import families
from coalloc.collective import io as cio
from coalloc.ctaap import io as ctaap_io
from coalloc.loadshare import io as lio
from coalloc.taskmap import io as tio

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import targets  # noqa: E402


def _text(writer, *args, **kwargs) -> bytes:
    buf = io.StringIO()
    writer(buf, *args, **kwargs)
    return buf.getvalue().encode()


def instance_seeds() -> dict:
    """Every registered family's seed instance files (``FamilySpec.fuzz_seeds``)."""
    out: dict = {}
    for name, spec in families().items():
        for fname, data in (spec.fuzz_seeds() if spec.fuzz_seeds else {}).items():
            if fname in out:
                raise ValueError(f"family {name!r}: the seed file {fname} is another's")
            out[fname] = data
    return out


def format_seeds() -> dict:
    """Every registered format's example documents (``FileFormat.examples``), each behind
    the byte that makes :func:`targets.t_formats` read it as that format."""
    out: dict = {}
    for k, (_family, fmt) in enumerate(targets.registered_formats()):
        for j, doc in enumerate(fmt.examples() if fmt.examples else []):
            out[f"{k:02d}-{fmt.name}-{j}"] = bytes([k]) + json.dumps(doc).encode()
    return out


#: Sample files of the line formats the package reads but does not write (no ``sample``).
LINE_SAMPLES = {"scotch.graph": b"0\n3 6\n0 000\n2 1 2\n2 0 2\n2 0 1\n"}


def line_seeds() -> dict:
    """Every registered line format's seed file, in its target's folder: its ``sample``
    written by its writer (``LineFormat.sample``), or a sample of :data:`LINE_SAMPLES`."""
    import tempfile

    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="coalloc-corpus-") as tmp:
        for _family, fmt in targets.registered_line_formats():
            suffix = fmt.suffixes[0] if fmt.suffixes else ".txt"
            files = out.setdefault(fmt.target, {})
            if fmt.write is not None:
                path = os.path.join(tmp, "sample" + suffix)
                fmt.write(path, fmt.sample())
                with open(path, "rb") as fh:
                    files["sample" + suffix] = fh.read()
            elif fmt.name in LINE_SAMPLES:
                files["sample" + suffix] = LINE_SAMPLES[fmt.name]
    return out


def seeds() -> dict:
    out: dict = {name: {} for name in targets.TARGETS}
    # every line format's sample, in its target's folder (a line format added to a spec
    # gets its seed here), then the hand-made files below
    for name, files in line_seeds().items():
        out[name].update(files)
    # any registered problem kind, read by its "format" (coalloc.batch.read_problem): every
    # family's own seed files (FamilySpec.fuzz_seeds), a sixth family's too, and the CTAAP
    # bandwidths written densely and the GAP's maximising instance, which they do not show
    out["instances"].update(instance_seeds())
    r2, o2 = coalloc.generators.fig3(4, n_clusters=2, seed=1)
    out["instances"]["ctaap-fig3-dense.json"] = _text(ctaap_io.write_instance, r2, o2,
                                                      bandwidth_format="dense")  # fmt: skip
    # every registered JSON format, the first byte its place in targets.registered_formats()
    out["formats"].update(format_seeds())
    tasks, rg = targets.small_taskmap()
    out["taskmap"]["tasks.json"] = _text(tio.write_task_graph, tasks)
    out["taskmap"]["resources.json"] = _text(tio.write_resource_graph, rg)
    out["taskmap"]["instance.json"] = _text(tio.write_instance, tasks, rg)
    pool, req = targets._collective_small()
    out["collective_json"]["pool.json"] = _text(cio.write_pool, pool)
    out["collective_json"]["request.json"] = _text(cio.write_request, req)
    out["collective_json"]["instance.json"] = _text(cio.write_instance, pool, req)
    out["collective_json"]["workload.json"] = (
        b'{"format": "coalloc.collective.workload", "version": 1, "requests": ['
        b'{"duration": 600, "count": 2, "earliest_start": 0, "latest_start": 900, '
        b'"minimum": {"cores": 1}, "arrival": 0}]}\n'
    )
    out["collective_csv"]["pool.csv"] = b"node,cores,mem,label:site\nn0,4,8,a\nn1,2,4,a\nn2,1,2,b\n"
    out["swf"]["jobs.swf"] = (
        b"; Version: 2.2\n; MaxProcs: 8\n"
        b"1 0 5 100 4 -1 -1 4 120 -1 1 1 1 1 1 -1 -1 -1\n"
        b"2 10 0 50 2 -1 2048 2 60 4096 1 1 1 1 1 -1 -1 -1\n"
    )
    out["testbed_top"]["small.top"] = targets.TOP.encode()
    out["testbed_top"]["random.top"] = _text(
        testbed.write_top, testbed.generators.random_topology(4, seed=1)
    )
    out["testbed_ptop"]["small.ptop"] = targets.PTOP.encode()
    out["testbed_ptop"]["deterlab.ptop"] = _text(
        testbed.write_ptop, testbed.generators.deterlab(4, 2, seed=1)
    )
    prob = targets._loadshare_small()
    out["instances"]["loadshare-empty-groups.json"] = (
        b'{"format": "coalloc.loadshare.instance", "version": 1, "capacity": [1, 2], '
        b'"job_size": [1], "job_origin": [1]}\n'
    )
    g1 = loadshare.generate_gap("a", 2, 4, seed=0)
    g2 = loadshare.generate_gap("d", 3, 3, seed=1)
    out["gap"]["multi.txt"] = _text(lio.write_gap, [g1, g2])
    out["gap"]["single.txt"] = _text(lio.write_gap, g1, multi=False)
    # the CLI: the first byte picks the command (see targets._cli_commands)
    cmds = {0: out["instances"]["ctaap.json"], 1: out["taskmap"]["tasks.json"],
            2: out["taskmap"]["resources.json"], 3: out["collective_json"]["pool.json"],
            4: out["collective_json"]["request.json"], 5: targets.PTOP.encode(),
            6: targets.TOP.encode(), 7: out["instances"]["loadshare.json"],
            8: out["gap"]["single.txt"], 9: out["collective_json"]["workload.json"]}  # fmt: skip
    for k, data in cmds.items():
        out["cli"][f"cmd{k}"] = bytes([k]) + data
    # results, as the solvers write them (first byte: the family of targets.t_results)
    res = coalloc.solve(*coalloc.ctaap.io.read_instance(targets.partner("ctaap")), seed=0)
    out["results"]["ctaap"] = bytes([0]) + _text(ctaap_io.write_result, res)
    tasks_p = tio.read_task_graph(targets.partner("tasks"))
    res_p = tio.read_resource_graph(targets.partner("resources"))
    mres = coalloc.taskmap.solve(tasks_p, res_p, seed=0)
    out["results"]["taskmap"] = bytes([1]) + _text(tio.write_mapping_result, mres)
    cres = collective.Instance(
        cio.read_pool(targets.partner("pool")), cio.read_request(targets.partner("request"))
    ).solve(seed=0)
    out["results"]["collective"] = bytes([2]) + _text(cio.write_result, cres)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        coalloc.cli.main(["testbed", "assign", targets.partner("top"), targets.partner("ptop"),
                          "--json"])  # fmt: skip
    out["results"]["testbed"] = bytes([3]) + buf.getvalue().encode()
    lres = loadshare.Instance(prob).solve(seed=0)
    out["results"]["loadshare"] = bytes([4]) + _json(lres).encode()
    _issue30_seeds(out, g1, g2, cres)
    return out


#: The numbers of issue 30's reproducers: an underscore, Unicode digits (Arabic-Indic and
#: fullwidth), infinity, a decimal that overflows to it, NaN and a 400-digit integer.
ISSUE30 = {
    "underscore": "1_0",
    "arabic": "\u0661\u0662",
    "fullwidth": "\uff11\uff10",
    "inf": "inf",
    "overflow": "1e400",
    "nan": "nan",
    "400digits": "1" + "0" * 399,
}


#: Time limits that are never reached (stop 58's fuzz finding: 2**63 - 1 s overflowed the
#: kernels' int64 nanoseconds, 1e300 s became an infinite integer).
REGRESS_LIMITS = {"int64": "9223372036854775807", "1e300": "1e300", "1e18": "1e18"}


def _issue30_seeds(out: dict, g1, g2, cres) -> None:
    """Seeds for the targets of issue 30 item 6: the GAP's JSON format, and the option values
    of the collective, testbed and load-sharing commands (``targets.t_options``: first byte
    the command), with the issue's reproducers in the files and options they broke."""
    out["instances"]["gap-a-max.json"] = json.dumps(loadshare.gap_to_dict(g1)).encode()
    doc = loadshare.gap_to_dict(g1)
    text = json.dumps(doc)
    first = str(doc["cost"][0][0])
    out["instances"]["issue30-gap-overflow.json"] = text.replace(first, "1e400", 1).encode()
    out["instances"]["issue30-gap-400digits.json"] = text.replace(
        first, ISSUE30["400digits"], 1).encode()  # fmt: skip
    cmds = targets._option_commands()
    valid = {"number": "3", "param": "2"}
    for k, (_, option, kind) in enumerate(cmds):
        name = option.strip("-") if kind == "number" else kind.split(":")[1]
        out["options"][f"cmd{k:02d}-{name}"] = bytes([k]) + valid[kind.split(":")[0]].encode()
    for k, (_, option, kind) in enumerate(cmds):
        if option in ("--slot-seconds", "--limit", "--instance", "--time-limit") or kind in (
            "param:th_c",
            "param:l2",
        ):
            name = option.strip("-") if kind == "number" else kind.split(":")[1]
            for what, value in ISSUE30.items():
                out["options"][f"issue30-{k:02d}-{name}-{what}"] = bytes([k]) + value.encode()
    # stop 58's finding: a time limit past the kernels' int64 nanoseconds (an OverflowError,
    # then "cannot convert float infinity to integer"); a limit never reached is no deadline
    for k, (_, option, kind) in enumerate(cmds):
        if option == "--time-limit" or kind == "param:time_limit_s":
            name = option.strip("-") if kind == "number" else kind.split(":")[1]
            for what, value in REGRESS_LIMITS.items():
                out["options"][f"regress-{k:02d}-{name}-{what}"] = bytes([k]) + value.encode()
    # the same numbers in the files whose readers took them
    swf_line = "3 400 0 300 1 -1 -1 1 600 -1 1 1 1 1 1 -1 -1 -1\n"
    for what in ("underscore", "arabic", "overflow", "400digits"):
        bad = swf_line.replace("300", ISSUE30[what], 1)
        out["swf"][f"issue30-{what}.swf"] = (out["swf"]["jobs.swf"].decode() + bad).encode()
    gap_text = out["gap"]["single.txt"].decode()
    for what in ("underscore", "arabic", "fullwidth", "400digits"):
        head, rest = gap_text.split("\n", 1)
        parts = rest.split(" ", 3)
        parts[2] = ISSUE30[what]
        out["gap"][f"issue30-{what}.txt"] = (head + "\n" + " ".join(parts)).encode()
    ptop = targets.PTOP
    out["testbed_ptop"]["issue30-inf-slots.ptop"] = (ptop + "set-type-limit pc3000 inf\n").encode()
    out["testbed_ptop"]["issue30-overflow-limit.ptop"] = (
        ptop + "set-type-limit pc3000 1e400\n"
    ).encode()
    out["testbed_ptop"]["issue30-type-limit.ptop"] = (ptop + "set-type-limit pc3000 1\n").encode()
    underscore = ptop.replace("pc:1 pc3000:1", "pc:1_0 pc3000:1", 1)
    out["testbed_ptop"]["issue30-underscore.ptop"] = underscore.encode()
    prob_doc = json.loads(out["instances"]["loadshare.json"])
    prob_doc["capacity"][0] = "CAPACITY"  # a capacity beyond the float range
    out["instances"]["issue30-loadshare-overflow.json"] = json.dumps(prob_doc).replace(
        '"CAPACITY"', "1e400").encode()  # fmt: skip
    result = json.loads(_text(cio.write_result, cres))
    result["start"] = int(ISSUE30["400digits"])
    out["results"]["issue30-collective-400digit-start"] = bytes([2]) + json.dumps(result).encode()
    result["start"] = 1e400
    out["results"]["issue30-collective-inf-start"] = bytes([2]) + json.dumps(result).encode()


def _json(result) -> str:
    import json

    return json.dumps(result.to_dict(), indent=1)


def main() -> None:
    for name, files in seeds().items():
        folder = os.path.join(targets.CORPUS, name)
        os.makedirs(folder, exist_ok=True)
        for fname, data in files.items():
            with open(os.path.join(folder, fname), "wb") as fh:
                fh.write(data)
        print(f"{name}: {len(files)} files")
    targets.cleanup()


if __name__ == "__main__":
    main()
