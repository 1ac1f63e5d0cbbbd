"""
Task mapping: a task graph onto a heterogeneous network
=======================================================

Taura & Chien's mapper places the tasks of a communicating program onto the processors of
a resource graph (processors, routers, links) so that the most occupied node or link (the
*bottleneck*) is as little occupied as possible. Here an instance of Table 1 of the paper
(c = 4) is mapped, and the flow-injection clustering it starts from is drawn as a tree.
"""

import matplotlib.pyplot as plt

import coalloc.taskmap as tm

# %%
# A seeded instance of the paper's section 5 and the default method.
tasks, resources = tm.generators.table1_instance(4.0, seed=0)
result = tm.solve(tasks, resources, seed=0)
print(result.status, "max occupancy", result.max_occupancy, "bottleneck", result.bottleneck.kind)
print("checked:", tm.verify_mapping(tasks, resources, result.mapping).ok)

# %%
# Processors are circles sized by capacity and coloured by occupancy; each processor's
# number of tasks is written next to it; the bottleneck is outlined in red.
tm.plot_mapping(tasks, resources, result)
plt.show()

# %%
# The cluster tree of flow injection: the order in which the mapper visits the tasks.
tree = tm.flow_injection(tasks, seed=0)
tm.plot_cluster_tree(tree)
plt.show()
