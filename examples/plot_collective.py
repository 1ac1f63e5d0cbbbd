"""
Collective co-allocation with advance reservations
==================================================

Cankar et al.'s problem: find the earliest start at which enough nodes of a pool, each with
its own timetable of reservations, can together hold a request for its whole duration. The
answer is checked by the verifier and drawn over the nodes' timetables.
"""

import matplotlib.pyplot as plt

import coalloc.collective as co

# %%
# A seeded random pool of 14 nodes with existing reservations (load 0.7), and a request
# for 4 nodes.
pool, request = co.generators.random_instance(14, 4, seed=4, load=0.7, n_slots=24)
result = co.solve(request, pool)
print(result.status, "start", result.start, "nodes", result.resources.tolist())
print("checked:", co.verify(request, pool, result).ok)

# %%
# One lane per node, the chosen ones first (marked ``*``): grey is what is already reserved
# of the property ``p0``, red the new reservation; the request's window is shaded.
co.plot_timetable(request, pool, result, property="p0")
plt.show()
