// pybind11 binding of coalloc::BMatcher (include/coalloc/ctaap/bmatching.hpp): incremental
// maximum-weight bipartite b-matching of tasks onto clusters.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "coalloc/common/pybind.hpp"
#include "coalloc/ctaap/bmatching.hpp"

namespace py = pybind11;

namespace {

using coalloc::bind::need;
using coalloc::bind::to_array;
using WeightArray = coalloc::bind::Arr<double>;
using AllowedArray = coalloc::bind::Arr<std::uint8_t>;
using CapacityArray = coalloc::bind::Arr<std::int64_t>;

struct Shape {
    std::int64_t n, m;
};

Shape check_inputs(const WeightArray& weights, const AllowedArray& allowed,
                   const CapacityArray& capacity) {
    need(weights.ndim() == 2, "weights must be a 2-D array (n_tasks, n_clusters), got ndim=" +
                                  std::to_string(weights.ndim()));
    const std::int64_t n = weights.shape(0), m = weights.shape(1);
    need(allowed.ndim() == 2 && allowed.shape(0) == n && allowed.shape(1) == m,
         "allowed must have the same shape as weights (" + std::to_string(n) + ", " +
             std::to_string(m) + ")");
    need(capacity.ndim() == 1 && capacity.shape(0) == m,
         "capacity must be a 1-D array of length n_clusters = " + std::to_string(m));
    return {n, m};
}

// The C++ matcher plus a mutex: the GIL is released while it works, so two Python threads
// sharing one matcher must not run it at the same time.  The mutex is only ever taken with
// the GIL released (never wait for one lock while holding the other).
struct PyBMatcher {
    coalloc::BMatcher core;
    std::mutex mu;

    PyBMatcher(const double* w, const std::uint8_t* a, const std::int64_t* c, std::int64_t n,
               std::int64_t m, bool cardinality_first)
        : core(w, a, c, n, m, cardinality_first) {}

    template <class F>
    auto locked(F&& f) -> decltype(f(core)) {
        py::gil_scoped_release release;
        std::lock_guard<std::mutex> guard(mu);
        return f(core);
    }
};

std::unique_ptr<PyBMatcher> make_matcher(const WeightArray& weights, const AllowedArray& allowed,
                                         const CapacityArray& capacity, bool cardinality_first) {
    const Shape s = check_inputs(weights, allowed, capacity);
    // std::invalid_argument from the core becomes ValueError (coalloc/common/errors.hpp).
    return std::make_unique<PyBMatcher>(weights.data(), allowed.data(), capacity.data(), s.n, s.m,
                                        cardinality_first);
}

}  // namespace

