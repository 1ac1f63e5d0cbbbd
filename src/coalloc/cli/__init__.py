"""The ``coalloc`` command: one group of subcommands per family.

``coalloc ctaap solve|verify|generate|solve-batch|demo`` (CTAAP, Kravtsov et al.),
``coalloc taskmap map|verify|generate|solve-batch`` (task mapping, Taura & Chien),
``coalloc collective solve|verify|simulate|generate|solve-batch`` (collective requests with
advance reservations, Cankar et al.), ``coalloc testbed assign|verify|generate|simulate``
(Emulab testbed mapping, assign+ and assign) and ``coalloc loadshare
share|gap|generate|verify|solve-batch`` (coalition load sharing, Hovey & Jung; the GAP). The main
job stays one step away: ``coalloc demo``, ``coalloc solve``, ``coalloc verify``,
``coalloc generate`` and ``coalloc solve-batch`` are the CTAAP commands, ``coalloc map`` the
task mapper's. Errors in the input are reported as one line on stderr with exit status 2.

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
import os
import sys
from typing import Optional, Sequence

from .. import __version__
from .._shared.jsonio import InstanceError, same_file
from . import collective as collective_cli
from . import ctaap as ctaap_cli
from . import docs as docs_cli
from . import loadshare as loadshare_cli
from . import plot as plot_cli
from . import schema as schema_cli
from . import taskmap as taskmap_cli
from . import testbed as testbed_cli

__all__ = ["main", "build_parser"]

#: Exit status when standard output is a pipe closed by its reader (128 + SIGPIPE).
EXIT_BROKEN_PIPE = 141

#: Family name -> (module adding its subcommands, one-line description).
GROUPS = {
    "ctaap": (
        ctaap_cli,
        "co-allocation of a request graph onto clustered offers (Kravtsov et al.)",
    ),
    "taskmap": (taskmap_cli, "mapping task graphs onto resource graphs (Taura & Chien)"),
    "loadshare": (
        loadshare_cli,
        "coalition load sharing (DMCF-GGA, Hovey & Jung) and the generalized assignment problem",
    ),
    "testbed": (testbed_cli, "mapping .top experiments onto .ptop testbeds (assign+, assign)"),
    "collective": (
        collective_cli,
        "collective co-allocation with advance reservations (Cankar et al.)",
    ),
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``coalloc`` command."""
    parser = argparse.ArgumentParser(
        prog="coalloc",
        description="Co-allocation of parallel jobs onto grid, cluster and testbed resources.",
        epilog="Families: "
        + "; ".join(f"'coalloc {name} -h': {text}" for name, (_, text) in GROUPS.items())
        + ". The CTAAP commands (solve, demo, verify, generate, solve-batch) and the task "
        "mapper's 'map' are also available at the top level. Guides: 'coalloc docs'; "
        f"reference: {docs_cli.URL}",
    )
    parser.add_argument("--version", action="version", version=f"coalloc {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module, text) in GROUPS.items():
        group = sub.add_parser(name, help=text, description=text)
        module.add_commands(group.add_subparsers(dest="subcommand", required=True))
    # The main job, one step away.
    ctaap_cli.add_commands(sub, aliases=True)
    taskmap_cli.add_commands(sub, aliases=True)
    plot_cli.add_commands(sub)
    docs_cli.add_commands(sub)
    schema_cli.add_commands(sub)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the ``coalloc`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        _check_output_is_not_an_input(args)
        status = args.func(args)
        sys.stdout.flush()  # a closed pipe shows up here, inside the handler below
        return status
    except BrokenPipeError:
        return _broken_pipe()
    except (InstanceError, ValueError, TypeError, OSError, ImportError) as exc:
        print(f"coalloc: error: {exc}", file=sys.stderr)
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


def _check_output_is_not_an_input(args: argparse.Namespace) -> None:
    """Refuse ``-o FILE`` when FILE is also one of the command's input files."""
    output = getattr(args, "output", None)
    if not output or output == "-":
        return
    for key, value in vars(args).items():
        if key == "output":
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, str) and same_file(item, output):
                raise ValueError(
                    f"the output file {output} is also an input ({key}): "
                    "write the output somewhere else"
                )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
