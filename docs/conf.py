"""Sphinx configuration of the coalloc documentation (``bash ci/docs.sh`` builds it).

The API reference is generated from the numpydoc docstrings by autodoc; the guides are the
Markdown pages of ``docs/`` (read by myst-parser) and ``bench/RESULTS.md``. numpydoc validates
the docstring of every object the reference documents (``numpydoc_validation_checks``), so a
public function without Parameters, Returns or Examples fails the build (``-W``).
"""

import os
import sys

import coalloc  # the installed package (ci/docs.sh), or src/ on PYTHONPATH with built kernels

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _api import write_api_pages  # noqa: E402

# docs/api/<family>.rst are written from each family's __all__ (every export documented).
write_api_pages(os.path.join(os.path.dirname(os.path.abspath(__file__)), "api"))

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

autodoc_default_options = {"show-inheritance": True}
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
numpydoc_validation_exclude = {
    r"\.__\w+__$",  # dunder methods
    r"\.[A-Z][A-Z0-9_]+$",  # constants (METHODS, STATUSES, ...): a #: comment, no Examples
    # Methods and properties of the documented classes are listed with their docstrings but
    # not held to the full check (most are one-line accessors).
    r"^coalloc(\.[a-z_]\w*)*\.[A-Z]\w*\.\w+$",
    # Being rewritten on the strict-readers branch (s19-fuzz, new ``root`` parameter); their
    # docstrings get Parameters/Examples after that lands. Remove these two lines then.
    r"^coalloc\.testbed\.ptop_from_dict$",
    r"^coalloc\.testbed\.top_from_dict$",
}

html_theme = "alabaster"
html_title = f"coalloc {release}"
html_theme_options = {
    "description": "Co-allocation of parallel jobs onto grid, cluster and testbed resources",
    "fixed_sidebar": True,
    "page_width": "1180px",
    "sidebar_width": "250px",
}
html_static_path = []

# The JSON examples of formats.md elide values with "...": highlighting falls back, harmlessly.
suppress_warnings = ["misc.highlighting_failure"]

#: Guides listed in the toctree of index.md only when their page exists.
OPTIONAL_GUIDES = ("plotting",)


def _drop_missing_guides(app, docname, source):
    """Remove the toctree entries of optional guides whose page is not there."""
    if docname != "index":
        return
    for page in OPTIONAL_GUIDES:
        if not os.path.exists(os.path.join(app.srcdir, page + ".md")):
            source[0] = source[0].replace(f"\n{page}\n", "\n")


def setup(app):
    app.connect("source-read", _drop_missing_guides)
    # index.md is read again on every build, so an optional guide added later is listed.
    app.connect("env-get-outdated", lambda app, env, added, changed, removed: ["index"])
