"""File formats of :mod:`coalloc.collective` (see ``coalloc docs collective``), one module each.

* :mod:`.json_files`: the JSON documents ``coalloc.collective.pool`` (``names``,
  ``capacity``, optional ``node_names``, ``labels`` and either ``times`` + ``reserved`` or
  ``slot_seconds`` + ``slots``), ``coalloc.collective.request`` (the fields of
  :class:`CollectiveRequest`), ``coalloc.collective.instance`` (``{"pool": {...},
  "request": {...}}``) and ``coalloc.collective.result``.
* :mod:`.csv_files`: pools in CSV, one row per node: ``node,<property>...,label:<name>...``
  (capacities, labels), with an optional usage CSV ``node,property,slot,reserved``.
* :mod:`.snapshot`: ``coalloc.collective.pool-snapshot``, a pool saved exactly as NumPy
  ``.npz``.
* :mod:`.workload`: requests over time: ``coalloc.collective.workload`` (JSON: ``requests``
  with ``arrival``) and Standard Workload Format traces (``.swf``: :func:`read_swf`,
  :func:`swf_requests`).

Every name stays importable from ``coalloc.collective.io``.
"""

from .csv_files import read_pool_csv
from .json_files import (
    INSTANCE_FORMAT,
    INSTANCE_SCHEMA,
    MAX_COUNT,
    POOL_FORMAT,
    POOL_SCHEMA,
    REQUEST_FORMAT,
    REQUEST_SCHEMA,
    RESULT_FORMAT,
    VERSION,
    instance_from_dict,
    pool_from_dict,
    pool_to_dict,
    read_instance,
    read_pool,
    read_request,
    request_from_dict,
    request_to_dict,
    write_instance,
    write_pool,
    write_request,
    write_result,
)
from .snapshot import SNAPSHOT_FORMAT, read_pool_snapshot, write_pool_snapshot
from .workload import (
    SWF_FIELDS,
    SWF_STATUS,
    WORKLOAD_FORMAT,
    WORKLOAD_SCHEMA,
    SWFWorkload,
    read_swf,
    read_workload,
    swf_requests,
    swf_workload,
)

__all__ = [
    "pool_to_dict", "pool_from_dict", "read_pool", "write_pool", "read_pool_csv",
    "request_to_dict", "request_from_dict", "read_request", "write_request",
    "instance_from_dict", "write_instance", "read_instance", "read_swf", "swf_requests",
    "swf_workload", "SWFWorkload", "SWF_FIELDS", "SWF_STATUS",
    "read_workload", "write_result", "write_pool_snapshot", "read_pool_snapshot",
    # the formats' names, version and schemas (coalloc.formats, the fuzz targets)
    "POOL_FORMAT", "REQUEST_FORMAT", "INSTANCE_FORMAT", "RESULT_FORMAT", "WORKLOAD_FORMAT",
    "SNAPSHOT_FORMAT", "VERSION", "MAX_COUNT", "POOL_SCHEMA", "REQUEST_SCHEMA",
    "INSTANCE_SCHEMA", "WORKLOAD_SCHEMA",
]  # fmt: skip
