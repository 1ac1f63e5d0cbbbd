// pybind11 binding of coalloc::flowinject (include/coalloc/taskmap/flowinject.hpp): hierarchical
// clustering of a task graph by stochastic flow injection and the depth-first task order of
// the cluster tree (Taura & Chien 2000, sections 4.2-4.3).

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "coalloc/common/pybind.hpp"
#include "coalloc/taskmap/flowinject.hpp"

namespace py = pybind11;
namespace fi = coalloc::flowinject;

namespace {

using i64 = std::int64_t;
using coalloc::bind::Arr;
using coalloc::bind::need;
using coalloc::bind::shape_of;
using coalloc::bind::to_array;

int metric_code(const std::string& m) {
    if (m == "hops") return fi::kHops;
    if (m == "inverse_remaining") return fi::kInverseRemaining;
    if (m == "inverse_weight") return fi::kInverseWeight;
    throw py::value_error("metric must be 'hops', 'inverse_remaining' or 'inverse_weight', got '" +
                          m + "'");
}

}  // namespace

PYBIND11_MODULE(_flowinject, mod) {
    coalloc::bind::register_exceptions(mod);
    mod.doc() =
        "Hierarchical clustering by stochastic flow injection (Taura & Chien 2000, section "
        "4.3) and the depth-first task order of the cluster tree.  See "
        "coalloc/taskmap/flowinject.hpp; slow twin in coalloc._reference.flowinject; public API "
        "coalloc.taskmap.flow_injection.";

    mod.def(
        "cluster",
        [](Arr<i64> indptr, Arr<i64> indices, Arr<double> data, Arr<double> node_weight,
           double delta, double delta_scale, const std::string& metric, py::int_ seed_obj,
           i64 min_cluster_size, bool inherit, i64 max_injections, py::object deadline) {
            need(node_weight.ndim() == 1,
                 "node_weight must be 1-D, got shape " + shape_of(node_weight));
            const i64 n = node_weight.shape(0);
            coalloc::bind::need_csr_shapes(indptr, indices, data, n);
            const coalloc::CsrView<double> g = coalloc::bind::csr_view(indptr, indices, data, n);
            const double* w = node_weight.data();
            need(g.indptr[0] == 0 && g.indptr[n] == g.nnz,
                 "indptr must start at 0 and end at len(indices)");
            for (i64 u = 0; u < n; ++u) need(g.begin(u) <= g.end(u), "indptr must be non-decreasing");
            for (i64 q = 0; q < g.nnz; ++q) {
                need(g.col(q) >= 0 && g.col(q) < n, "indices must be in [0, n)");
                need(std::isfinite(g.val(q)) && g.val(q) >= 0.0,
                     "data (edge weights) must be finite and >= 0");
            }
            for (i64 i = 0; i < n; ++i)
                need(std::isfinite(w[i]) && w[i] >= 0.0, "node_weight must be finite and >= 0");
            need(std::isfinite(delta) && delta >= 0.0,
                 "delta must be finite and >= 0 (0: relative delta)");
            need(std::isfinite(delta_scale) && delta_scale > 0.0,
                 "delta_scale must be finite and > 0");
            need(min_cluster_size >= 1, "min_cluster_size must be >= 1");
            need(max_injections >= 0, "max_injections must be >= 0");
            fi::Params p;
            p.delta = delta;
            p.delta_scale = delta_scale;
            p.metric = metric_code(metric);
            p.seed = coalloc::bind::seed_u64(seed_obj);  // any Python int, modulo 2^64
            p.min_cluster_size = min_cluster_size;
            p.deadline = coalloc::bind::deadline_arg(deadline);
            p.inherit = inherit;
            p.max_injections = max_injections;
            fi::Input in;
            in.graph = g;
            in.node_weight = w;
            fi::Tree T;
            {
                // The arrays above are held alive by this frame; the kernel only reads them.
                py::gil_scoped_release release;
                T = fi::cluster(in, p);
            }
            const auto& c = T.counters;
            py::dict counters;
            counters["injections"] = c.injections;
            counters["path_edges"] = c.path_edges;
            counters["removed_edges"] = c.removed_edges;
            counters["forced_removals"] = c.forced_removals;
            counters["flow_splits"] = c.flow_splits;
            counters["component_splits"] = c.component_splits;
            counters["flat_nodes"] = c.flat_nodes;
            py::dict out;
            out["order"] = to_array(T.order);
            out["parent"] = to_array(T.parent);
            out["task"] = to_array(T.task);
            out["kind"] = to_array(T.kind);
            out["child_start"] = to_array(T.child_start);
            out["child_count"] = to_array(T.child_count);
            out["injections"] = to_array(T.injections);
            out["delta"] = to_array(T.delta);
            out["depth"] = to_array(T.depth);
            out["start"] = to_array(T.start);
            out["stop"] = to_array(T.stop);
            out["counters"] = counters;
            return out;
        },
        py::arg("indptr"), py::arg("indices"), py::arg("data"), py::arg("node_weight"),
        py::arg("delta") = 0.0, py::arg("delta_scale") = 0.05, py::arg("metric") = "hops",
        py::arg("seed") = 0, py::arg("min_cluster_size") = 1, py::arg("inherit") = false,
        py::arg("max_injections") = 1000000, py::arg("deadline") = py::none(),
        R"doc(
Cluster tree of an undirected weighted graph by stochastic flow injection.

Parameters
----------
indptr, indices, data : ndarray (int64, int64, float64)
    Symmetric CSR of the edge weights (n x n).  Entries (u, v) with v > u and a positive
    weight are the edges (the lower triangle is not read); for the documented tie-breaks
    the indices of each row must be sorted and free of duplicates.
node_weight : ndarray of float64, shape (n,)
    Finite, non-negative; end points are drawn with probability proportional to it.
delta : float, default 0
    Flow injected per path; 0 means ``delta_scale`` x the mean remaining edge capacity
    of the cluster being split.
delta_scale : float, default 0.05
metric : {"hops", "inverse_remaining", "inverse_weight"}
    Path length: hop count (BFS), or Dijkstra with 1 / remaining capacity or
    1 / original weight per edge.
seed : int
    Any int, taken modulo 2**64.
min_cluster_size : int, default 1
    Clusters of at most this many tasks are not split (their tasks become leaves).
inherit : bool, default False
    Children keep the remaining capacities instead of the original weights.
max_injections : int
    Per split; afterwards the weakest edges are removed until the cluster splits.
deadline : coalloc._shared.interrupt.KernelDeadline, optional
    The call's deadline (None: the calling thread's, built now).

Returns
-------
dict
    ``order`` and the tree arrays ``parent``, ``task``, ``kind`` (0 leaf, 1 flow,
    2 components, 3 flat, 4 forced), ``child_start``, ``child_count``, ``injections``,
    ``delta``, ``depth``, ``start``, ``stop`` plus ``counters`` (dict).  The GIL is
    released during the computation.
)doc");
}
