"""Sphinx configuration of the coalloc documentation (``bash ci/docs.sh`` builds it).

The API reference is generated from the numpydoc docstrings by autodoc; the guides are the
Markdown pages of ``docs/`` (read by myst-parser) and ``bench/RESULTS.md``. numpydoc validates
the docstring of every object the reference documents (``numpydoc_validation_checks``), so a
public function without Parameters, Returns or Examples fails the build (``-W``).
"""

import coalloc  # the installed package (ci/docs.sh), or src/ on PYTHONPATH with built kernels

project = "coalloc"
author = "the coalloc developers"
copyright = "the coalloc developers, BSD-3-Clause"
version = release = coalloc.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "img"]
templates_path = []

# Markdown guides: GitHub-style heading anchors, so links like loadshare.md#formats resolve.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

autodoc_default_options = {"members": False, "show-inheritance": True}
autodoc_typehints = "none"  # the numpydoc Parameters sections carry the types
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True

# Enforced on every documented public function and class: a docstring (GL08), every
# parameter documented (PR01) and no unknown one (PR02), a Returns section where the
# function returns something (RT01), and an Examples section (EX01) that runs as a doctest
# (ci/docs.sh runs them with pytest --doctest-modules).
numpydoc_validation_checks = {"GL08", "PR01", "PR02", "RT01", "EX01"}
# Docstrings still to complete (each listed by name, so the list can only shrink).
_UNFINISHED = [
    "coalloc.collective.solve",
    "coalloc.ctaap.Instance",
    "coalloc.ctaap.Offer",
    "coalloc.ctaap.Request",
    "coalloc.ctaap.SolveResult",
    "coalloc.ctaap.VerifyReport",
    "coalloc.ctaap.check_compatible",
    "coalloc.ctaap.compatibility",
    "coalloc.ctaap.instance_from_dict",
    "coalloc.ctaap.instance_to_dict",
    "coalloc.ctaap.read_instance",
    "coalloc.ctaap.read_result",
    "coalloc.ctaap.solve_ctaap",
    "coalloc.ctaap.solve_exact",
    "coalloc.ctaap.solve_greedy",
    "coalloc.ctaap.upper_bound",
    "coalloc.ctaap.write_instance",
    "coalloc.ctaap.write_result",
    "coalloc.loadshare.GapReport",
    "coalloc.loadshare.GapResult",
    "coalloc.loadshare.Instance",
    "coalloc.loadshare.PlacementReport",
    "coalloc.loadshare.ShareResult",
    "coalloc.loadshare.best_fit",
    "coalloc.loadshare.fcfs",
    "coalloc.loadshare.fcfs_ff",
    "coalloc.loadshare.first_fit",
    "coalloc.loadshare.gap_bound",
    "coalloc.loadshare.initial_coalitions",
    "coalloc.loadshare.node_loads",
    "coalloc.loadshare.read_problem",
    "coalloc.loadshare.round_robin",
    "coalloc.loadshare.throughput_of",
    "coalloc.loadshare.write_gap",
    "coalloc.loadshare.write_problem",
    "coalloc.solve_many_iter",
    "coalloc.testbed.Instance",
    "coalloc.testbed.MappingResult",
    "coalloc.testbed.PLink",
    "coalloc.testbed.PNode",
    "coalloc.testbed.RequestMemory",
    "coalloc.testbed.SimulationResult",
    "coalloc.testbed.VLink",
    "coalloc.testbed.VNode",
    "coalloc.testbed.VerifyReport",
    "coalloc.testbed.build_problem",
    "coalloc.testbed.format_ptop",
    "coalloc.testbed.format_top",
    "coalloc.testbed.partition",
    "coalloc.testbed.ptop_from_dict",
    "coalloc.testbed.ptop_from_networkx",
    "coalloc.testbed.ptop_to_dict",
    "coalloc.testbed.ptop_to_networkx",
    "coalloc.testbed.read_instance",
    "coalloc.testbed.read_ptop",
    "coalloc.testbed.read_top",
    "coalloc.testbed.simulate",
    "coalloc.testbed.top_from_dict",
    "coalloc.testbed.top_from_networkx",
    "coalloc.testbed.top_to_dict",
    "coalloc.testbed.top_to_networkx",
    "coalloc.testbed.write_instance",
    "coalloc.testbed.write_ptop",
    "coalloc.testbed.write_top",
]
numpydoc_validation_exclude = {
    r"\.__\w+__$",  # dunder methods
    r"\.[A-Z][A-Z0-9_]+$",  # constants (METHODS, STATUSES, ...): a #: comment, no Examples
} | {"^" + name.replace(".", r"\.") + "$" for name in _UNFINISHED}

html_theme = "alabaster"
html_title = f"coalloc {release}"
html_theme_options = {
    "description": "Co-allocation of parallel jobs onto grid, cluster and testbed resources",
    "fixed_sidebar": True,
}
html_static_path = []

# The JSON examples of formats.md elide values with "...": highlighting falls back, harmlessly.
suppress_warnings = ["misc.highlighting_failure"]
