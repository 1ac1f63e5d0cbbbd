"""Optional dependencies in the tests: skipped on a developer's machine, required in CI."""

import os

import pytest


def skip_unless_ci(reason: str) -> None:
    """Skip a test whose optional dependency is missing, except in CI (``CI`` set), where
    every optional extra is installed and the test must run: there it fails instead."""
    if os.environ.get("CI"):
        pytest.fail(f"CI must run this test, but: {reason}")
    pytest.skip(reason)
