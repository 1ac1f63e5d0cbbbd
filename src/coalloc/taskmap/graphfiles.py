"""Task graphs from the files partitioners read: METIS ``.graph`` and Scotch ``.grf``.

* **METIS** (``.graph``, ``.metis``; the format of METIS 5's manual, section 4.1.1): ``%``
  comment lines; a header ``n m [fmt [ncon]]`` (``m`` undirected edges; ``fmt`` up to three
  0/1 digits: vertex sizes, vertex weights, edge weights); then one line per vertex, blank
  for an isolated vertex without weights: ``[size] [w_1 .. w_ncon] v_1 [e_1] v_2 [e_2] ...``
  with 1-based neighbours, every edge listed from both ends with the same weight. Task
  ``i`` is vertex ``i + 1``; its compute requirement is its ``weight_index``-th vertex
  weight (default the first; 1 without weights), a pair's volume its edge weight (1
  without). Vertex sizes are read, checked and ignored.
* **Scotch** source graphs (``.grf``, ``.src``; Scotch 7 user's guide, "Source graph
  files"): whitespace-separated integers ``0`` (version), ``vertnbr arcnbr`` (arcs: twice
  the edges), ``baseval flags`` (``flags`` three 0/1 digits: vertex labels, edge loads,
  vertex loads), then per vertex ``[label] [load] degree`` followed by ``degree`` times
  ``[edge load] end``, where ``end`` is a label when labels are given and a vertex number
  from ``baseval`` otherwise. Labels become the task names (:attr:`TaskGraph.names`).

Both readers are strict: every error is a :class:`coalloc.InstanceError` naming the file,
the line and the offending token (``tasks.graph:4: token 'x' ...``).
:func:`write_metis_graph` writes the METIS format (integer weights).
"""

from __future__ import annotations

import os
import re
from typing import Any, Iterator, List, Optional, Tuple

import numpy as np
import scipy.sparse as sp

from .._shared.docs import filled
from .._shared.jsonio import InstanceError, PathOrFile, read_text, write_text
from .model import TaskGraph

__all__ = ["read_metis_graph", "read_scotch_graph", "write_metis_graph", "read_graph_file"]

# ASCII only: Python's int() also reads Unicode digits ('٣' is 3) and str.split() splits at
# Unicode spaces; neither belongs to the METIS or Scotch formats.
_INT = re.compile(r"[+-]?[0-9]+\Z")
_SPACE = re.compile(r"[ \t\r\f\v]+")


def _split(line: str) -> List[str]:
    """The tokens of a line, split at ASCII white space only."""
    return [tok for tok in _SPACE.split(line) if tok]


METIS_SUFFIXES = (".graph", ".metis")
SCOTCH_SUFFIXES = (".grf", ".src")


def _int(tok: str, where: str, what: str, lo: int = 0) -> int:
    if not _INT.match(tok):
        raise InstanceError(f"{where}: token {tok!r} ({what}) is not an integer")
    x = int(tok)
    if x >= 1 << 63:
        raise InstanceError(f"{where}: token {tok!r} ({what}) is too large (at most 2^63 - 1)")
    if x < lo:
        raise InstanceError(f"{where}: token {tok!r} ({what}) must be >= {lo}")
    return x


def _flags(tok: str, where: str, what: str) -> Tuple[int, int, int]:
    if not re.fullmatch(r"[01]{1,3}", tok):
        raise InstanceError(f"{where}: token {tok!r} ({what}) must be up to three 0/1 digits")
    d = tok.rjust(3, "0")
    return int(d[0]), int(d[1]), int(d[2])


def _check_symmetric(name: str, n: int, adj: list, lines: list, names=None) -> None:
    """Every edge listed from both ends with one weight, else InstanceError (first line)."""
    look = [dict(a) for a in adj]
    for u in range(n):
        for v, w in adj[u]:
            back = look[v].get(u)
            if back is None:
                raise InstanceError(
                    f"{name}:{lines[u]}: the edge {_label(u, names)}-{_label(v, names)} is "
                    f"not listed again by vertex {_label(v, names)} (line {lines[v]})"
                )
            if back != w:
                raise InstanceError(
                    f"{name}:{lines[u]}: the edge {_label(u, names)}-{_label(v, names)} has "
                    f"weight {w} here but {back} at vertex {_label(v, names)} (line {lines[v]})"
                )


