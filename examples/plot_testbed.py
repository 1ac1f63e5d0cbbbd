"""
Testbed mapping: an experiment onto Emulab-like switches
========================================================

A virtual topology (an experiment's nodes and links, Emulab's ``.top``) is mapped onto a
physical testbed (PCs behind switches, Emulab's ``.ptop``) with assign+, then checked by the
independent verifier and drawn: PCs under their switch, coloured by switch, labelled with
their virtual nodes; a virtual link that crosses trunks is dashed red.
"""

import matplotlib.pyplot as plt

import coalloc.testbed as tb

# %%
# 24 PCs on 3 switches (DeterLab-like), and a random sparse experiment of 14 nodes.
ptop = tb.generators.deterlab(24, 3, seed=0)
top = tb.generators.random_sparse(14, 4, seed=1)
result = tb.assign(top, ptop, method="assign+")
print("mapped:", result.success)
print("checked:", tb.verify_mapping(top, ptop, result.mapping, result.routes).ok)

# %%
# The mapping on the testbed.
tb.plot_mapping(top, ptop, result)
plt.show()
