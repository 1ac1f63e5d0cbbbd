"""Optional dependencies in the tests: skipped on a developer's machine, required in CI."""

import os

import pytest


def skip_unless_ci(reason: str) -> None:
    """Skip a test whose optional dependency is missing, except in CI (``CI`` set), where
    every optional extra is installed and the test must run: there it fails instead."""
    if os.environ.get("CI"):
        pytest.fail(f"CI must run this test, but: {reason}")
    pytest.skip(reason)


def require_solver(backend: str) -> None:
    """Skip (outside CI) a test of the integer-programming solver ``backend`` when it is
    not installed; HiGHS counts as installed only through highspy (not SciPy's fallback)."""
    from coalloc._shared import milp

    try:
        pkg = milp.import_solver(backend)
    except ImportError as exc:
        skip_unless_ci(f"{backend}: {exc}")
    if backend == "highs" and callable(pkg):
        skip_unless_ci("highspy is not installed")