def _build(name: str, n: int, weight: list, adj: list, names=None) -> TaskGraph:
    """The task graph of checked, symmetric adjacency lists ``adj[u] = [(v, w), ...]``."""
    rows = np.repeat(np.arange(n), [len(a) for a in adj])
    cols = np.array([v for a in adj for v, _ in a], dtype=np.int64)
    vals = np.array([w for a in adj for _, w in a], dtype=np.float64)
    mat = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
    try:
        return TaskGraph(np.array(weight, dtype=np.float64), mat, directed=False, names=names)
    except (TypeError, ValueError) as exc:
        raise InstanceError(f"{name}: {exc}") from None


def _label(u: int, names) -> str:
    return str(u + 1) if names is None else repr(names[u])


# ----------------------------------------------------------------------------- METIS


def read_metis_graph(src: PathOrFile, *, weight_index: int = 0) -> TaskGraph:
    """Read a METIS ``.graph`` file as an undirected task graph (module docstring).

    Parameters
    ----------
    src : str, path-like or file object
        The file.
    weight_index : int, default 0
        Which vertex weight (constraint) is the compute requirement, when the file has
        ``ncon`` of them.

    Returns
    -------
    TaskGraph
        Task ``i`` = vertex ``i + 1``; unnamed.

    Raises
    ------
    coalloc.InstanceError
        A malformed file, naming the file, the line and the token.

    Examples
    --------
    >>> import io
    >>> f = io.StringIO("% a triangle and a lone vertex\\n4 3 11\\n2 2 5 3 1\\n1 1 5 3 2\\n"
    ...                 "3 1 1 2 2\\n1\\n")
    >>> tasks = read_metis_graph(f)
    >>> tasks.node_weight.tolist(), tasks.comm.toarray()[0].tolist()
    ([2.0, 1.0, 3.0, 1.0], [0.0, 5.0, 1.0, 0.0])
    """
    text, name = read_text(src)
    rows: List[Tuple[int, List[str]]] = [
        (k + 1, _split(line))
        for k, line in enumerate(text.splitlines())
        if not line.lstrip().startswith("%")
    ]
    while rows and not rows[0][1]:
        rows.pop(0)  # blank lines before the header
    if not rows:
        raise InstanceError(f"{name}: empty METIS graph file (no header line)")
    hline, head = rows[0]
    where = f"{name}:{hline}"
    if not 2 <= len(head) <= 4:
        raise InstanceError(
            f"{where}: the header must be 'n m [fmt [ncon]]', got {len(head)} tokens"
        )
    n = _int(head[0], where, "number of vertices n")
    m = _int(head[1], where, "number of edges m")
    has_size, has_vw, has_ew = _flags(head[2], where, "fmt") if len(head) > 2 else (0, 0, 0)
    ncon = 1
    if len(head) == 4:
        ncon = _int(head[3], where, "ncon", 1)
        if not has_vw:
            raise InstanceError(f"{where}: token {head[3]!r} (ncon) but fmt says no vertex weights")
    wi = int(weight_index)
    if not 0 <= wi < ncon:
        raise ValueError(f"weight_index must be in [0, {ncon}), got {weight_index}")
    body = rows[1:]
    if len(body) < n:
        last = body[-1][0] if body else hline
        raise InstanceError(
            f"{name}:{last}: the header announces {n} vertices but the file has {len(body)} "
            "vertex lines"
        )
    for k, toks in body[n:]:
        if toks:
            raise InstanceError(
                f"{name}:{k}: token {toks[0]!r} after the {n} vertex lines the header announces"
            )
    weight: list = []
    adj: list = []
    lines: list = []
    arcs = 0
    for u, (k, toks) in enumerate(body[:n]):
        where = f"{name}:{k}"
        lead = has_size + has_vw * ncon
        if len(toks) < lead:
            raise InstanceError(
                f"{where}: vertex {u + 1} needs {lead} leading values (size / weights), "
                f"got {len(toks)}"
            )
        if has_size:
            _int(toks[0], where, f"size of vertex {u + 1}")
        ws = [
            _int(t, where, f"weight {c + 1} of vertex {u + 1}")
            for c, t in enumerate(toks[has_size:lead])
        ]
        weight.append(float(ws[wi]) if has_vw else 1.0)
        rest = toks[lead:]
        step = 2 if has_ew else 1
        if len(rest) % step:
            raise InstanceError(
                f"{where}: token {rest[-1]!r}: neighbour {rest[-1]} of vertex {u + 1} has no "
                "edge weight"
            )
        seen: dict = {}
        for j in range(0, len(rest), step):
            v = _int(rest[j], where, f"neighbour of vertex {u + 1}", 1)
            if v > n:
                raise InstanceError(
                    f"{where}: token {rest[j]!r}: neighbour {v} of vertex {u + 1} is not in "
                    f"[1, {n}]"
                )
            if v == u + 1:
                raise InstanceError(f"{where}: token {rest[j]!r}: vertex {v} lists itself")
            if v in seen:
                raise InstanceError(f"{where}: token {rest[j]!r}: neighbour {v} listed twice")
            w = _int(rest[j + 1], where, f"weight of edge {u + 1}-{v}", 1) if has_ew else 1
            seen[v] = w
        adj.append([(v - 1, float(w)) for v, w in seen.items()])
        lines.append(k)
        arcs += len(seen)
    _check_symmetric(name, n, adj, lines)
    if arcs != 2 * m:
        raise InstanceError(
            f"{name}:{hline}: token {head[1]!r}: the header announces {m} edges but the vertex "
            f"lines list {arcs} neighbours ({arcs / 2:g} edges; each edge is listed twice)"
        )
    return _build(name, n, weight, adj)


