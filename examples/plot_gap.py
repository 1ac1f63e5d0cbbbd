"""
The generalized assignment problem: an anytime heuristic with a bound
=====================================================================

The GAP (assign items to agents within their capacities at least cost) on a generated
Chu-Beasley type d instance. The heuristic keeps its best answer and a proven lower bound
(LP, then Lagrangian) as it runs; the picture shows both against time. The values are
seeded; where they fall in time depends on the machine.
"""

import matplotlib.pyplot as plt

import coalloc.loadshare as ls

# %%
# 10 agents, 60 items, one second.
gap = ls.generate_gap("d", 10, 60, seed=0)
result = ls.solve_gap(gap, time_limit=1.0, seed=0)
print(result.status, "objective", result.objective, "bound", result.bound, "gap", result.gap)
print("checked:", ls.verify_gap(gap, result.assignment).feasible)

# %%
# Best objective so far and the proven bound against the seconds since the call.
ls.plot_gap_trajectory(result, logx=True)
plt.show()
