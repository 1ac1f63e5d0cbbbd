"""Limits of the task mapper: a batch's timeout reaches its Python loops."""

from __future__ import annotations

import numpy as np

from coalloc import taskmap
from coalloc.taskmap.generators import internet_resource_graph, pipeline_task_graph
from tests._timeouts import assert_times_out


def test_a_thread_batch_timeout_stops_the_mapper():
    # 5,000 tasks on 611 processors without the early exit: every processor tries every
    # task left, about 1.5 million placements (over 15 s since the placements are compiled;
    # the index order, so that no compiled clustering runs first)
    tasks = pipeline_task_graph(n_clusters=(500, 500), cluster_size=(10, 10),
                                compute=(1.0, 3.0), c=4.0, inter_volume=1.0,
                                seed=np.random.default_rng(1))  # fmt: skip
    resources = internet_resource_graph(n_wan=20, n_lan=40, seed=1)
    assert_times_out(
        taskmap.Instance(tasks, resources), "open+improve", order="index", early_exit=False
    )
