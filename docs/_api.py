"""Write the API reference page of each family from its ``__all__`` (called by conf.py).

Each family's page documents every name of ``coalloc.<family>.__all__``: functions and
classes by autodoc (classes with their members), submodules (``generators``) by automodule,
constants by autodata, and a name that is another exported function under a second name
(``collective.solve`` = ``coallocate``) as an alias. A new export therefore appears in the
reference, and under numpydoc's validation, without editing any page by hand.

:func:`documented_members` lists the public methods and properties of every class the
reference shows with its members, so that conf.py can hold each kind to its own numpydoc
check set.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import re
from typing import Dict


def _families() -> dict:
    """The registered families (``coalloc._shared.family.families``: name -> FamilySpec)."""
    import coalloc  # noqa: F401 - importing coalloc registers every family of coalloc.FAMILIES
    from coalloc._shared.family import families

    return families()


#: Classes of the hand-written top-level page (api/coalloc.rst): each has a page with its members.
TOP_LEVEL_CLASSES = ("BatchError", "Result", "Report", "FamilyInstance", "InstanceError")


def documented_classes() -> Dict[str, type]:
    """Documented name -> class, for every class the reference shows with ``:members:``.

    The classes of each family's ``__all__``, the public classes defined in its exported
    submodules (``automodule`` with ``:members:``), and :data:`TOP_LEVEL_CLASSES`.
    """
    import coalloc

    out = {f"coalloc.{name}": getattr(coalloc, name) for name in TOP_LEVEL_CLASSES}
    for family in _families():
        module = importlib.import_module(f"coalloc.{family}")
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj):
                out[f"coalloc.{family}.{name}"] = obj
            elif inspect.ismodule(obj):
                # autodoc documents every name of a submodule's __all__ (a class it
                # re-exports from its family's result.py too), else the classes it defines
                listed = getattr(obj, "__all__", None)
                names = listed or [n for n in vars(obj) if n[:1] != "_"]
                for cname in names:
                    cls = getattr(obj, cname, None)
                    if inspect.isclass(cls) and (listed or cls.__module__ == obj.__name__):
                        out[f"{obj.__name__}.{cname}"] = cls
    return out


def member_kind(raw) -> str:
    """``"method"``, ``"attribute"`` (a property) or ``""`` (not validated) of a class member.

    ``raw`` is the member as stored in the class ``__dict__``. Fields of a ``NamedTuple``
    (documented by the class's Parameters section, left out of the pages by conf.py) and
    plain class attributes are not validated.
    """
    if isinstance(raw, (staticmethod, classmethod)) or inspect.isfunction(raw):
        return "method"
    if isinstance(raw, (property, functools.cached_property)):
        return "attribute"
    return ""


def documented_members() -> Dict[str, str]:
    """Full name -> ``"method"`` or ``"attribute"`` of every public member of the classes
    of :func:`documented_classes` defined in the class itself (autodoc's ``:members:``
    without inherited members)."""
    out = {}
    for full, cls in documented_classes().items():
        for name, raw in vars(cls).items():
            kind = member_kind(raw)
            if kind and not name.startswith("_"):
                out[f"{full}.{name}"] = kind
    return out


def _title(family: str, module) -> str:
    spec = _families().get(family)
    if spec is not None and spec.title:  # the title the family registered
        return spec.title
    doc = (module.__doc__ or family).strip().splitlines()[0]
    return doc.rstrip(".")


def _section(obj) -> str:
    """The heading a function or class of a family's ``__all__`` is listed under."""
    stem = (getattr(obj, "__module__", None) or "").rsplit(".", 1)[-1]
    if inspect.isclass(obj):
        return "Results and reports" if stem in ("result", "verify") else "Models and instances"
    return SECTIONS_BY_MODULE.get(stem, "Solving")


#: Section of a function by the last part of the module defining it (else "Solving").
SECTIONS_BY_MODULE = {
    "model": "Models and instances",
    "verify": "Checking an answer",
    "io": "Files",
    "graphfiles": "Files",
    "plot": "Pictures",
}

#: Order of the sections of a family page.
SECTION_ORDER = ("Solving", "Models and instances", "Results and reports",
                 "Checking an answer", "Files", "Pictures")  # fmt: skip


def _autosummary(names, module: str) -> list:
    """An autosummary table of ``names`` (relative to ``module``), one page per name."""
    return [f".. currentmodule:: {module}", "", ".. autosummary::", "   :toctree: generated/",
            "   :nosignatures:", "", *(f"   {n}" for n in names), ""]  # fmt: skip


def _canonical(module, name: str, obj) -> str:
    """The name under which ``obj`` gets its own page: its ``__name__`` when the family
    exports it under that name too, else the first name of ``__all__`` bound to it."""
    real = getattr(obj, "__name__", name)
    if real in module.__all__ and getattr(module, real) is obj:
        return real
    return next(n for n in module.__all__ if getattr(module, n) is obj)


def _submodule_names(sub) -> list:
    """The public names of an exported submodule: its ``__all__``, else what it defines."""
    listed = getattr(sub, "__all__", None)
    if listed:
        return list(listed)
    return [n for n, o in vars(sub).items() if n[:1] != "_"
            and getattr(o, "__module__", None) == sub.__name__]  # fmt: skip


def family_page(family: str) -> str:
    """The reST text of the API page of ``coalloc.<family>``.

    Summary tables (``autosummary``) of the functions and classes of ``__all__``, grouped
    by what they are for, each name with a page of its own (generated by autosummary from
    ``docs/_templates/autosummary``); other names of the same object as aliases; constants
    inline (``autodata``); each exported submodule with a table of its own.
    """
    module = importlib.import_module(f"coalloc.{family}")
    prefix = f"coalloc.{family}"
    sections: Dict[str, list] = {title: [] for title in SECTION_ORDER}
    aliases, constants, submodules = [], [], []
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.ismodule(obj):
            submodules.append(obj)
        elif inspect.isclass(obj) or callable(obj):
            real = _canonical(module, name, obj)
            if real != name:
                aliases.append((name, real, obj))
            else:
                sections.setdefault(_section(obj), []).append(name)
        else:
            constants.append(name)
    title = _title(family, module)
    lines = [f".. _api-{family}:", "", title, "=" * len(title), "",
             f".. automodule:: {prefix}", "   :no-members:", "",
             f"User guide: :doc:`../{family}`. Every name of ``{prefix}.__all__`` is listed "
             "below (this page is written from it by ``docs/_api.py``); each links to its "
             "own page.", ""]  # fmt: skip
    for head, names in sections.items():
        if names:
            lines += [head, "-" * len(head), "", *_autosummary(names, prefix)]
    if aliases:
        lines += ["Other names", "-----------", "", f".. currentmodule:: {prefix}", ""]
        for name, real, obj in aliases:
            if inspect.isclass(obj):
                lines += [f".. py:class:: {name}", "", f"   Alias of :class:`{prefix}.{real}`.", ""]
            else:
                sig = inspect.signature(obj)
                bare = sig.replace(
                    parameters=[p.replace(annotation=p.empty) for p in sig.parameters.values()],
                    return_annotation=sig.empty,
                )
                lines += [f".. py:function:: {name}{bare}", "",
                          f"   Alias of :func:`{prefix}.{real}`.", ""]  # fmt: skip
    if constants:
        lines += ["Constants", "---------", ""]
        lines += [f".. autodata:: {prefix}.{name}\n   :no-value:\n" for name in constants]
    for sub in submodules:
        head = f"``{sub.__name__}``"
        names = _submodule_names(sub)
        tabled = [n for n in names if inspect.isclass(getattr(sub, n)) or callable(getattr(sub, n))]
        lines += [head, "-" * len(head), "", f".. automodule:: {sub.__name__}",
                  "   :no-members:", "", *_autosummary(tabled, sub.__name__)]  # fmt: skip
        lines += [f".. autodata:: {sub.__name__}.{n}\n   :no-value:\n"
                  for n in names if n not in tabled]  # fmt: skip
    return "\n".join(lines).rstrip() + "\n"


_TABLE = re.compile(
    r"^\.\. currentmodule:: (\S+)\n\n\.\. autosummary::\n(?:   :.*\n)*\n((?:   \S+\n)+)", re.M
)


def page_entries(text: str) -> Dict[str, str]:
    """Full name -> directive of every object a page of the reference documents.

    The names of its autosummary tables (``"autosummary"``, each on a page of its own)
    and of its ``auto*`` / ``py:function`` / ``py:class`` directives.
    """
    out = {}
    for module, block in _TABLE.findall(text):
        for name in block.split():
            out[f"{module}.{name}"] = "autosummary"
    module = None
    for line in text.splitlines():
        m = re.match(r"\.\. currentmodule:: (\S+)$", line)
        if m:
            module = m.group(1)
        m = re.match(r"\.\. (auto\w+|py:function|py:class):: ([\w.]+)", line)
        if m and m.group(1) != "automodule":
            name = m.group(2)
            out[name if name.startswith("coalloc") else f"{module}.{name}"] = m.group(1)
    return out


def api_index() -> str:
    """The reST text of ``api/index.rst``: the top-level page, then one page per family."""
    head = ("API reference\n=============\n\n"
            "Generated from the numpydoc docstrings. Every public function and class of every "
            "family\n(each family's ``__all__``) and of the top level is listed; the examples run "
            "as doctests.\n\n.. toctree::\n   :maxdepth: 1\n\n   coalloc\n")  # fmt: skip
    return head + "".join(f"   {family}\n" for family in _families())


def api_pages() -> Dict[str, str]:
    """File name -> reST text of every family's API page, and of the index listing them."""
    pages = {f"{family}.rst": family_page(family) for family in _families()}
    pages["index.rst"] = api_index()
    return pages


def write_api_pages(folder: str) -> None:
    """Write the pages into ``folder``, touching only those whose text changed."""
    for name, text in api_pages().items():
        path = os.path.join(folder, name)
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if old != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
