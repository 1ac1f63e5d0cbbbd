"""``coalloc <family> generate``, built from the family's spec (issue 37).

Every family's ``generate`` subcommand is made here from the kinds its spec declares
(:attr:`coalloc._shared.family.FamilySpec.generate`, each a
:class:`~coalloc._shared.family_generate.Generated`): one option per parameter of the kinds'
generators, typed, ranged and given its choices by the generator's table (what the
generator itself validates), its default from the generator's signature or the kind's
declared default, its help from the generator's numpydoc. An option several kinds share
(``--n-tasks`` of ``fig2`` and ``fig3``) must be declared alike by each generator. The
family's CLI adds only what is no generator's parameter (``--simple``, ``--count``).
"""

from __future__ import annotations

import argparse
import inspect
import re
from typing import Any, Dict, List, Sequence, Tuple

from .._shared.constraints import describe

__all__ = ["add_generate", "run_generate", "generate_options"]


def _default(kind: Any, func: Any, parameter: str) -> Any:
    """The value the kind draws ``parameter`` with when the option is not given (absent:
    the generator's own default, or none)."""
    if parameter in kind.defaults:
        return kind.defaults[parameter]
    p = inspect.signature(func).parameters.get(parameter)
    return inspect.Parameter.empty if p is None else p.default


def generate_options(kinds: Sequence[Any]) -> Dict[str, List[Tuple[Any, Any, str, Any]]]:
    """Each option of the ``generate`` command -> what it sets.

    Parameters
    ----------
    kinds : sequence of Generated
        The family's declared kinds.

    Returns
    -------
    dict
        Option -> ``[(kind, generator, parameter, table entry), ...]``, one entry per
        (kind, parameter) it sets, in declaration order.

    Raises
    ------
    ValueError
        A parameter neither typed by its table nor declared ``fixed`` (a pair, a mapping),
        or an option whose parameters are declared differently by their generators.

    Examples
    --------
    >>> from coalloc._shared.family import families
    >>> sorted(generate_options(families()["ctaap"].generate))
    ['--n-clusters', '--n-tasks', '--range-factor']
    """
    from .._shared.constraints import Interval, Options

    out: Dict[str, List[Tuple[Any, Any, str, Any]]] = {}
    for kind in kinds:
        for func, param, entry in kind.parameters():
            if param in kind.fixed:
                continue
            if not any(isinstance(c, (Interval, Options)) for c in entry or ()):
                raise ValueError(
                    f"generate kind {kind.name!r}: {func.__name__}'s {param} is not a number "
                    f"or a word ({entry!r}): declare it fixed, with the reason"
                )
            flag = kind.flag(param)
            seen = out.setdefault(flag, [])
            if seen and describe(seen[0][3]) != describe(entry):
                raise ValueError(
                    f"option {flag}: {func.__name__}'s {param} ({describe(entry)}) and "
                    f"{seen[0][1].__name__}'s {seen[0][2]} ({describe(seen[0][3])}) differ"
                )
            seen.append((kind, func, param, entry))
    return out


def _plain(text: str) -> str:
    """Numpydoc's markup off, for a terminal (``:meth:`X``` -> X, ````x```` -> x)."""
    return re.sub(r":\w+:`~?([^`]+)`", r"\1", text).replace("``", "")


def _help(kinds: Sequence[Any], fed: List[Tuple[Any, Any, str, Any]]) -> str:
    """The option's help: what the generators' numpydoc says of its parameter (by kind
    when they say different things, or when not every kind takes it), then its defaults."""
    from .._shared.family_generate import parameter_help

    said: Dict[str, List[str]] = {}
    for kind, func, param, _ in fed:
        text = _plain(parameter_help(func, param))
        if not text:
            raise ValueError(f"{func.__module__}.{func.__name__} does not describe "
                             f"{param} in its numpydoc: the option help is read there")
        said.setdefault(text, []).append(kind.name)
    every = len(kinds) == 1 or len(fed) == len(kinds)
    if len(said) == 1 and every:
        out = next(iter(said))
    else:
        out = "; ".join(f"{text} ({', '.join(names)})" for text, names in said.items())
    defaults = [(k.name, _default(k, f, p)) for k, f, p, _ in fed]
    shown = [(n, d) for n, d in defaults if d is not inspect.Parameter.empty and d is not None]
    if len({repr(d) for _, d in shown}) == 1 and len(shown) == len(defaults):
        out += f"; default {shown[0][1]}"
    elif shown:
        out += "; default " + ", ".join(f"{n} {d}" for n, d in shown)
    return out


def add_generate(sub: Any, family: str, *, help: str) -> argparse.ArgumentParser:
    """Add ``generate`` to a family's subcommands, its options from the family's spec.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The family's subcommands.
    family : str
        The registered family whose ``spec.generate`` kinds the command writes.
    help : str
        The subcommand's one line.

    Returns
    -------
    argparse.ArgumentParser
        The subcommand (``--seed``, ``-o`` and the kinds' options added; the family adds
        its own options and ``func``).

    Raises
    ------
    ValueError
        The family declares no kind, or a kind's parameters cannot be options (see
        :func:`generate_options`).
    """
    from .._shared.family import family_spec
    from . import _common as common

    kinds = tuple(family_spec(family).generate)
    if not kinds:
        raise ValueError(f"family {family!r} declares nothing for generate (spec.generate)")
    p = sub.add_parser("generate", help=help)
    if len(kinds) > 1:
        p.add_argument("kind", choices=[k.name for k in kinds])
    for flag, fed in generate_options(kinds).items():
        _, func, param, entry = fed[0]
        common.add_table_option(p, flag, entry, name=param, default=None,
                                help=_help(kinds, fed))  # fmt: skip
    common.add_seed(p)
    p.set_defaults(generate_family=family)
    return p


def generator_kwargs(kind: Any, args: argparse.Namespace) -> Dict[str, Dict[str, Any]]:
    """The keywords each of the kind's generators is called with: the options given, else
    the kind's declared default, else the generator's own; and the seed.

    Parameters
    ----------
    kind : Generated
        The kind being written.
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    dict
        Generator name -> its keyword arguments.
    """
    out: Dict[str, Dict[str, Any]] = {}
    for func in kind.generators:
        kw: Dict[str, Any] = {}
        for _, param, _ in [t for t in kind.parameters() if t[0] is func]:
            value = None
            if param not in kind.fixed:
                value = getattr(args, kind.flag(param).lstrip("-").replace("-", "_"), None)
            if value is None:
                value = _default(kind, func, param)
            if value is not None and value is not inspect.Parameter.empty:
                kw[param] = value
        if "seed" in inspect.signature(func).parameters:
            kw["seed"] = args.seed
        out[func.__name__] = kw
    return out


def run_generate(args: argparse.Namespace) -> int:
    """``coalloc <family> generate``: draw with the kind's generators, write, say what.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (``generate_family``, ``kind`` when the family has more
        than one, the options, ``seed``, ``output``).

    Returns
    -------
    int
        0.
    """
    from .._shared.family import family_spec

    kinds = family_spec(args.generate_family).generate
    name = getattr(args, "kind", None)
    kind = kinds[0] if len(kinds) == 1 else next(k for k in kinds if k.name == name)
    print(kind.write(args.output, generator_kwargs(kind, args), args))
    return 0
