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


def seeds() -> dict:
    out: dict = {name: {} for name in targets.TARGETS}
    r, o = coalloc.generators.fig2(1, n_tasks=5, n_clusters=3, seed=3)
    out["ctaap"]["fig2-edges.json"] = _text(ctaap_io.write_instance, r, o,
                                            bandwidth_format="edges")  # fmt: skip
    r2, o2 = coalloc.generators.fig3(4, n_clusters=2, seed=1)
    out["ctaap"]["fig3-dense.json"] = _text(ctaap_io.write_instance, r2, o2,
                                            bandwidth_format="dense")  # fmt: skip
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
    out["collective_csv"]["pool.csv"] = (
        b"node,cores,mem,label:site\nn0,4,8,a\nn1,2,4,a\nn2,1,2,b\n"
    )
    out["swf"]["jobs.swf"] = (
        b"; Version: 2.2\n; MaxProcs: 8\n"
        b"1 0 5 100 4 -1 -1 4 120 -1 1 1 1 1 1 -1 -1 -1\n"
        b"2 10 0 50 2 -1 2048 2 60 4096 1 1 1 1 1 -1 -1 -1\n"
    )
    out["testbed_top"]["small.top"] = targets.TOP.encode()
    out["testbed_top"]["random.top"] = _text(testbed.write_top,
                                             testbed.generators.random_topology(4, seed=1))
    out["testbed_ptop"]["small.ptop"] = targets.PTOP.encode()
    out["testbed_ptop"]["deterlab.ptop"] = _text(testbed.write_ptop,
                                                 testbed.generators.deterlab(4, 2, seed=1))
    top, ptop = testbed.parse_top(targets.TOP), testbed.parse_ptop(targets.PTOP)
    out["testbed_json"]["instance.json"] = _text(testbed.write_instance, top, ptop)
    prob = targets._loadshare_small()
    out["loadshare_json"]["problem.json"] = _text(lio.write_problem, prob)
    out["loadshare_json"]["empty-groups.json"] = (
        b'{"format": "coalloc.loadshare.instance", "version": 1, "capacity": [1, 2], '
        b'"job_size": [1], "job_origin": [1]}\n'
    )
    g1 = loadshare.generate_gap("a", 2, 4, seed=0)
    g2 = loadshare.generate_gap("d", 3, 3, seed=1)
    out["gap"]["multi.txt"] = _text(lio.write_gap, [g1, g2])
    out["gap"]["single.txt"] = _text(lio.write_gap, g1, multi=False)
    # any registered problem kind, read by its "format" (coalloc.batch.read_problem)
    out["instances"]["gap.json"] = json.dumps(loadshare.gap_to_dict(g2)).encode()
    out["instances"]["ctaap.json"] = out["ctaap"]["fig2-edges.json"]
    out["instances"]["taskmap.json"] = out["taskmap"]["instance.json"]
    out["instances"]["collective.json"] = out["collective_json"]["instance.json"]
    out["instances"]["testbed.json"] = out["testbed_json"]["instance.json"]
    out["instances"]["loadshare.json"] = out["loadshare_json"]["problem.json"]
    # the CLI: the first byte picks the command (see targets._cli_commands)
    cmds = {0: out["ctaap"]["fig2-edges.json"], 1: out["taskmap"]["tasks.json"],
            2: out["taskmap"]["resources.json"], 3: out["collective_json"]["pool.json"],
            4: out["collective_json"]["request.json"], 5: targets.PTOP.encode(),
            6: targets.TOP.encode(), 7: out["loadshare_json"]["problem.json"],
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
    cres = collective.Instance(cio.read_pool(targets.partner("pool")),
                               cio.read_request(targets.partner("request"))).solve(seed=0)
    out["results"]["collective"] = bytes([2]) + _text(cio.write_result, cres)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        coalloc.cli.main(["testbed", "assign", targets.partner("top"), targets.partner("ptop"),
                          "--json"])  # fmt: skip
    out["results"]["testbed"] = bytes([3]) + buf.getvalue().encode()
    lres = loadshare.Instance(prob).solve(seed=0)
    out["results"]["loadshare"] = bytes([4]) + _json(lres).encode()
    return out


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
