"""Sphinx configuration of the coalloc documentation (``bash ci/docs.sh`` builds it).

The API reference is generated from the numpydoc docstrings: ``docs/_api.py`` writes one page
per family with summary tables (autosummary) from its ``__all__``, and autosummary gives every
function and class a page of its own (templates in ``_templates/autosummary``). The guides are
the Markdown pages of ``docs/`` (read by myst-parser); the example gallery is ``examples/``,
run by sphinx-gallery at every build; the theme is pydata-sphinx-theme (SciPy's, NumPy's).
numpydoc validates the docstring of every object the reference documents
(``numpydoc_validation_checks``), so a public function or method without Parameters, Returns
or Examples fails the build (``-W``); properties are held to ``ATTRIBUTE_CHECKS`` (below).
"""

import os
import re
import sys

import coalloc  # the installed package (ci/docs.sh), or src/ on PYTHONPATH with built kernels

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _api import documented_classes, documented_members, write_api_pages  # noqa: E402
from sphinx.util import logging as sphinx_logging  # noqa: E402

# docs/api/<family>.rst are written from each family's __all__ (every export documented).
write_api_pages(os.path.join(os.path.dirname(os.path.abspath(__file__)), "api"))

project = "coalloc"
author = "the coalloc developers"
copyright = "the coalloc developers, BSD-3-Clause"
version = release = coalloc.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.viewcode",
    "sphinx_gallery.gen_gallery",
    "numpydoc",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "img", "sg_execution_times.rst"]
templates_path = ["_templates"]

# Markdown guides: GitHub-style heading anchors, so links like loadshare.md#formats resolve.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

autodoc_default_options = {"show-inheritance": True}
autodoc_typehints = "none"  # the numpydoc Parameters sections carry the types
autodoc_member_order = "bysource"
# autosummary writes the page of every name of the tables of api/*.rst into api/generated/.
autosummary_generate = True
# A class page starts with tables of its own methods and properties (numpydoc), whose full
# documentation follows on the same page (autoclass :members:).
numpydoc_show_class_members = True
numpydoc_show_inherited_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True

# Enforced on every documented public function, class and method (of every class the
# reference shows with its members: _api.documented_members): a docstring (GL08), every
# parameter documented (PR01) and no unknown one (PR02), a Returns section where the
# function returns something (RT01), and an Examples section (EX01) that runs as a doctest
# (ci/docs.sh runs them with pytest --doctest-modules).
numpydoc_validation_checks = {"GL08", "PR01", "PR02", "RT01", "EX01"}

#: Name -> "method" | "attribute" of the public members of the documented classes.
MEMBERS = documented_members()

# Properties are read like fields, so they get the checks of a field: a docstring (GL08)
# whose summary is one line (SS01) ending with a period (SS03) and says what the value is.
# Not EX01 (their class's Examples use them; an example per accessor would repeat it) and
# not RT01 (numpydoc does not apply Returns/Parameters to properties: they are not called).
ATTRIBUTE_CHECKS = {"GL08", "SS01", "SS03"}

numpydoc_validation_exclude = {
    r"\.__\w+__$",  # dunder methods
    r"\.[A-Z][A-Z0-9_]+$",  # constants (METHODS, STATUSES, ...): a #: comment, no Examples
    r"Result\.sense$",  # a result class's objective direction: a #: comment, no Examples
    # Properties: held to ATTRIBUTE_CHECKS by _validate_attribute below instead.
    *(rf"^{re.escape(name)}$" for name, kind in MEMBERS.items() if kind == "attribute"),
    # Being rewritten on the strict-readers branch (s19-fuzz, new ``root`` parameter); their
    # docstrings get Parameters/Examples after that lands. Remove these two lines then.
    r"^coalloc\.testbed\.ptop_from_dict$",
    r"^coalloc\.testbed\.top_from_dict$",
}

html_theme = "pydata_sphinx_theme"
html_title = f"coalloc {release}"
html_short_title = "coalloc"
html_theme_options = {
    "logo": {"text": "coalloc"},
    "github_url": "https://github.com/coalloc/coalloc",  # [project.urls] Source of pyproject
    "navbar_align": "left",
    "navbar_end": ["theme-switcher", "navbar-icon-links"],  # light / dark / auto
    "header_links_before_dropdown": 6,
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "show_prev_next": False,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version", "theme-version"],
}
html_context = {"default_mode": "auto"}
html_sidebars = {"index": [], "benchmarks": [], "results": []}
html_static_path = ["_static"]
html_css_files = ["coalloc.css"]

