"""
Coalition load sharing (DMCF-GGA)
=================================

Hovey & Jung's problem: nodes with loads and capacities form coalitions that share their load,
to serve as much of it as possible. DMCF-GGA (a grouping genetic algorithm) is run on the
paper's setup, keeping the coalitions every 5 generations to draw how nodes migrate.
"""

import matplotlib.pyplot as plt

import coalloc.loadshare as ls

# %%
# 60 nodes of the paper's Fig. 5 setup; coalitions of up to 12 nodes.
problem = ls.generators.paper_setup(60, seed=1)
result = ls.dmcf_gga(problem, coalition_size=12, seed=0, coalition_history=5)
print(result.status, "throughput", result.objective, "bound", result.bound)
print("checked:", ls.verify_placement(problem, result.placement).valid)

# %%
# Each row a kept generation, each column a node, coloured by its coalition; below, the best
# throughput after every generation against the bound.
ls.plot_coalitions(problem, result)
plt.show()

# %%
# Every node's load after sharing against its capacity (black line), and before (grey).
ls.plot_loads(problem, result)
plt.show()