@filled
def write_metis_graph(dst: PathOrFile, tasks: TaskGraph) -> None:
    """Write a task graph in the METIS format (``fmt`` 011: vertex and edge weights).

    METIS weights are integers: every compute requirement and pair volume must be one. A
    directed graph is written with its pair weights (``W + W^T``); task names are not kept.

    Parameters
    ----------
    %(write_dst)s
    tasks : TaskGraph
        The task graph.

    Raises
    ------
    ValueError
        A weight that is not an integer.

    Examples
    --------
    >>> import io
    >>> from coalloc.taskmap import TaskGraph
    >>> f = io.StringIO()
    >>> write_metis_graph(f, TaskGraph([2, 1, 3], [[0, 5, 1], [5, 0, 0], [1, 0, 0]]))
    >>> print(f.getvalue(), end="")
    3 2 011
    2 2 5 3 1
    1 1 5
    3 1 1
    """
    indptr, indices, data = tasks.undirected_csr()
    for what, arr in (("compute requirement", tasks.node_weight), ("pair volume", data)):
        bad = np.flatnonzero(arr != np.round(arr))
        if bad.size:
            raise ValueError(f"METIS weights are integers: a {what} is {arr[bad[0]]!r}")
    out = [f"{tasks.n} {tasks.n_edges} 011"]
    for u in range(tasks.n):
        parts = [str(int(tasks.node_weight[u]))]
        for q in range(indptr[u], indptr[u + 1]):
            parts += [str(int(indices[q]) + 1), str(int(data[q]))]
        out.append(" ".join(parts))
    write_text(dst, "\n".join(out) + "\n")


# ----------------------------------------------------------------------------- Scotch


def _tokens(text: str) -> Iterator[Tuple[str, int]]:
    for k, line in enumerate(text.splitlines()):
        for tok in _split(line):
            yield tok, k + 1


