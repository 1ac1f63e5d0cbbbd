"""JSON files for task graphs, resource graphs and mapping results (``coalloc docs formats``).

* ``coalloc.taskgraph`` v1: ``{"weights": [...], "directed": false, "comm": ...}`` where
  ``comm`` is a dense ``n x n`` list of rows or ``{"edges": [[s, t, volume], ...]}`` (for an
  undirected graph each edge is one stream between ``s`` and ``t``).
* ``coalloc.resourcegraph`` v1: ``{"capacity": [...], "links": [[u, v, bandwidth], ...]}``,
  optional ``"is_processor"``, ``"route_length"`` and ``"names"``.
* ``coalloc.taskmap.instance`` v1: ``{"tasks": <taskgraph>, "resources": <resourcegraph>}``,
  both graphs of one problem in one file (what batches read).
* ``coalloc.mapping`` v1: a :class:`~coalloc.taskmap.mapper.MappingResult`; with the graphs
  given, also ``task_names`` and ``processor_names`` (the name of each task's processor).
* METIS ``.graph`` and Scotch ``.grf`` task graphs: :mod:`coalloc.taskmap.graphfiles`
  (:func:`read_metis_graph`, :func:`read_scotch_graph`, :func:`write_metis_graph`).

A task graph file may carry ``"names"`` (strings or integers, one per task): task graphs
built from networkx or from a labelled Scotch file keep their names through files and into
the results (:func:`named_mapping`).

Reading errors are :class:`coalloc.InstanceError` (a ``ValueError``) naming the file and
the field.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import scipy.sparse as sp

from .._shared.constraints import checked
from .._shared.docs import filled
from .._shared.jsonio import (
    InstanceError,
    PathOrFile,
    check_envelope,
    dump_json,
    load_json,
    num,
    vec,
)
from .._shared.result import jsonable
from .._shared.schema import AnyValue, Bool, Int, ListOf, Num, Obj, OneOf, Str, TupleOf, check
from .graphfiles import read_graph_file, read_metis_graph, read_scotch_graph, write_metis_graph
from .mapper import MappingResult
from .model import ResourceGraph, TaskGraph, check_mapping

__all__ = [
    "TASKGRAPH_FORMAT",
    "RESOURCEGRAPH_FORMAT",
    "MAPPING_FORMAT",
    "task_graph_to_dict",
    "task_graph_from_dict",
    "resource_graph_to_dict",
    "resource_graph_from_dict",
    "read_task_graph",
    "write_task_graph",
    "read_resource_graph",
    "write_resource_graph",
    "mapping_result_to_dict",
    "write_mapping_result",
    "read_mapping_result",
    "INSTANCE_FORMAT",
    "instance_to_dict",
    "instance_from_dict",
    "read_instance",
    "write_instance",
    "named_mapping",
    "read_metis_graph",
    "read_scotch_graph",
    "write_metis_graph",
    "read_graph_file",
]

TASKGRAPH_FORMAT = "coalloc.taskgraph"
RESOURCEGRAPH_FORMAT = "coalloc.resourcegraph"
MAPPING_FORMAT = "coalloc.mapping"
_NULL = (type(None), AnyValue())
_EDGE = TupleOf(Int(0), Int(0), Num(0))
TASKGRAPH_SCHEMA = Obj(
    {
        "format": (AnyValue(), False),
        "version": (AnyValue(), False),
        "n_tasks": (Int(0), False),
        "directed": (OneOf((bool, Bool()), _NULL), False),
        "weights": (ListOf(Num(0)), True),
        "names": (ListOf(OneOf((str, Str()), (int, Int()))), False),
        "comm": (
            OneOf(
                (list, ListOf(ListOf(Num(0)))), (dict, Obj({"edges": (ListOf(_EDGE), True)})), _NULL
            ),
            False,
        ),
        "metadata": (AnyValue(), False),
    }
)
RESOURCEGRAPH_SCHEMA = Obj(
    {
        "format": (AnyValue(), False),
        "version": (AnyValue(), False),
        "capacity": (ListOf(Num(0)), True),
        "links": (ListOf(_EDGE), True),
        "is_processor": (ListOf(Bool()), False),
        "route_length": (OneOf((str, Str()), (list, ListOf(Num(0)))), False),
        "names": (ListOf(Str()), False),
        "metadata": (AnyValue(), False),
    }
)
INSTANCE_SCHEMA = Obj(
    {
        "format": (AnyValue(), False),
        "version": (AnyValue(), False),
        "tasks": (AnyValue(), True),
        "resources": (AnyValue(), True),
        "metadata": (AnyValue(), False),
    }
)
INSTANCE_FORMAT = "coalloc.taskmap.instance"
VERSION = 1


# --------------------------------------------------------------------------------------
# Task graphs
# --------------------------------------------------------------------------------------


@checked("coalloc.taskmap.constraints", "io.task_graph_to_dict", tables="FUNCTIONS")
def task_graph_to_dict(
    tasks: TaskGraph, *, comm_format: str = "auto", metadata: Optional[dict] = None
) -> dict:
    """A JSON-ready dict; ``comm_format`` is ``"auto"``, ``"dense"`` or ``"edges"``."""
    mat = tasks.comm
    if comm_format == "auto":
        comm_format = "edges" if mat.nnz < 0.5 * tasks.n * tasks.n else "dense"
    if comm_format == "dense":
        comm: Any = [vec(row) for row in mat.toarray()]
    else:
        coo = (mat if tasks.directed else sp.triu(mat, k=1)).tocoo()
        order = np.lexsort((coo.col, coo.row))
        comm = {
            "edges": [[int(coo.row[k]), int(coo.col[k]), num(coo.data[k])] for k in order.tolist()]
        }
    out = {
        "format": TASKGRAPH_FORMAT,
        "version": VERSION,
        "n_tasks": tasks.n,
        "directed": tasks.directed,
        "weights": vec(tasks.node_weight),
        "comm": comm,
    }
    if tasks.names is not None:
        out["names"] = [x if isinstance(x, (str, int)) else str(x) for x in tasks.names]
    if metadata:
        out["metadata"] = dict(metadata)
    return out


def task_graph_from_dict(data: Any, *, source: str = "<dict>") -> TaskGraph:
    """Build a :class:`TaskGraph` from a dict in the ``coalloc.taskgraph`` format."""
    check_envelope(data, TASKGRAPH_FORMAT, VERSION, source)
    check(data, TASKGRAPH_SCHEMA, source)
    weights = data["weights"]
    n = len(weights)
    if "n_tasks" in data and data["n_tasks"] != n:
        raise InstanceError(f"{source}: n_tasks is {data['n_tasks']} but weights has {n}")
    directed = data.get("directed")
    comm = data.get("comm")
    try:
        if isinstance(comm, dict):
            edges = comm["edges"]
            _check_edges(edges, n, bool(directed), f"{source}: comm.edges")
            arr = np.array(edges, dtype=np.float64).reshape(-1, 3)
            idx = arr[:, :2]
            s, t = idx[:, 0].astype(np.int64), idx[:, 1].astype(np.int64)
            vol = arr[:, 2]
            if directed:
                mat = sp.coo_matrix((vol, (s, t)), shape=(n, n))
            else:
                mat = sp.coo_matrix((np.r_[vol, vol], (np.r_[s, t], np.r_[t, s])), shape=(n, n))
                directed = False
            return TaskGraph(weights, mat.tocsr(), directed=directed, names=data.get("names"))
        return TaskGraph(weights, comm, directed=directed, names=data.get("names"))
    except InstanceError:
        raise
    except (TypeError, ValueError) as exc:
        raise InstanceError(f"{source}: {exc}") from None


@filled
def write_task_graph(dst: PathOrFile, tasks: TaskGraph, **kwargs: Any) -> None:
    """Write a task graph as JSON (keywords as in :func:`task_graph_to_dict`).

    Parameters
    ----------
    %(write_dst)s
    tasks : TaskGraph
        The task graph.
    **kwargs
        ``metadata`` (a JSON-able dict) and the options of :func:`task_graph_to_dict`.

    Examples
    --------
    >>> import io
    >>> import coalloc.taskmap as tm
    >>> f = io.StringIO()
    >>> tm.write_task_graph(f, tm.TaskGraph([1.0, 2.0], [[0, 3], [3, 0]]))
    >>> _ = f.seek(0)
    >>> tm.read_task_graph(f)
    TaskGraph(n=2, pairs=1, undirected)
    """
    dump_json(task_graph_to_dict(tasks, **kwargs), dst)


def read_task_graph(src: PathOrFile) -> TaskGraph:
    """Read a task graph file; :class:`InstanceError` names the file and the field.

    Parameters
    ----------
    src : str, path-like or file object
        A ``coalloc.taskgraph`` JSON file (``coalloc docs formats``).

    Returns
    -------
    TaskGraph
        The task graph.

    Raises
    ------
    coalloc.InstanceError
        Not a task graph file, or a bad field (named with the file).

    Examples
    --------
    >>> import io
    >>> import coalloc.taskmap as tm
    >>> f = io.StringIO()
    >>> tm.write_task_graph(f, tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]]))
    >>> _ = f.seek(0)
    >>> tm.read_task_graph(f).node_weight.tolist()
    [1.0, 2.0, 1.5]
    """
    data, name = load_json(src)
    return task_graph_from_dict(data, source=name)


# --------------------------------------------------------------------------------------
# Resource graphs
# --------------------------------------------------------------------------------------


def _check_edges(edges: list, n: int, directed: bool, where: str) -> None:
    """Task indices in range; no edge twice (nor both directions of an undirected one)."""
    first: dict = {}
    for j, (a, b, _) in enumerate(edges):
        if a >= n or b >= n:
            raise InstanceError(f"{where}[{j}]: task index {max(a, b)} is not in [0, {n})")
        key = (a, b) if directed else (min(a, b), max(a, b))
        if key in first:
            hint = "" if directed else " (an undirected graph gives each pair once)"
            raise InstanceError(
                f"{where}[{j}] = {list(edges[j])} repeats the pair {list(key)} of "
                f"edges[{first[key]}]{hint}"
            )
        first[key] = j


def resource_graph_to_dict(resources: ResourceGraph, *, metadata: Optional[dict] = None) -> dict:
    """A JSON-ready dict in the ``coalloc.resourcegraph`` format."""
    out: dict = {
        "format": RESOURCEGRAPH_FORMAT,
        "version": VERSION,
        "capacity": vec(resources.capacity),
        "links": [
            [int(u), int(v), num(b)]
            for (u, v), b in zip(resources.links.tolist(), resources.bandwidth.tolist())
        ],
    }
    if not np.array_equal(resources.is_processor, resources.capacity > 0):
        out["is_processor"] = [bool(x) for x in resources.is_processor]
    if resources.route_kind == "custom":
        out["route_length"] = vec(resources.route_length)
    elif resources.route_kind != "hops":
        out["route_length"] = resources.route_kind
    if resources.names is not None:
        out["names"] = [str(x) for x in resources.names]
    if metadata:
        out["metadata"] = dict(metadata)
    return out


def resource_graph_from_dict(data: Any, *, source: str = "<dict>") -> ResourceGraph:
    """Build a :class:`ResourceGraph` from a dict in the ``coalloc.resourcegraph`` format."""
    check_envelope(data, RESOURCEGRAPH_FORMAT, VERSION, source)
    check(data, RESOURCEGRAPH_SCHEMA, source)
    links = data["links"]
    try:
        arr = np.array(links, dtype=np.float64).reshape(-1, 3)
        proc = data.get("is_processor")
        if proc is not None:
            proc = np.array(proc, dtype=bool)
        return ResourceGraph(
            data["capacity"], arr[:, :2], bandwidth=arr[:, 2], is_processor=proc,
            route_length=data.get("route_length", "hops"), names=data.get("names"),
        )  # fmt: skip
    except InstanceError:
        raise
    except (TypeError, ValueError) as exc:
        raise InstanceError(f"{source}: {exc}") from None


@filled
def write_resource_graph(dst: PathOrFile, resources: ResourceGraph, **kwargs: Any) -> None:
    """Write a resource graph as JSON.

    Parameters
    ----------
    %(write_dst)s
    resources : ResourceGraph
        The resource graph.
    **kwargs
        ``metadata``: a JSON-able dict stored with the graph.

    Examples
    --------
    >>> import io
    >>> import coalloc.taskmap as tm
    >>> f = io.StringIO()
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> tm.write_resource_graph(f, res)
    >>> _ = f.seek(0)
    >>> tm.read_resource_graph(f)
    ResourceGraph(nodes=3, processors=2, links=2, routes='hops')
    """
    dump_json(resource_graph_to_dict(resources, **kwargs), dst)


def read_resource_graph(src: PathOrFile) -> ResourceGraph:
    """Read a resource graph file; :class:`InstanceError` names the file and the field.

    Parameters
    ----------
    src : str, path-like or file object
        A ``coalloc.resourcegraph`` JSON file (``coalloc docs formats``).

    Returns
    -------
    ResourceGraph
        The resource graph.

    Raises
    ------
    coalloc.InstanceError
        Not a resource graph file, or a bad field (named with the file).

    Examples
    --------
    >>> import io
    >>> import coalloc.taskmap as tm
    >>> f = io.StringIO()
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> tm.write_resource_graph(f, res)
    >>> _ = f.seek(0)
    >>> tm.read_resource_graph(f).capacity.tolist()
    [0.0, 3.0, 5.0]
    """
    data, name = load_json(src)
    return resource_graph_from_dict(data, source=name)


# --------------------------------------------------------------------------------------
# Instances (both graphs in one file, for batches)
# --------------------------------------------------------------------------------------


def instance_to_dict(
    tasks: TaskGraph, resources: ResourceGraph, *, metadata: Optional[dict] = None
) -> dict:
    """A JSON-ready dict in the ``coalloc.taskmap.instance`` format: both graphs in one."""
    out = {
        "format": INSTANCE_FORMAT,
        "version": VERSION,
        "tasks": task_graph_to_dict(tasks),
        "resources": resource_graph_to_dict(resources),
    }
    if metadata:
        out["metadata"] = dict(metadata)
    return out


def instance_from_dict(data: Any, *, source: str = "<dict>") -> tuple:
    """``(TaskGraph, ResourceGraph)`` from a dict in the ``coalloc.taskmap.instance`` format."""
    check_envelope(data, INSTANCE_FORMAT, VERSION, source, required=True)
    check(data, INSTANCE_SCHEMA, source)
    tasks = task_graph_from_dict(data["tasks"], source=f"{source}: tasks")
    resources = resource_graph_from_dict(data["resources"], source=f"{source}: resources")
    return tasks, resources


def write_instance(
    dst: PathOrFile, tasks: TaskGraph, resources: ResourceGraph, **kwargs: Any
) -> None:
    """Write a task graph and a resource graph as one instance file."""
    dump_json(instance_to_dict(tasks, resources, **kwargs), dst)


def read_instance(src: PathOrFile) -> tuple:
    """Read a ``coalloc.taskmap.instance`` file; returns ``(TaskGraph, ResourceGraph)``."""
    data, name = load_json(src)
    return instance_from_dict(data, source=name)


# --------------------------------------------------------------------------------------
# Mapping results
# --------------------------------------------------------------------------------------


def named_mapping(tasks: TaskGraph, resources: ResourceGraph, mapping: Any) -> dict:
    """The mapping by name: ``{task name: processor name}``.

    A graph without names stands for itself by index (task ``i``, node ``p``).

    Parameters
    ----------
    tasks : TaskGraph
        The task graph (its :attr:`~TaskGraph.names`, if any).
    resources : ResourceGraph
        The resource graph (its ``names``, if any).
    mapping : array_like of int or MappingResult
        The processor node of every task, or a result holding it.

    Returns
    -------
    dict
        Task name (or index) -> processor name (or node index), in task order.

    Raises
    ------
    ValueError, TypeError
        An invalid mapping.

    Examples
    --------
    >>> import networkx as nx
    >>> import coalloc.taskmap as tm
    >>> app = nx.Graph([("read", "work", {"weight": 4.0}), ("work", "write", {"weight": 1.0})])
    >>> net = nx.Graph()
    >>> net.add_node("sw")
    >>> net.add_node("a", capacity=3.0)
    >>> net.add_node("b", capacity=5.0)
    >>> net.add_edges_from([("sw", "a"), ("sw", "b")], bandwidth=50.0)
    >>> tasks, res = tm.TaskGraph.from_networkx(app), tm.ResourceGraph.from_networkx(net)
    >>> tm.named_mapping(tasks, res, tm.solve(tasks, res, seed=0))
    {'read': 'b', 'work': 'b', 'write': 'a'}
    """
    m = getattr(mapping, "mapping", mapping)
    m = check_mapping(tasks, resources, m)
    tnames = tasks.names if tasks.names is not None else range(tasks.n)
    rnames = resources.names
    return {t: (rnames[p] if rnames is not None else p) for t, p in zip(tnames, m.tolist())}


def _jsonable_name(x: Any) -> Any:
    return x if isinstance(x, (str, int)) else str(x)


def mapping_result_to_dict(
    result: MappingResult,
    *,
    verify: Optional[dict] = None,
    tasks: Optional[TaskGraph] = None,
    resources: Optional[ResourceGraph] = None,
) -> dict:
    """A JSON-ready dict in the ``coalloc.mapping`` format.

    With the graphs given, names are added where they have them: ``task_names`` (one per
    task), ``processor_names`` (the name of each task's processor) and the bottleneck's
    ``name`` (a node's, or ``[u, v]`` for a link).
    """
    out = {
        "format": MAPPING_FORMAT,
        "version": VERSION,
        "method": result.method,
        "status": result.status,
        "message": result.message,
        "seed": result.seed,
        "n_tasks": int(result.mapping.shape[0]),
        "mapping": [int(x) for x in result.mapping],
        "max_occupancy": num(result.max_occupancy),
        "throughput": num(result.throughput) if result.max_occupancy > 0 else None,
        "bottleneck": result.bottleneck.to_dict(),
        "timings": jsonable(result.timings, compact=True),
        "iterations": jsonable(result.iterations, compact=True),
        "history": jsonable(result.history, compact=True),
        "params": jsonable(result.params, compact=True),
    }
    for key in ("objective", "bound", "gap"):  # the one field set of every family's results
        value = getattr(result, key, None)
        if value is not None:
            out[key] = num(value)
    if tasks is not None and tasks.names is not None:
        out["task_names"] = [_jsonable_name(x) for x in tasks.names]
    if resources is not None and resources.names is not None:
        names = resources.names
        out["processor_names"] = [_jsonable_name(names[p]) for p in result.mapping.tolist()]
        b = result.bottleneck
        if b.kind == "node":
            out["bottleneck"]["name"] = _jsonable_name(names[b.index])
        else:
            u, v = (int(x) for x in resources.links[b.index])
            out["bottleneck"]["name"] = [_jsonable_name(names[u]), _jsonable_name(names[v])]
    if verify is not None:
        out["verify"] = jsonable(verify, compact=True)
    return out


@filled
def write_mapping_result(
    dst: PathOrFile,
    result: MappingResult,
    *,
    verify: Optional[dict] = None,
    tasks: Optional[TaskGraph] = None,
    resources: Optional[ResourceGraph] = None,
) -> None:
    """Write a mapping result as JSON (optionally with a verification summary).

    Parameters
    ----------
    %(write_dst)s
    result : MappingResult
        The result of a task-mapping method.
    verify : dict, optional
        A verification summary stored under ``"verify"``.
    tasks, resources : TaskGraph, ResourceGraph, optional
        The graphs: their names are written beside the mapping
        (:func:`mapping_result_to_dict`).

    Examples
    --------
    >>> import io
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> f = io.StringIO()
    >>> tm.write_mapping_result(f, tm.solve(tasks, res, seed=0), verify={"valid": True})
    >>> _ = f.seek(0)
    >>> data = tm.read_mapping_result(f)
    >>> data["mapping"].tolist(), data["max_occupancy"], data["verify"]
    ([2, 2, 1], 0.6, {'valid': True})
    """
    if result.mapping is None:  # no mapping: the file says why (its status and message)
        data = {"format": MAPPING_FORMAT, "version": VERSION, **jsonable(result.to_dict()),
                "mapping": None}  # fmt: skip
        dump_json(data, dst)
        return
    dump_json(mapping_result_to_dict(result, verify=verify, tasks=tasks, resources=resources), dst)


def read_mapping_result(src: PathOrFile) -> dict:
    """Read a mapping result file; ``"mapping"`` comes back as an int64 array.

    Parameters
    ----------
    src : str, path-like or file object
        A ``coalloc.mapping`` JSON file written by :func:`write_mapping_result`.

    Returns
    -------
    dict
        The file's fields (``mapping``, ``max_occupancy``, ``bottleneck``, ``timings``, ...).

    Raises
    ------
    coalloc.InstanceError
        Not a mapping file, or a mapping that is not a list of node indices.

    Examples
    --------
    >>> import io
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> f = io.StringIO()
    >>> tm.write_mapping_result(f, tm.solve(tasks, res, "base", seed=0))
    >>> _ = f.seek(0)
    >>> data = tm.read_mapping_result(f)
    >>> data["method"], data["mapping"].tolist(), data["bottleneck"]["kind"]
    ('base', [2, 2, 1], 'node')
    """
    data, name = load_json(src)
    if not isinstance(data, dict) or data.get("format") != MAPPING_FORMAT:
        raise InstanceError(f"{name}: not a coalloc mapping file (format {MAPPING_FORMAT!r})")
    if data.get("mapping") is None and isinstance(data.get("status"), str):
        raise InstanceError(f"{name}: holds no mapping (status {data['status']!r}: "
                            f"{data.get('message', '')})")  # fmt: skip
    check(data.get("mapping"), ListOf(Int(0)), name, root="mapping")
    data["mapping"] = np.asarray(data["mapping"], dtype=np.int64).reshape(len(data["mapping"]))
    return data
