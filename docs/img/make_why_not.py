"""Draw the pictures of docs/why-not.md (run from the repository root).

    PYTHONPATH=src python docs/img/make_why_not.py

Needs the ``[plot]`` extra. Both examples are fixed: the same code draws the same picture.
"""

from pathlib import Path

from coalloc import collective, testbed
from coalloc.collective.plot import plot_explanation as plot_collective
from coalloc.testbed.plot import plot_explanation as plot_testbed

OUT = Path(__file__).resolve().parent


def main() -> None:
    # collective: 4 nodes asked for in a window of a busy 12-node pool (no start fits)
    pool, req = collective.generators.random_instance(12, 4, collective=False, load=0.8, seed=0)
    assert not collective.coallocate(pool, req).has_solution
    plot_collective(req, pool, path=OUT / "why_not_collective.png")

    # testbed: five pc3000 nodes in a ring on a testbed with four pc3000 PCs
    pcs = [f"node p{i} pc:1 pc3000:1" for i in range(4)] + [
        f"node d{i} pc:1 d710:1" for i in range(2)]  # fmt: skip
    links = [f"link l{k}_{i} {n.split()[1]} sw 1000 0 0"  # three interfaces per PC
             for k, n in enumerate(pcs) for i in range(3)]
    ptop = testbed.parse_ptop("\n".join(["node sw switch:1", *pcs, *links]))
    names = [f"v{i}" for i in range(5)]
    top = testbed.parse_top("\n".join(
        [f"node {v} pc3000" for v in names] + ["node web pc"]
        + [f"link r{i} {names[i]} {names[(i + 1) % 5]} 100 0 0" for i in range(5)]
        + ["link w v0 web 100 0 0"]))  # fmt: skip
    plot_testbed(top, ptop, path=OUT / "why_not_testbed.png")


if __name__ == "__main__":
    main()
