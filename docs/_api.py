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
from typing import Dict


def _families() -> dict:
    """The registered families (``coalloc._shared.family.families``: name -> FamilySpec)."""
    import coalloc  # noqa: F401 - importing coalloc registers every family of coalloc.FAMILIES
    from coalloc._shared.family import families

    return families()


#: Classes of the hand-written top-level page (api/coalloc.rst) shown with their members.
TOP_LEVEL_CLASSES = ("BatchError", "Result", "Report", "FamilyInstance")


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


def family_page(family: str) -> str:
    """The reST text of the API page of ``coalloc.<family>``."""
    module = importlib.import_module(f"coalloc.{family}")
    prefix = f"coalloc.{family}"
    groups: Dict[str, list] = {"Functions": [], "Classes": [], "Constants": []}
    submodules = []
    for name in module.__all__:
        obj = getattr(module, name)
        full = f"{prefix}.{name}"
        if inspect.ismodule(obj):
            submodules.append(obj.__name__)
        elif inspect.isclass(obj):
            groups["Classes"].append(f".. autoclass:: {full}\n   :members:\n")
        elif callable(obj):
            real = getattr(obj, "__name__", name)
            if real != name and real in module.__all__ and getattr(module, real) is obj:
                sig = inspect.signature(obj)
                bare = sig.replace(
                    parameters=[p.replace(annotation=p.empty) for p in sig.parameters.values()],
                    return_annotation=sig.empty,
                )
                groups["Functions"].append(
                    f".. py:function:: {full}{bare}\n\n"
                    f"   Alias of :func:`{prefix}.{real}`.\n"
                )
            else:
                groups["Functions"].append(f".. autofunction:: {full}\n")
        else:
            groups["Constants"].append(f".. autodata:: {full}\n   :no-value:\n")
    title = _title(family, module)
    lines = [f".. _api-{family}:", "", title, "=" * len(title), "",
             f".. automodule:: {prefix}", "   :no-members:", "",
             f"User guide: :doc:`../{family}`. Every name below is exported by "
             f"``{prefix}.__all__`` (this page is written from it by ``docs/_api.py``).", ""]
    for kind, items in groups.items():
        if items:
            lines += [kind, "-" * len(kind), ""] + items
    for sub in submodules:
        head = f"``{sub}``"
        lines += [head, "-" * len(head), "", f".. automodule:: {sub}", "   :members:", ""]
    return "\n".join(lines).rstrip() + "\n"


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
