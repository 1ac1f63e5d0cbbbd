"""The benchmark's command-line Dask cluster (``bench.shared.scaling.cli_cluster``) gets the
local cluster's settings as environment variables (issue 41, h60tail): read back as Dask
reads them (``dask.config.collect_env``), they are the keys and values the local cluster
sets with ``dask.config.set``, and with ``DASK_CLI_QUIET`` off the quiet loops' are absent."""

from __future__ import annotations

import pytest

dask = pytest.importorskip("dask")
scaling = pytest.importorskip("bench.shared.scaling")


def _read_back(environ: dict) -> dict:
    config: dict = {}
    dask.config.update(config, dask.config.collect_env(
        {k: v for k, v in environ.items() if k.startswith("DASK_")}))  # fmt: skip
    return config


def _quiet() -> dict:
    return {**scaling.DASK_LOOP_CONFIG, **scaling.DASK_MONITOR_CONFIG}


def test_the_quiet_loops_reach_the_command_line_cluster(monkeypatch) -> None:
    monkeypatch.setattr(scaling, "DASK_CLI_QUIET", True)
    config = _read_back(scaling._cli_environ())
    for key, value in _quiet().items():
        assert dask.config.get(key, config=config) == value, key
    assert dask.config.get("distributed.worker.profile.enabled", config=config) is False


def test_without_the_knob_they_do_not(monkeypatch) -> None:
    monkeypatch.setattr(scaling, "DASK_CLI_QUIET", False)
    config = _read_back(scaling._cli_environ())
    for key in _quiet():
        assert dask.config.get(key, default=None, config=config) is None, key


def test_the_variable_names() -> None:
    assert scaling._env_name("distributed.admin.tick.interval") == (
        "DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL")  # fmt: skip
    assert scaling._env_name("distributed.worker.memory.monitor-interval") == (
        "DASK_DISTRIBUTED__WORKER__MEMORY__MONITOR_INTERVAL")  # fmt: skip
