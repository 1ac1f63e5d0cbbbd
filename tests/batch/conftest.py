"""The local Slurm of the batch tests: one per session, started on first use and stopped
(every job cancelled, every daemon killed, its folder removed) at the end."""

from __future__ import annotations

import pytest

from .slurm_fixture import LocalSlurm, missing


@pytest.fixture(scope="session")
def local_slurm():
    """A running single-node Slurm (:class:`LocalSlurm`); skipped, saying what is missing,
    where the packages or root are missing."""
    why = missing()
    if why is not None:
        pytest.skip(why)
    cluster = LocalSlurm()
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()
