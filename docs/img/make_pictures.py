"""Draw the example pictures of docs/plotting.md (run from the repository root).

    python docs/img/make_pictures.py

Needs the ``[plot]`` extra. Every picture is seeded: the same code draws the same result.
"""

from importlib import resources
from pathlib import Path

from coalloc import collective, ctaap, loadshare, taskmap, testbed
from coalloc.testbed import generators as tbgen

OUT = Path(__file__).resolve().parent


def main() -> None:
    # CTAAP: the demo instance of 'coalloc demo'
    with resources.files("coalloc.ctaap").joinpath("data/demo.json").open() as fh:
        request, offer = ctaap.read_instance(fh)
    result = ctaap.solve(request, offer, "ctaap", seed=0)
    ctaap.plot_allocation(request, offer, result, path=OUT / "ctaap_allocation.png")

    # task mapping: a Table 1 instance of section 5 (c = 4)
    tasks, res = taskmap.generators.table1_instance(4.0, seed=0)
    mapping = taskmap.solve(tasks, res, seed=0)
    taskmap.plot_mapping(tasks, res, mapping, path=OUT / "taskmap_mapping.png")
    # a dense cluster (256 cores, a 64 x 64 stencil): drawn in its 32 nodes
    dense = taskmap.generators.stencil_task_graph((64, 64))
    cluster = taskmap.generators.hierarchical_cluster(n_racks=4, nodes_per_rack=8,
                                                      cores_per_node=8, speed=(1.0, 2.0),
                                                      seed=1)  # fmt: skip
    packed = taskmap.solve(dense, cluster, "multilevel", seed=0)
    taskmap.plot_mapping(dense, cluster, packed, path=OUT / "taskmap_mapping_dense.png")
    tree = taskmap.flow_injection(tasks, seed=0)
    taskmap.plot_cluster_tree(tree, path=OUT / "taskmap_cluster_tree.png")

    # collective co-allocation: a small random pool with usage
    pool, req = collective.generators.random_instance(14, 4, seed=4, load=0.7, n_slots=24)
    coal = collective.coallocate(pool, req)
    collective.plot_timetable(req, pool, coal, property="p0",
                              path=OUT / "collective_timetable.png")  # fmt: skip

    # testbed mapping: 14 virtual nodes on a 24-PC DeterLab-like testbed with 3 switches
    ptop, top = tbgen.deterlab(24, 3, seed=0), tbgen.random_sparse(14, 4, seed=1)
    mapped = testbed.assign(top, ptop, "assign+")
    testbed.plot_mapping(top, ptop, mapped, path=OUT / "testbed_mapping.png")

    # load sharing: DMCF-GGA on 100 nodes of the Fig. 5 setup, coalitions kept every 5
    prob = loadshare.generators.paper_setup(n_nodes=100, seed=1)
    shared = loadshare.dmcf_gga(prob, coalition_size=23, seed=0, coalition_history=5)
    loadshare.plot_coalitions(prob, shared, path=OUT / "loadshare_coalitions.png")
    loadshare.plot_loads(prob, shared, path=OUT / "loadshare_loads.png")

    # the GAP heuristic against time on a Chu-Beasley type d instance, 20 x 200 (the
    # values are seeded; where they fall in time depends on the machine)
    gap = loadshare.generate_gap("d", 20, 200, seed=0)
    run = loadshare.solve_gap(gap, time_limit=2.0, seed=0)
    loadshare.plot_gap_trajectory(run, logx=True, path=OUT / "loadshare_gap_trajectory.png")


if __name__ == "__main__":
    main()
