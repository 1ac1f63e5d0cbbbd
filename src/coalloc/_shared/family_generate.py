"""What ``coalloc <family> generate`` writes, declared in the family's spec (issue 37).

A family lists the kinds of file its ``generate`` command writes
(:attr:`coalloc._shared.family.FamilySpec.generate`): each a :class:`Generated`, naming
the API generators it calls and how the file is written. The command's options are built
from these generators' parameters (:func:`coalloc.cli._generate.add_generate`): the type,
the range and the choices from the generator's table (its ``GENERATORS`` entry, what
``@checked`` validates at every call), the default from its signature (or the command's
own, :attr:`Generated.defaults`), the help from its numpydoc. A parameter a command line
cannot say (a pair, a mapping, a model) is named in :attr:`Generated.fixed` with the
reason, so every declared parameter is either an option or said not to be one.

This module imports no family.
"""

from __future__ import annotations

import importlib
import inspect
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Tuple

__all__ = ["Generated", "generator_table", "parameter_help"]


@dataclass(frozen=True)
class Generated:
    """One kind of file ``coalloc <family> generate`` writes.

    Parameters
    ----------
    name : str
        The word that selects it on the command line (``"fig2"``, ``"pool"``); a family
        with one kind has no such word (``coalloc taskmap generate``).
    generators : tuple of callable
        The API generators the file is drawn with, in the order they are called. Each
        declares its parameters in its module's ``GENERATORS`` table.
    write : callable
        ``write(path, kwargs, args) -> str``: draws with the generators, each called with
        ``kwargs[generator name]`` (the options given, the seed included) and writes the
        file; returns the line the command prints. ``args`` holds the command's own
        options that are no generator's (``--simple``, ``--count``).
    flags : mapping, optional
        Parameter -> its option, where it is not ``--`` and the name with dashes
        (``{"n_nodes": "--nodes"}``).
    defaults : mapping, optional
        Parameter -> the command's default, where it differs from the generator's or the
        generator has none (``fig3``'s ``n_tasks``: 100); a parameter of ``fixed`` listed
        here is passed this value.
    fixed : mapping, optional
        Parameter -> why it is not an option (a pair, a mapping, a model drawn by an
        earlier generator, the kind's own word).

    Examples
    --------
    >>> from coalloc._shared.family import families
    >>> kinds = families()["ctaap"].generate
    >>> [k.name for k in kinds], [g.__name__ for g in kinds[0].generators]
    (['fig2', 'fig3'], ['fig2'])
    """

    name: str
    generators: Tuple[Callable[..., Any], ...]
    write: Callable[[str, Dict[str, Dict[str, Any]], Any], str]
    flags: Mapping[str, str] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    fixed: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.generators or not all(callable(g) for g in self.generators):
            raise TypeError(f"generate kind {self.name!r}: generators must be functions")
        if not callable(self.write):
            raise TypeError(f"generate kind {self.name!r}: write must be callable")
        names = {p for g in self.generators for p in generator_table(g)}
        for what, given in (("flags", self.flags), ("defaults", self.defaults),
                            ("fixed", self.fixed)):  # fmt: skip
            unknown = sorted(set(given) - names)
            if unknown:
                raise ValueError(f"generate kind {self.name!r}: {what} names {unknown}, which "
                                 "no generator of the kind declares")  # fmt: skip

    def parameters(self) -> List[Tuple[Callable[..., Any], str, Any]]:
        """``(generator, parameter, table entry)`` of every declared parameter, in order.

        Returns
        -------
        list of tuple
            One entry per parameter of each generator's table (the seed, the seed policy's,
            is in no table).

        Examples
        --------
        >>> from coalloc._shared.family import families
        >>> kind = families()["taskmap"].generate[0]
        >>> [(g.__name__, p) for g, p, _ in kind.parameters()]
        [('table1_instance', 'c')]
        """
        return [(g, p, entry) for g in self.generators for p, entry in generator_table(g).items()]

    def flag(self, parameter: str) -> str:
        """The option that sets ``parameter`` (``--n-tasks`` unless :attr:`flags` says).

        Parameters
        ----------
        parameter : str
            A parameter of one of the kind's generators.

        Returns
        -------
        str
            The option.
        """
        return self.flags.get(parameter, "--" + parameter.replace("_", "-"))


def generator_table(func: Callable[..., Any]) -> Mapping[str, Any]:
    """A generator's table: its entry in its module's ``GENERATORS``.

    Parameters
    ----------
    func : callable
        A generator decorated with ``@checked(..., tables="GENERATORS")``.

    Returns
    -------
    mapping
        Parameter -> its constraints (the seed is in none).

    Raises
    ------
    ValueError
        The generator's module declares no table for it.

    Examples
    --------
    >>> from coalloc.taskmap.generators import table1_instance
    >>> list(generator_table(table1_instance))
    ['c']
    """
    module = importlib.import_module(func.__module__)
    table = getattr(module, "GENERATORS", {}).get(func.__name__)
    if table is None:
        raise ValueError(f"{func.__module__}.{func.__name__} has no GENERATORS entry")
    return table


_ENTRY = re.compile(r"^(\w+(?:\s*,\s*\w+)*)\s*:")


def parameter_help(func: Callable[..., Any], parameter: str) -> str:
    """The first sentence of ``parameter``'s description in ``func``'s numpydoc.

    Parameters
    ----------
    func : callable
        A documented function.
    parameter : str
        One of its parameters.

    Returns
    -------
    str
        The sentence, without its final full stop; ``""`` when the docstring does not
        describe the parameter.

    Examples
    --------
    >>> from coalloc.testbed.generators import deterlab
    >>> parameter_help(deterlab, "n_switches")
    'Leaf switches'
    """
    lines = (inspect.getdoc(func) or "").splitlines()
    try:
        start = next(k for k, line in enumerate(lines) if line.strip() == "Parameters"
                     and lines[k + 1].startswith("---"))  # fmt: skip
    except (StopIteration, IndexError):
        return ""
    text: List[str] = []
    inside = False
    for k in range(start + 2, len(lines)):
        line = lines[k]
        if k + 1 < len(lines) and lines[k + 1].startswith("---"):
            break  # the next section
        head = _ENTRY.match(line)
        if head and not line.startswith(" "):
            if inside:
                break
            inside = parameter in [n.strip() for n in head.group(1).split(",")]
        elif inside and line.strip():
            text.append(line.strip())
    said = " ".join(text)
    first = re.split(r"(?<=[^.]\.)\s", said, maxsplit=1)[0]
    return first[:-1] if first.endswith(".") else first
