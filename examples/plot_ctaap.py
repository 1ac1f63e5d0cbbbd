"""
CTAAP: a request graph co-allocated onto clustered offers
=========================================================

A parallel job (a *request*: tasks with demands and the bandwidth each pair of tasks needs)
is placed onto clusters (an *offer*: each cluster's machines, capacity and bandwidth), with
the CTAAP-Solver of Kravtsov et al. The answer is checked by the independent verifier, then
drawn: tasks of one cluster sit together, links between clusters are dashed red.
"""

import matplotlib.pyplot as plt

import coalloc.ctaap as ctaap

# %%
# A seeded random instance: 16 tasks, 4 clusters, two properties (cpu, mem).
request, offer = ctaap.generators.random_instance(16, 4, edge_probability=0.3, seed=1)
print(request)
print(offer)

# %%
# Solve with the paper's algorithm (the default method) and check the answer independently.
result = ctaap.solve(request, offer, seed=0)
print(result.status, "objective", result.objective, "bound", result.bound)
print("cluster of each task:", result.assignment.tolist())
print("feasible:", ctaap.verify(request, offer, result.assignment).feasible)

# %%
# Draw the allocation. Grey tasks (if any) are the ones left out.
fig = ctaap.plot_allocation(request, offer, result)
plt.show()
