"""The compiled problem does not depend on what earlier calls left in the testbed's caches."""

from __future__ import annotations

import numpy as np

from coalloc import testbed as tb
from coalloc.testbed import generators as g
from coalloc.testbed import io as tbio

FIELDS = ("cand", "cand_why", "fixed", "fcost", "vtype", "vstatic", "pfeature_count", "pclass")


def _odd_top(i: int) -> tb.VirtualTopology:
    """Types the testbed lacks (type ids that differ from call to call), additive desires of
    names it lacks, a fixed node, hard and soft desires."""
    extra = {
        1: " ?+mem:256",
        3: " ?+mem:256" + (" ?+gpu:1" if i % 2 else ""),
        4: " fast-disk:0.4",
        5: " ?+mem:256 bios-waittime:1",
    }
    nodes = "".join(f"node v{j} {('pc', 'ghost' + str(i), 'pc3000')[j % 3]}{extra.get(j, '')}\n"
                    for j in range(6))  # fmt: skip
    links = "".join(f"link l{j} v{j} v{j + 1} 100000 0 0\n" for j in range(5))
    return tb.parse_top(nodes + links + ("fix-node v0 pc3000-3\n" if i % 3 == 0 else ""))


def _arrays(pr) -> dict:
    return {k: getattr(pr, k) for k in FIELDS}


def _same(a: dict, b: dict) -> None:
    for k in FIELDS:
        if isinstance(a[k], list):
            assert a[k] == b[k], k
        else:
            assert a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]), k


def test_warm_caches_give_the_cold_answer():
    text = tb.format_ptop(g.deterlab(60, 3, seed=4))
    warm = tb.parse_ptop(text)
    rng = np.random.default_rng(0)
    names = [n for n, p in warm.nodes.items() if not p.is_switch]
    # fill the warm testbed's caches with other experiments and other free sets first
    for i in range(12):
        free = set(rng.choice(names, size=40, replace=False).tolist())
        tb.build_problem(g.random_topology(10, seed=i, p_desire=0.5), warm, free)
        tb.build_problem(_odd_top(i), warm, free if i % 2 else None)
    for i in range(12):
        top = g.random_topology(12, seed=100 + i, p_typed=0.5, p_desire=0.5) if i % 2 else \
            _odd_top(i + 1)  # fmt: skip
        free = None if i % 3 == 0 else set(rng.choice(names, size=30, replace=False).tolist())
        tbio.clear_read_cache()  # (else the reader returns the testbed it read last time)
        cold = tb.parse_ptop(text)  # a new object: empty caches
        assert cold is not warm
        _same(_arrays(tb.build_problem(top, cold, free)),
              _arrays(tb.build_problem(top, warm, free)))  # fmt: skip
