"""The independent referee of the type-only testbed cases (``tests/testbed/test_explain*``,
``test_exact_core``): a bipartite matching of virtual nodes to PCs, by networkx."""

from __future__ import annotations

import networkx as nx


def typed_matching(vtypes: dict, kinds: list) -> bool:
    """Whether every virtual node (name -> type) gets its own PC ``p{i}``, PC ``i`` hosting
    the types ``"pc"`` and ``kinds[i]``."""
    g = nx.Graph()
    g.add_nodes_from(vtypes)
    g.add_nodes_from(f"p{i}" for i in range(len(kinds)))
    for v, t in vtypes.items():
        for i, k in enumerate(kinds):
            if t in ("pc", k):
                g.add_edge(v, f"p{i}")
    m = nx.bipartite.maximum_matching(g, top_nodes=list(vtypes))
    return all(v in m for v in vtypes)
