"""Run one coverage-guided fuzz target with atheris, or replay the committed corpus.

Usage::

    python fuzz/run.py TARGET [libFuzzer options]   # e.g. -max_total_time=10
    python fuzz/run.py --replay [TARGET ...]        # every file of fuzz/corpus/<target>/
    python fuzz/run.py --list

A fuzzing run starts from ``fuzz/corpus/<TARGET>/`` (read only: new inputs go to a scratch
folder unless a writable corpus folder is given after the options) and stops at the first
finding (libFuzzer writes it to ``crash-*``; the exit status is not 0).
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def _families() -> tuple:
    """``coalloc.FAMILIES``, read from the source without importing coalloc (the fuzzer must
    import it under its instrumentation, after this list is made)."""
    import ast

    init = os.path.join(HERE, os.pardir, "src", "coalloc", "__init__.py")
    with open(init, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [
            "FAMILIES"
        ]:
            return tuple(ast.literal_eval(node.value))
    raise RuntimeError(f"no FAMILIES in {init}")


FAMILIES = _families()
#: The modules whose branches guide the fuzzer: everything but the solvers' internals
#: (instrumenting those too doubles the start-up time and adds no reader coverage).
EXCLUDED = [
    "coalloc._shared.milp", "coalloc._shared.progress", "coalloc.batch",
    *(f"coalloc.{f}.{m}" for f in FAMILIES for m in ("exact", "_reference", "generators")),
    "coalloc.ctaap.solver", "coalloc.taskmap.mapper", "coalloc.taskmap.clustering",
    "coalloc.taskmap.engine", "coalloc.taskmap.multilevel", "coalloc.taskmap.bisection",
    "coalloc.taskmap.refinement", "coalloc.taskmap.levels", "coalloc.taskmap.hierarchy",
    "coalloc.collective.cankar", "coalloc.collective.scan", "coalloc.collective.simulate",
    "coalloc.testbed.anneal", "coalloc.testbed.assignplus", "coalloc.testbed.problem",
    "coalloc.testbed.routing", "coalloc.testbed.simulate", "coalloc.loadshare.dmcf",
]  # fmt: skip


def _replay(names) -> int:
    import targets

    bad = 0
    count = 0
    for name in names or sorted(targets.TARGETS):
        folder = os.path.join(targets.CORPUS, name)
        files = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
        if not files:
            print(f"replay: no corpus for {name}")
            bad += 1
            continue
        for fname in files:
            with open(os.path.join(folder, fname), "rb") as fh:
                data = fh.read()
            count += 1
            try:
                targets.TARGETS[name](data)
            except BaseException as exc:  # noqa: BLE001 - reported, then the run fails
                bad += 1
                print(f"replay: {name}/{fname}: {type(exc).__name__}: {exc}")
    print(f"replay: {count} corpus files, {bad} findings")
    targets.cleanup()
    return 1 if bad else 0


def _fuzz(name: str, options) -> int:
    import atheris

    # Coverage of what reads files (instrumenting every solver too would slow the start a lot)
    with atheris.instrument_imports(include=["coalloc"], exclude=EXCLUDED):
        import targets
    if name not in targets.TARGETS:
        print(f"unknown target {name!r}; targets: {', '.join(sorted(targets.TARGETS))}")
        return 2
    target = targets.TARGETS[name]
    targets.partner("ctaap")  # build the partner files before fuzzing starts
    seeds = os.path.join(targets.CORPUS, name)
    scratch = tempfile.mkdtemp(prefix=f"coalloc-fuzz-{name}-")
    folders = [a for a in options if not a.startswith("-")]
    flags = [a for a in options if a.startswith("-")]
    if not any(a.startswith("-dict=") for a in flags):
        flags.append(f"-dict={os.path.join(HERE, 'coalloc.dict')}")
    if not folders:
        folders = [scratch, seeds]  # new inputs go to the scratch folder, seeds stay as they are

    def one(data: bytes) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            target(data)

    atheris.Setup([sys.argv[0], *flags, *folders], one)
    atheris.Fuzz()
    return 0


def main(argv) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    if argv[0] == "--list":
        import targets

        print("\n".join(sorted(targets.TARGETS)))
        targets.cleanup()
        return 0
    if argv[0] == "--replay":
        return _replay(argv[1:])
    return _fuzz(argv[0], argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
