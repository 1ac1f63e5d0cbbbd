"""The ``coalloc`` command: one group of subcommands per family.

``coalloc ctaap solve|verify|generate|solve-batch|demo`` (CTAAP, Kravtsov et al.),
``coalloc taskmap map|verify|generate|solve-batch`` (task mapping, Taura & Chien),
``coalloc collective solve|verify|simulate|generate|solve-batch`` (collective requests with
advance reservations, Cankar et al.), ``coalloc testbed assign|verify|generate|simulate``
(Emulab testbed mapping, assign+ and assign) and ``coalloc loadshare
share|gap|generate|verify|solve-batch`` (coalition load sharing, Hovey & Jung; the GAP). The main
job stays one step away: ``coalloc demo``, ``coalloc solve``, ``coalloc verify``,
``coalloc generate`` and ``coalloc solve-batch`` are the CTAAP commands, ``coalloc map`` the
task mapper's. Errors in the input are reported as one line on stderr with exit status 2,
command-line errors too (numeric options take ASCII decimal numbers within their range
only: ``1_0``, Unicode digits, ``inf``, ``nan`` are refused).
Every option that writes a file (``-o``, ``--reserve-to``, ``--records``, pictures) writes it
atomically and refuses, with status 2 and before any work, a path that is also an input of
the command (the same file through another spelling, a symlink or a hard link too).

A solving command exits with 0 when it wrote a solution that passed the family's check
(status ``optimal`` or ``feasible``, or ``time_limit`` with the incumbent of a stopped exact
solver: :attr:`coalloc.Result.has_solution`), 1 when it has none (infeasible, rejected, a
stop without an incumbent, or a solution that fails the check), 2 on bad input, 130 on
Ctrl-C outside a solver, and 141 (128 + SIGPIPE, what a shell reports for a command killed by
a closed pipe), quietly, when its output is piped into a reader that stops early
(``coalloc demo | head -1``).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.abc
import importlib.util
import os
import sys
from typing import Any, Dict, Optional, Sequence, Tuple

from .. import FAMILIES, __version__
from .._shared.family import families, family_spec
from .._shared.jsonio import InstanceError, check_output, protect_inputs, same_file
from ._common import OutputPath, Parser
from ._generic import GenericGroup

__all__ = ["main", "build_parser"]

#: Exit status when standard output is a pipe closed by its reader (128 + SIGPIPE).
EXIT_BROKEN_PIPE = 141


#: A command that names a family (``coalloc testbed verify ...``, ``coalloc plot testbed ...``)
#: or none (``coalloc schema``, ``coalloc docs``) builds only that family's group and imports
#: no other family: the other groups are there, empty, for the parse. ``coalloc``, ``coalloc
#: -h`` and the top-level commands (``solve``, ``map`` ...) build every group as before.
#: ``python -m coalloc testbed verify --help``: 0.88-0.95 -> 0.20-0.23 s of CPU at load 11
#: (ISSUE36.md).
LAZY_FAMILIES = True

#: ``coalloc -h``, a bare ``coalloc``, a mistyped command and the top-level aliases
#: (``coalloc solve ...``, ``coalloc map ...``) build the top level from the light listing
#: (:mod:`._listing`: the families' summaries and the aliases' help lines, no family
#: imported), and an alias the one family it belongs to. False: the whole parser, every
#: family imported, as before. Measured in ISSUE36.md "(h59tail)".
LAZY_TOP = True


def _group(spec: Any) -> Tuple[Any, str]:
    """(what adds the family's subcommands, one-line description) of one family's spec."""
    return (importlib.import_module(spec.cli) if spec.cli else GenericGroup(spec)), spec.summary


def groups() -> Dict[str, Tuple[Any, str]]:
    """Family name -> (what adds its subcommands, one-line description), from the list of
    families (:func:`coalloc._shared.family.families`): the module its ``FamilySpec``
    names (``coalloc.<family>.cli``, in the family's folder), or the generic group
    (``solve``, ``solve-batch``) built from its protocol."""
    return {name: _group(spec) for name, spec in families().items()}


def _named_family(argv: Optional[Sequence[str]]) -> Optional[Tuple[Optional[str], str]]:
    """``(family or None, first word)`` where the command line ``argv`` needs at most one
    family's group (:data:`LAZY_FAMILIES`), else None (every group is built)."""
    if not LAZY_FAMILIES or not argv:
        return None
    first = argv[0]
    if first in FAMILIES:
        return first, first
    if first == "plot" and len(argv) > 1 and argv[1] in FAMILIES:
        return argv[1], first
    if first in ("schema", "docs"):
        return None, first
    return None


def __getattr__(name: str) -> Any:
    if name == "GROUPS":  # derived, never written by hand (a family registered late is in it)
        return groups()
    if name in FAMILIES:  # the old name of a family's command line: coalloc.<name>.cli
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _OldNames(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``coalloc.cli.<family>``, the old name of ``coalloc.<family>.cli``: the same module.

    A family's command line lives in its folder; ``import coalloc.cli.ctaap`` (and ``from
    coalloc.cli.taskmap import ...``) keep working and give that very module (so that a
    ``monkeypatch`` of one is a patch of the other), without a file in this folder.
    """

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        parent, _, family = name.rpartition(".")
        if parent == __name__ and family in FAMILIES:
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec: Any) -> Any:
        return importlib.import_module(f"coalloc.{spec.name.rpartition('.')[2]}.cli")

    def exec_module(self, module: Any) -> None:
        """Nothing: the family's module is already executed."""


if not any(isinstance(finder, _OldNames) for finder in sys.meta_path):
    sys.meta_path.append(_OldNames())


def build_parser(argv: Optional[Sequence[str]] = None) -> argparse.ArgumentParser:
    """The argument parser of the ``coalloc`` command.

    Parameters
    ----------
    argv : sequence of str, optional
        The command line it will parse: with :data:`LAZY_FAMILIES`, a command that names
        one family gets a parser with that family's group only (the others are empty, and
        not imported). None: the whole parser.

    Returns
    -------
    argparse.ArgumentParser
        The parser.
    """
    # Imported here, not at the top: ``coalloc-assign`` (coalloc.cli.assign_compat) imports
    # this package and should not pay for every family's command-line module.
    from . import docs as docs_cli
    from . import explain as explain_cli
    from . import plot as plot_cli
    from . import schema as schema_cli

    named = _named_family(argv)
    if named is not None:
        return _lazy_parser(named, docs_cli, explain_cli, plot_cli, schema_cli)
    if argv is not None and _top_is_light(argv):
        return _top_parser(argv, docs_cli, plot_cli, schema_cli)
    group_table = groups()
    parser = Parser(
        prog="coalloc",
        description="Co-allocation of parallel jobs onto grid, cluster and testbed resources.",
        epilog="Families: "
        + "; ".join(f"'coalloc {name} -h': {text}" for name, (_, text) in group_table.items())
        + ". The CTAAP commands (solve, demo, verify, generate, solve-batch) and the task "
        "mapper's 'map' are also available at the top level. Guides: 'coalloc docs'; "
        f"reference: {docs_cli.URL}",
    )
    parser.add_argument("--version", action="version", version=f"coalloc {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module, text) in group_table.items():
        group = sub.add_parser(name, help=text, description=text)
        commands = group.add_subparsers(dest="subcommand", required=True)
        module.add_commands(commands)
        if "explain" not in commands.choices:  # every family: "why not", one sentence
            explain_cli.add_command(commands, name)
    # The main job, one step away: CTAAP's commands and the task mapper's ``map``.
    for name in ("ctaap", "taskmap"):
        group_table[name][0].add_commands(sub, aliases=True)
    plot_cli.add_commands(sub)
    docs_cli.add_commands(sub)
    schema_cli.add_commands(sub)
    return parser


def _lazy_parser(named: Tuple[Optional[str], str], docs_cli: Any, explain_cli: Any,
                 plot_cli: Any, schema_cli: Any) -> argparse.ArgumentParser:  # fmt: skip
    """The parser of a command that needs one family's group (or none): the others empty."""
    family, first = named
    parser = Parser(prog="coalloc", description="Co-allocation of parallel jobs onto grid, "
                    "cluster and testbed resources.")  # fmt: skip
    parser.add_argument("--version", action="version", version=f"coalloc {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    spec = None if family is None else family_spec(family)  # imports that family only
    for name in FAMILIES:
        if name != family or first != name:
            sub.add_parser(name).add_subparsers(dest="subcommand", required=True)
            continue
        module, text = _group(spec)
        group = sub.add_parser(name, help=text, description=text)
        commands = group.add_subparsers(dest="subcommand", required=True)
        module.add_commands(commands)
        if "explain" not in commands.choices:
            explain_cli.add_command(commands, name)
    if first == "plot":
        plot_cli.add_commands(sub, only=spec)
    docs_cli.add_commands(sub)
    schema_cli.add_commands(sub)
    return parser


def _top_is_light(argv: Sequence[str]) -> bool:
    """Whether the command line ``argv`` needs the top level alone (:data:`LAZY_TOP`): no
    word, help or version first, an alias first, or a first word that names no command
    (the error lists them); the light listing matching the registered families."""
    from .._shared.family import _REGISTRY
    from ._listing import SUMMARIES, alias_family

    if not (LAZY_FAMILIES and LAZY_TOP) or tuple(SUMMARIES) != tuple(FAMILIES):
        return False
    if set(_REGISTRY) - set(FAMILIES):  # a family registered at run time: not listed here
        return False
    if not argv or argv[0] in ("-h", "--help", "--version") or alias_family(argv[0]):
        return True
    return not argv[0].startswith("-") and argv[0] not in (*FAMILIES, "plot", "docs", "schema")


def _top_parser(argv: Sequence[str], docs_cli: Any, plot_cli: Any,
                schema_cli: Any) -> argparse.ArgumentParser:  # fmt: skip
    """The whole parser's top level from the light listing (:mod:`._listing`): the family
    groups and ``plot`` empty, with their help lines; the aliases of ``argv``'s first word
    built by their family (imported), the others' help lines only."""
    from ._listing import ALIASES, SUMMARIES, alias_family

    needed = alias_family(argv[0]) if argv else ""
    parser = Parser(
        prog="coalloc",
        description="Co-allocation of parallel jobs onto grid, cluster and testbed resources.",
        epilog="Families: "
        + "; ".join(f"'coalloc {name} -h': {text}" for name, text in SUMMARIES.items())
        + ". The CTAAP commands (solve, demo, verify, generate, solve-batch) and the task "
        "mapper's 'map' are also available at the top level. Guides: 'coalloc docs'; "
        f"reference: {docs_cli.URL}",
    )
    parser.add_argument("--version", action="version", version=f"coalloc {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, text in SUMMARIES.items():
        group = sub.add_parser(name, help=text, description=text)
        group.add_subparsers(dest="subcommand", required=True)
    for name, lines in ALIASES.items():
        if name == needed:  # the one family this command runs: its commands for real
            _group(family_spec(name))[0].add_commands(sub, aliases=True)
        else:
            for command, text in lines:
                sub.add_parser(command, help=text)
    plot_cli.add_commands(sub, listed=False)
    docs_cli.add_commands(sub)
    schema_cli.add_commands(sub)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the ``coalloc`` command; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    try:
        outputs, inputs = files_of(parser, args)
        with protect_inputs(inputs):  # every write of the command refuses these files
            _check_outputs(outputs)
            status = args.func(args)
        sys.stdout.flush()  # a closed pipe shows up here, inside the handler below
        return status
    except BrokenPipeError:
        return _broken_pipe()
    except (InstanceError, ValueError, TypeError, OSError, ImportError) as exc:
        text = " ".join(str(exc).split())  # one line, whatever the message (a library's too)
        print(f"coalloc: error: {text}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("coalloc: interrupted", file=sys.stderr)
        return 130


def _broken_pipe() -> int:
    """The reader of standard output went away (``coalloc demo | head -1``): end quietly.

    As the Python documentation recommends (``signal`` module, "Note on SIGPIPE"): point
    standard output at ``os.devnull`` so that the interpreter's final flush of what is still
    buffered does not fail a second time, and print nothing.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout without a descriptor (tests)
        pass
    return EXIT_BROKEN_PIPE


def command_parser(parser: argparse.ArgumentParser,
                   args: argparse.Namespace) -> argparse.ArgumentParser:  # fmt: skip
    """The (sub)parser of the command ``args`` was parsed for (``coalloc collective solve``)."""
    current = parser
    while True:
        subs = [a for a in current._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or getattr(args, subs[0].dest, None) is None:
            return current
        current = subs[0].choices[getattr(args, subs[0].dest)]


def files_of(parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple:
    """``(outputs, inputs)`` of a parsed command line, as ``(option, path)`` pairs.

    Outputs are the values of the :class:`~coalloc.cli._common.OutputPath` options (``-o``,
    ``--reserve-to``, ``--records`` ...; ``-`` for standard output left out). Inputs are the
    values of every other argument that takes a free string (positional files, ``--request``,
    ``--ptop`` ...): those that name an existing file are protected from every write.
    """
    outputs, inputs = [], []
    for action in command_parser(parser, args)._actions:
        value = getattr(args, action.dest, None)
        if value is None or action.nargs == 0:
            continue
        label = action.option_strings[-1] if action.option_strings else action.dest
        if isinstance(action, OutputPath):
            if value != "-":
                outputs.append(("/".join(action.option_strings), value))
        elif action.choices is None and action.type in (None, str):
            values = value if isinstance(value, (list, tuple)) else [value]
            inputs += [(label, v) for v in values if isinstance(v, str)]
    return outputs, inputs


def _check_outputs(outputs: Sequence[tuple]) -> None:
    """Refuse an output that is an input, and two outputs naming one file, before any work."""
    for k, (option, path) in enumerate(outputs):
        check_output(path, option=option)
        for other, path2 in outputs[:k]:
            if os.path.realpath(path) == os.path.realpath(path2) or same_file(path, path2):
                raise ValueError(f"{other} and {option} both name {path}: give each its own file")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