# The JSON examples of formats.md elide values with "...": highlighting falls back, harmlessly.
suppress_warnings = ["misc.highlighting_failure"]

# The example gallery: every examples/plot_*.py runs at each build (headless, Agg), its
# figures and output shown; an example that raises fails the build. Each API page lists the
# examples that use its object (the minigallery of _templates/autosummary).
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"plot_",
    "within_subsection_order": "FileNameSortKey",
    "doc_module": ("coalloc",),
    "backreferences_dir": "gen_modules/backreferences",
    "reference_url": {"coalloc": None},
    "image_scrapers": ("matplotlib",),
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "min_reported_time": 1,
    "write_computation_times": False,
}

#: The page whose "Guides" toctree lists the guides.
GUIDE_PAGE = "guide"

#: Guides listed in the toctree of guide.rst only when their page exists.
OPTIONAL_GUIDES = ("plotting", "why-not")


def _drop_missing_guides(app, docname, source):
    """Remove the toctree entries of optional guides whose page is not there."""
    if docname != GUIDE_PAGE:
        return
    for page in OPTIONAL_GUIDES:
        if not os.path.exists(os.path.join(app.srcdir, page + ".md")):
            source[0] = source[0].replace(f"\n   {page}\n", "\n")


def _list_family_guides(app, docname, source):
    """Add the guide page ``<family>.md`` of every registered family that the Guides toctree
    of guide.rst (its last block) does not list yet (after the last family listed), so that
    a new family's guide is in the site without an edit outside its own files."""
    if docname != GUIDE_PAGE:
        return
    from _api import _families

    text = source[0] if source[0].endswith("\n") else source[0] + "\n"
    start = text.find(":caption: Guides")
    if start < 0:
        return
    block = text[start:]
    listed = [f for f in _families() if f"\n   {f}\n" in block]
    missing = [f for f in _families() if f not in listed
               and os.path.exists(os.path.join(app.srcdir, f + ".md"))]  # fmt: skip
    if not missing:
        return
    anchor = f"\n   {listed[-1]}\n" if listed else "\n\n"
    at = text.index(anchor, start) + len(anchor)
    source[0] = text[:at] + "".join(f"   {f}\n" for f in missing) + text[at:]


def _validate_attribute(app, what, name, obj, options, lines):
    """numpydoc's validation of a property, with ``ATTRIBUTE_CHECKS``."""
    if MEMBERS.get(name) != "attribute":
        return
    from numpydoc.validate import validate

    errors = [e for e in validate(name)["errors"] if e[0] in ATTRIBUTE_CHECKS]
    if errors:
        text = "".join(f"  {code}: {message}\n" for code, message in errors)
        sphinx_logging.getLogger(__name__).warning(
            f"[numpydoc] Validation warnings while processing docstring for {name!r}:\n{text}"
        )


def _check_undocumented_members(app):
    """GL08 for a public method or property without a docstring of its own.

    autodoc leaves a member without any docstring out of the page (no ``:undoc-members:``),
    so numpydoc never sees it; this check is what makes a missing docstring fail the build.
    An override that only inherits its docstring fails too, as numpydoc's GL08 would.
    """
    classes = documented_classes()
    for name, kind in MEMBERS.items():
        owner, attr = name.rsplit(".", 1)
        if not (getattr(getattr(classes[owner], attr), "__doc__", None) or "").strip():
            sphinx_logging.getLogger(__name__).warning(
                f"[numpydoc] GL08: the {kind} {name} has no docstring"
            )


def _skip_namedtuple_fields(app, what, name, obj, skip, options):
    """Leave out the "Alias for field number N" getters of a NamedTuple.

    The class's Parameters section documents its fields.
    """
    if type(obj).__name__ == "_tuplegetter":
        return True
    return None


def setup(app):
    app.connect("autodoc-process-docstring", _validate_attribute)
    app.connect("autodoc-skip-member", _skip_namedtuple_fields)
    app.connect("builder-inited", _check_undocumented_members)
    app.connect("source-read", _drop_missing_guides)
    app.connect("source-read", _list_family_guides)
    # guide.rst is read again on every build, so an optional guide added later is listed.
    app.connect("env-get-outdated", lambda app, env, added, changed, removed: [GUIDE_PAGE])
