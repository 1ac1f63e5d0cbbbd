"""Docstring fragments written once (issue 37), in the manner of SciPy's ``doccer``.

A parameter, attribute or section that many public functions describe the same way is a
named fragment here; a docstring names it as ``%(name)s`` on a line of its own, and
:func:`filled` puts the fragment there, indented as the placeholder is. The fragments are
numpydoc text, so the docs build validates the filled docstrings as it validates any other.

Only the placeholders of known fragments are replaced (an unknown one is an error at
import, never a silent ``%(...)s`` in the docs), and nothing else in the docstring is
touched: a ``%`` elsewhere stays as written.

Examples
--------
>>> @filled
... def plot(x, path=None):
...     '''Draw ``x``.
...
...     Parameters
...     ----------
...     x : array_like
...     %(plot_path)s
...     '''
>>> print(plot.__doc__.splitlines()[5])
    path : str or path-like, optional
"""

from __future__ import annotations

import re
from typing import Dict, TypeVar

F = TypeVar("F")

#: The fragments, by name: numpydoc text at no indentation (a parameter's description
#: indented by four spaces under its name, as in a docstring).
FRAGMENTS: Dict[str, str] = {
    "plot_path": """\
path : str or path-like, optional
    Also save the figure there.""",
    "plot_raises": """\
ImportError
    Without matplotlib.""",
    "write_dst": """\
dst : str, path-like or file object
    Where to write (atomically, for a path).""",
    "ctaap_graphs": """\
request : Request
    The request graph.
offer : Offer
    The offer graph.""",
    "ctaap_pair": """\
request : Request
offer : Offer""",
    "taskmap_graphs": """\
tasks : TaskGraph
    The task graph.
resources : ResourceGraph
    The resource graph.""",
    "testbed_topologies": """\
top : VirtualTopology
    The experiment.
ptop : PhysicalTopology
    The testbed.""",
    "loadshare_problem": """\
problem : LoadSharingProblem
    The grid and its jobs.""",
    "result_explanation": """\
explanation : Explanation or None
    Why the answer is a "no" or a partial yes (a minimal conflict and the nearest
    request that fits), set by :meth:`coalloc.FamilyInstance.explain`; None
    otherwise.""",
    "explain_time_limit": """\
time_limit : float, default 10.0
    Seconds for the whole explanation: the conflict search gets 0.6 of it, the
    relaxations what is left of about a tenth of it (1 s at least)
    (:func:`~coalloc._shared.explain.fix_deadline`); what does not finish is
    reported, never guessed.""",
    "bound_stop_at": """\
stop_at : float, optional
    A :func:`time.perf_counter` instant after which the call raises
    :class:`BoundStopped` (a solve's deadline); never changes the value returned.""",
    "bound_at_least": """\
at_least : int, default 0
    The size of an allocation known to be feasible (a verified answer's), so a lower
    bound on the optimum: the work stops as soon as the bound meets it (status
    ``"met"``). The value returned is the same as without it (the bound cannot go
    below the optimum; the LP over the singles' rows is the flow with their bounds as
    capacities, and the pairs' rows only lower it).""",
    "collective_request_pool": """\
request : CollectiveRequest
    The request (demand first; the old order ``(pool, request)`` still works, with a
    ``DeprecationWarning``).
pool : ResourcePool""",
}

_PLACEHOLDER = re.compile(r"^([ \t]*)%\((\w+)\)s[ \t]*$", re.MULTILINE)


def fill(doc: str, fragments: Dict[str, str] = FRAGMENTS) -> str:
    """``doc`` with each line ``%(name)s`` replaced by the fragment ``name``, indented as
    the placeholder is.

    Parameters
    ----------
    doc : str
        A docstring.
    fragments : dict of str to str, optional
        The fragments by name (default: :data:`FRAGMENTS`).

    Returns
    -------
    str
        The filled docstring.

    Raises
    ------
    KeyError
        A placeholder names no fragment.

    Examples
    --------
    >>> print(fill("Notes\\n    %(write_dst)s", {"write_dst": "dst : str\\n    Where."}))
    Notes
        dst : str
            Where.
    """

    def put(match: re.Match) -> str:
        indent, name = match.group(1), match.group(2)
        if name not in fragments:
            raise KeyError(f"docstring placeholder %({name})s names no fragment")
        return "\n".join(indent + line if line else line
                         for line in fragments[name].splitlines())  # fmt: skip

    return _PLACEHOLDER.sub(put, doc)


def filled(obj: F) -> F:
    """Decorator: fill the placeholders of ``obj.__doc__`` (:func:`fill`) once, at import.

    Parameters
    ----------
    obj : function or class
        Its docstring may name fragments as ``%(name)s`` lines.

    Returns
    -------
    function or class
        ``obj`` itself, its docstring filled (running Python with ``-OO``, which drops
        docstrings, leaves nothing to fill).
    """
    if getattr(obj, "__doc__", None):
        obj.__doc__ = fill(obj.__doc__)
    return obj