def read_scotch_graph(src: PathOrFile) -> TaskGraph:
    """Read a Scotch source graph (``.grf``) as an undirected task graph (module docstring).

    Parameters
    ----------
    src : str, path-like or file object
        The file.

    Returns
    -------
    TaskGraph
        Task ``i`` = the ``i``-th vertex of the file, named by its label when the file has
        labels; compute requirement = vertex load (1 without), volume = edge load (1
        without).

    Raises
    ------
    coalloc.InstanceError
        A malformed file, naming the file, the line and the token.

    Examples
    --------
    >>> import io
    >>> f = io.StringIO("0\\n3 4\\n1 111\\n10 2 2 5 20 1 30\\n20 1 1 5 10\\n30 3 1 1 10\\n")
    >>> tasks = read_scotch_graph(f)
    >>> tasks.names, tasks.node_weight.tolist(), tasks.comm.toarray()[0].tolist()
    ([10, 20, 30], [2.0, 1.0, 3.0], [0.0, 5.0, 1.0])
    """
    text, name = read_text(src)
    it = _tokens(text)
    last = [1]

    def take(what: str, lo: int = 0) -> int:
        try:
            tok, line = next(it)
        except StopIteration:
            raise InstanceError(
                f"{name}:{last[0]}: the file ends where {what} was expected"
            ) from None
        last[0] = line
        return _int(tok, f"{name}:{line}", what, lo)

    version = take("version")
    if version != 0:
        raise InstanceError(f"{name}:{last[0]}: token {str(version)!r}: version must be 0")
    n = take("number of vertices")
    arcnbr = take("number of arcs")
    arc_line = last[0]
    base = take("base value")
    if base not in (0, 1):
        raise InstanceError(f"{name}:{last[0]}: token {str(base)!r}: the base must be 0 or 1")
    try:
        tok, line = next(it)
    except StopIteration:
        raise InstanceError(
            f"{name}:{last[0]}: the file ends where the flags were expected"
        ) from None
    last[0] = line
    has_label, has_eload, has_vload = _flags(tok, f"{name}:{line}", "flags")
    labels: list = []
    weight: list = []
    raw: list = []  # per vertex: [(end token value, load, line, token text)]
    lines: list = []
    arcs = 0
    for u in range(n):
        label = take(f"label of vertex {u + base}") if has_label else None
        who = f"vertex {label if has_label else u + base}"
        weight.append(float(take(f"load of {who}")) if has_vload else 1.0)
        lines.append(last[0])
        deg = take(f"degree of {who}")
        ends = []
        for _ in range(deg):
            w = take(f"edge load of {who}", 1) if has_eload else 1
            v = take(f"neighbour of {who}")
            ends.append((v, w, last[0]))
        labels.append(label)
        raw.append(ends)
        arcs += deg
    extra = next(it, None)
    if extra is not None:
        raise InstanceError(
            f"{name}:{extra[1]}: token {extra[0]!r} after the {n} vertices the header announces"
        )
    if arcs != arcnbr:
        raise InstanceError(
            f"{name}:{arc_line}: token {str(arcnbr)!r}: the header announces {arcnbr} arcs "
            f"but the vertices list {arcs} (each edge is listed from both ends)"
        )
    if has_label:
        index: dict = {}
        for u, lab in enumerate(labels):
            if lab in index:
                raise InstanceError(
                    f"{name}:{lines[u]}: label {lab} of vertex {u + base} repeats the label of "
                    f"vertex {index[lab] + base} (line {lines[index[lab]]})"
                )
            index[lab] = u
    adj = []
    for u, ends in enumerate(raw):
        seen: dict = {}
        for v, w, line in ends:
            where = f"{name}:{line}"
            if has_label:
                if v not in index:
                    raise InstanceError(f"{where}: token {str(v)!r}: no vertex has label {v}")
                x = index[v]
            else:
                x = v - base
                if not 0 <= x < n:
                    raise InstanceError(
                        f"{where}: token {str(v)!r}: neighbour {v} is not in [{base}, {n + base})"
                    )
            if x == u:
                raise InstanceError(f"{where}: token {str(v)!r}: a vertex lists itself")
            if x in seen:
                raise InstanceError(f"{where}: token {str(v)!r}: neighbour {v} listed twice")
            seen[x] = float(w)
        adj.append(list(seen.items()))
    names = labels if has_label else None
    _check_symmetric(name, n, adj, lines, names)
    return _build(name, n, weight, adj, names)


def read_graph_file(src: PathOrFile, *, kind: Optional[str] = None) -> Any:
    """A task graph from a METIS or Scotch file, by ``kind`` or by the file's suffix.

    Parameters
    ----------
    src : str or path-like or file object
        The file.
    kind : {"metis", "scotch"}, optional
        The format; default from the suffix (``.graph``/``.metis``: METIS, ``.grf``/
        ``.src``: Scotch).

    Returns
    -------
    TaskGraph
        The task graph.

    Raises
    ------
    ValueError
        An unknown kind or suffix.
    coalloc.InstanceError
        A malformed file.
    """
    if kind is None:
        path = os.fspath(getattr(src, "name", src)) if not hasattr(src, "read") else ""
        suffix = os.path.splitext(str(path))[1].lower()
        kind = (
            "metis" if suffix in METIS_SUFFIXES else "scotch" if suffix in SCOTCH_SUFFIXES else ""
        )
    if kind == "metis":
        return read_metis_graph(src)
    if kind == "scotch":
        return read_scotch_graph(src)
    raise ValueError(
        f"kind must be 'metis' or 'scotch' (or a file named *.graph, *.grf), got {kind!r}"
    )


def is_graph_file(path: Any) -> bool:
    """Whether ``path`` names a METIS or Scotch graph file by its suffix."""
    suffix = os.path.splitext(str(path))[1].lower()
    return suffix in METIS_SUFFIXES + SCOTCH_SUFFIXES