PYBIND11_MODULE(_bmatching, mod) {
    coalloc::bind::register_exceptions(mod);
    mod.doc() =
        "Incremental maximum-weight bipartite b-matching (tasks -> clusters), exact "
        "lexicographic (cardinality, weight) objective.  See coalloc/ctaap/bmatching.hpp.";

    py::class_<PyBMatcher> cls(mod, "BMatcher", R"doc(
Incremental maximum-weight bipartite b-matching of tasks onto clusters.

Task ``i`` may go to cluster ``j`` only if ``allowed[i, j]``; cluster ``j`` takes at most
``capacity[j]`` tasks; each task goes to at most one cluster.  With ``cardinality_first``
the number of matched tasks is maximised first and the total weight second (exactly,
lexicographically); otherwise only the total weight is maximised.

The matcher starts empty; :meth:`solve` brings it to optimum, :meth:`forbid` removes one
(task, cluster) pair, and a following :meth:`solve` re-optimises incrementally: with the
node potentials kept from the last solve, one shortest path (Dijkstra on reduced costs over
the m + 2 condensed nodes) per removed matched pair.

Parameters
----------
weights : ndarray of float64, shape (n, m)
    Weights, finite on the allowed pairs (normally >= 0; negative values work too).
allowed : ndarray of bool or uint8, shape (n, m)
    Nonzero where the pair may be used.
capacity : ndarray of int64, shape (m,)
    Non-negative cluster capacities.
cardinality_first : bool, default True
    Maximise (count, weight) lexicographically instead of the weight alone.

All inputs are copied; they are never modified.
)doc");
    cls.def(py::init(&make_matcher), py::arg("weights"), py::arg("allowed"),
             py::arg("capacity"), py::arg("cardinality_first") = true)
        .def(
            "solve",
            [](PyBMatcher& self, py::object deadline) {
                std::vector<std::int64_t> tasks, old;
                const coalloc::Deadline dl = coalloc::bind::deadline_arg(deadline);
                self.locked([&](coalloc::BMatcher& c) {
                    c.solve(&tasks, &old, dl);
                    return 0;
                });
                return py::make_tuple(to_array(tasks), to_array(old));
            },
            py::arg("deadline") = py::none(), R"doc(
Bring the current matching to optimum.

Parameters
----------
deadline : coalloc._shared.interrupt.KernelDeadline, optional
    The call's deadline (None: the calling thread's, built now).

Returns
-------
tasks : ndarray of int64
    Every task whose cluster differs from the one it had when this call started, in
    increasing order.
old_clusters : ndarray of int64
    The cluster each of those tasks had before (-1: it was unassigned).
)doc")
        .def(
            "forbid",
            [](PyBMatcher& self, std::int64_t i, std::int64_t j) {
                return self.locked([&](coalloc::BMatcher& c) { return c.forbid(i, j); });
            },
            py::arg("i"), py::arg("j"), R"doc(
Forbid the pair (task ``i``, cluster ``j``) from now on.

If task ``i`` currently sits in cluster ``j`` it becomes unassigned and True is returned,
otherwise False.  Does not re-solve; call :meth:`solve` afterwards.  Raises ValueError if an
index is out of range.
)doc")
        .def_property_readonly(
            "assignment",
            [](PyBMatcher& self) {
                std::vector<std::int64_t> a;
                self.locked([&](coalloc::BMatcher& c) {
                    a = c.assignment();
                    return 0;
                });
                return to_array(a);
            },
            "int64 array (n,): cluster of each task, -1 if unassigned (a copy).")
        .def_property_readonly(
            "n_allocated",
            [](PyBMatcher& self) {
                return self.locked([](coalloc::BMatcher& c) { return c.n_allocated(); });
            },
            "Number of matched tasks.")
        .def_property_readonly(
            "total_weight",
            [](PyBMatcher& self) {
                return self.locked([](coalloc::BMatcher& c) { return c.total_weight(); });
            },
            "Sum of the weights of the matched pairs (summed in task order).")
        .def_property_readonly(
            "n_augmentations",
            [](PyBMatcher& self) {
                return self.locked([](coalloc::BMatcher& c) { return c.n_augmentations(); });
            },
            "Cumulative number of augmenting (or, in weight mode, reducing) paths applied.")
        .def_property_readonly(
            "n_cycle_cancellations",
            [](PyBMatcher& self) {
                return self.locked(
                    [](coalloc::BMatcher& c) { return c.n_cycle_cancellations(); });
            },
            "Cumulative number of improving cycles cancelled.")
        .def_property_readonly(
            "n_tasks",
            [](PyBMatcher& self) {
                return self.locked([](coalloc::BMatcher& c) { return c.n_tasks(); });
            },
            "Number of tasks n.")
        .def_property_readonly(
            "n_clusters",
            [](PyBMatcher& self) {
                return self.locked([](coalloc::BMatcher& c) { return c.n_clusters(); });
            },
            "Number of clusters m.")
        .def_property_readonly(
            "cardinality_first",
            [](PyBMatcher& self) {
                return self.locked([](coalloc::BMatcher& c) { return c.cardinality_first(); });
            },
            "Whether (count, weight) is maximised lexicographically.")
        .def_property_readonly(
            "epsilon",
            [](PyBMatcher& self) {
                return self.locked([](coalloc::BMatcher& c) { return c.epsilon(); });
            },
            "Weight tolerance for 'strictly improving': 1e-12 * max|w| * max(1, (m+2)/200).");

    cls.def_property_readonly(
           "n_fallbacks",
           [](PyBMatcher& self) {
               return self.locked([](coalloc::BMatcher& c) { return c.n_fallbacks(); });
           },
           "Times the node potentials had to be rebuilt from scratch after a rounding "
           "inconsistency (normally 0).")
        .def_property_readonly(
            "has_potentials",
            [](PyBMatcher& self) {
                return self.locked([](coalloc::BMatcher& c) { return c.has_potentials(); });
            },
            "Whether node potentials certifying optimality are held (True after a solve).");
    cls.def("_drop_potentials",
            [](PyBMatcher& self) {
                self.locked([](coalloc::BMatcher& c) {
                    c.drop_potentials();
                    return 0;
                });
            },
            "Testing aid: forget the potentials; the next forbid/solve take the general path.");
    cls.def("_self_check",
            [](PyBMatcher& self) {
                return self.locked([](coalloc::BMatcher& c) { return c.self_check(); });
            },
            "Testing aid: True if the cached arcs, groups, loads, counts and potentials are "
            "consistent.");

    mod.def(
        "b_matching",
        [](const WeightArray& weights, const AllowedArray& allowed, const CapacityArray& capacity,
           bool cardinality_first, py::object deadline) {
            const Shape s = check_inputs(weights, allowed, capacity);
            const coalloc::Deadline dl = coalloc::bind::deadline_arg(deadline);
            std::vector<std::int64_t> a;
            {
                py::gil_scoped_release release;
                coalloc::BMatcher m(weights.data(), allowed.data(), capacity.data(), s.n, s.m,
                                    cardinality_first);
                m.solve(nullptr, nullptr, dl);
                a = m.assignment();
            }
            return to_array(a);
        },
        py::arg("weights"), py::arg("allowed"), py::arg("capacity"),
        py::arg("cardinality_first") = true, py::arg("deadline") = py::none(), R"doc(
One-shot maximum-weight b-matching.

Parameters
----------
weights, allowed, capacity, cardinality_first
    As for :class:`BMatcher`.
deadline : coalloc._shared.interrupt.KernelDeadline, optional
    The call's deadline (None: the calling thread's, built now).

Returns
-------
ndarray of int64, shape (n,)
    Cluster of each task, -1 if unassigned.
)doc");
}
