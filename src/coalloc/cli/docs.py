"""``coalloc docs [TOPIC]``: the guides, printed from the installed package.

The Markdown guides of the repository's ``docs/`` folder are copied into ``coalloc/_docs/``
when the package is built (the ``build_py`` step of ``setup.py``), so an installed coalloc
can show them without its source tree; from a source checkout the ``docs/`` folder itself is
read. The whole site (API reference included) is published at :data:`URL`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Dict, List, Optional

__all__ = ["URL", "add_commands", "docs_dir", "topics", "read_topic"]

#: Where the documentation site (API reference and guides) is published.
URL = "https://coalloc.readthedocs.io"

#: Pages of ``docs/`` that are not guides to print (Sphinx sources).
_NOT_TOPICS = {"index", "results"}


def _candidates() -> List[Path]:
    package = Path(__file__).resolve().parent.parent  # .../coalloc
    # Installed: the copies made at build time. Source checkout: src/coalloc -> ../../docs.
    return [package / "_docs", package.parent.parent / "docs"]


def docs_dir() -> Optional[Path]:
    """The folder holding the Markdown guides, or None when none is found.

    Returns
    -------
    pathlib.Path or None
        ``coalloc/_docs`` inside an installed package, else the ``docs/`` folder of the
        source checkout the package was imported from.

    Examples
    --------
    >>> from coalloc.cli.docs import docs_dir
    >>> (docs_dir() / "formats.md").is_file()
    True
    """
    for path in _candidates():
        if (path / "formats.md").is_file():
            return path
    return None


def topics() -> Dict[str, Path]:
    """The guides that ``coalloc docs TOPIC`` can print.

    Returns
    -------
    dict of str to pathlib.Path
        Topic name (the file name without ``.md``) -> file, in name order.

    Examples
    --------
    >>> from coalloc.cli.docs import topics
    >>> {"formats", "ctaap", "taskmap", "architecture"} <= set(topics())
    True
    """
    where = docs_dir()
    if where is None:
        return {}
    found = sorted(p for p in where.glob("*.md") if p.stem not in _NOT_TOPICS)
    return {p.stem: p for p in found}


def _title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem


def read_topic(topic: str) -> str:
    """The text of one guide.

    Parameters
    ----------
    topic : str
        A topic name from :func:`topics` (``"formats"``, ``"taskmap"``, ...); a trailing
        ``.md`` is accepted.

    Returns
    -------
    str
        The guide, as Markdown.

    Raises
    ------
    ValueError
        If ``topic`` is not one of the guides (the message lists them).

    Examples
    --------
    >>> from coalloc.cli.docs import read_topic
    >>> read_topic("formats").splitlines()[0].startswith("# ")
    True
    """
    name = topic[:-3] if topic.endswith(".md") else topic
    found = topics()
    if name not in found:
        known = ", ".join(found) or "none installed"
        raise ValueError(f"no documentation topic {topic!r}; topics: {known} (or see {URL})")
    return found[name].read_text(encoding="utf-8")


def _cmd_docs(args: argparse.Namespace) -> int:
    if args.topic:
        sys.stdout.write(read_topic(args.topic))
        return 0
    found = topics()
    print(f"coalloc documentation: {URL}")
    if not found:
        print("(the guides are not installed with this copy of coalloc)")
        return 0
    print("Guides ('coalloc docs TOPIC' prints one):")
    for name, path in found.items():
        print(f"  {name:<13} {_title(path)}")
    return 0


def add_commands(sub) -> None:
    """Add the ``docs`` command to ``sub`` (a subparsers object).

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subcommands of the ``coalloc`` command.

    Examples
    --------
    >>> import argparse
    >>> from coalloc.cli.docs import add_commands
    >>> parser = argparse.ArgumentParser(prog="coalloc")
    >>> add_commands(parser.add_subparsers(dest="command"))
    >>> parser.parse_args(["docs", "formats"]).topic
    'formats'
    """
    p = sub.add_parser(
        "docs",
        help="print a guide (formats, ctaap, taskmap, ...) or list them",
        description=f"Print a guide shipped with coalloc, or list them. Site: {URL}",
    )
    p.add_argument("topic", nargs="?", default=None,
                   help="the guide to print (without a topic: list them)")  # fmt: skip
    p.set_defaults(func=_cmd_docs)
