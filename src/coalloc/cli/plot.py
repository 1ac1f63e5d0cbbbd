"""``coalloc plot FAMILY INPUT... [RESULT] -o picture.png``: a picture of a result.

``INPUT...`` are the input files of the family's solve command, in its order (``coalloc
plot collective REQUEST POOL`` as ``coalloc collective solve REQUEST POOL``, ``coalloc plot
testbed TOP PTOP`` as ``coalloc testbed assign TOP PTOP``), then the optional RESULT file.
Without a RESULT file the instance is solved first (``--method``, ``--seed``, ``-p``). The
format of the picture follows the suffix of ``-o`` (``.png``, ``.svg``, ``.pdf``). Needs the
``[plot]`` extra (matplotlib).

Each family writes its own ``coalloc plot <family>`` command (``add_plot(subparsers)`` of the
module its :class:`~coalloc._shared.family.FamilySpec` names as ``plot``) with the common
options of this module; this module names no family.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any

from .._shared.family import families
from . import _common as common

__all__ = ["add_commands", "picture_options", "picture_params", "picture_done"]


def picture_params(args) -> dict:
    """The ``-p KEY=VALUE`` parameters of a plot command, as a dict."""
    return dict(getattr(args, "param", None) or [])


def picture_done(fig: Any, args) -> int:
    """Write the picture to ``-o`` and say so; the exit status (0)."""
    from .._shared.plotting import save_figure

    written = save_figure(fig, args.output, dpi=args.dpi)  # the one writer; -o pic: pic.png
    print(f"picture written to {written}")
    return 0


# ----------------------------------------------------------------------------- parser


def picture_options(p: argparse.ArgumentParser, example: str) -> None:
    """The options of every plot command: ``-o``, ``--method``, ``--seed``, ``-p``, ``--dpi``."""
    common.add_output(p, "picture to write (.png, .svg, .pdf ...)", required=True)
    p.add_argument("--method", default=None, help="method used when no RESULT is given")
    common.add_seed(p)
    common.add_params(p, example)
    p.add_argument(
        "--dpi", type=common.count(1, 10_000), default=120, help="resolution of raster pictures"
    )


def add_commands(sub, only: Any = None, *, listed: bool = True) -> None:
    """Add ``plot`` and its per-family subcommands to ``sub`` (a subparsers object); with
    ``only`` (a ``FamilySpec``), that family's subcommand alone (the others not imported);
    with ``listed`` false, none (``coalloc -h``: only ``plot``'s own line is shown)."""
    top = sub.add_parser(
        "plot", help="draw a result as a picture (needs the [plot] extra: matplotlib)",
        description="Draw a result of any family as a picture. The input files come in the "
        "order of the family's solve command, then the optional RESULT file; without it the "
        "instance is solved first (--method, --seed, -p). The format follows the suffix of -o "
        "(.png, .svg, .pdf). Needs the [plot] extra (matplotlib).",
    )  # fmt: skip
    fams = top.add_subparsers(dest="family", required=True, metavar="FAMILY")
    if not listed:
        return
    for spec in [only] if only is not None else families().values():  # from each spec
        if spec.plot:
            importlib.import_module(spec.plot).add_plot(fams)
