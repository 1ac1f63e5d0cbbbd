// pybind11 binding of coalloc::localsearch (include/coalloc/ctaap/localsearch.hpp): iterated local
// search ((0,1) insertions, (1,2) swaps, forced-insertion perturbations) that grows a
// feasible CTAAP allocation.

#include <cstdint>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "coalloc/common/pybind.hpp"
#include "coalloc/ctaap/localsearch.hpp"

namespace py = pybind11;
namespace ls = coalloc::localsearch;

namespace {

using i64 = std::int64_t;
using coalloc::bind::Arr;
using coalloc::bind::need;
using coalloc::bind::need_length;
using coalloc::bind::need_shape;
using coalloc::bind::shape_of;

// The caller's arrays, shape-checked, kept alive for the duration of the call.
struct Args {
    Arr<i64> indptr, indices;
    Arr<double> data;
    Arr<i64> t_indptr, t_indices;
    Arr<double> t_data;
    Arr<double> bhat;
    Arr<std::uint8_t> allowed;
    Arr<i64> capacity;
    Arr<double> priority;  // meaningful only if has_priority
    bool has_priority = false;
    ls::RawInput raw;
};

// Shape checks of everything but assign; n comes from allowed (n, m).
void prepare(Args& a) {
    need(a.allowed.ndim() == 2, "allowed must be a 2-D array (n_tasks, n_clusters), got shape " +
                                    shape_of(a.allowed));
    const i64 n = a.allowed.shape(0), m = a.allowed.shape(1);
    coalloc::bind::need_csr_shapes(a.indptr, a.indices, a.data, n, "");
    coalloc::bind::need_csr_shapes(a.t_indptr, a.t_indices, a.t_data, n, "t_");
    need_shape(a.bhat, m, m, "bhat", "m, m");
    need_length(a.capacity, m, "capacity", "m");
    if (a.has_priority) need_shape(a.priority, n, m, "priority", "n, m");
    ls::RawInput& r = a.raw;
    r.n = n;
    r.m = m;
    r.b = coalloc::bind::csr_view(a.indptr, a.indices, a.data, n);
    r.bt = coalloc::bind::csr_view(a.t_indptr, a.t_indices, a.t_data, n);
    r.bhat = a.bhat.data();
    r.allowed = a.allowed.data();
    r.capacity = a.capacity.data();
    r.priority = a.has_priority ? a.priority.data() : nullptr;
}

// The request's links arrive as one record (coalloc.ctaap.model.KernelLinks: the CSR of b and
// of b.T), each array converted as an argument of its own would be.
template <typename T>
Arr<T> field(const py::object& links, const char* name) {
    return links.attr(name).cast<Arr<T>>();
}

Args make_args(const py::object& links, Arr<double> bhat, Arr<std::uint8_t> allowed,
               Arr<i64> capacity, py::object priority) {
    Args a{field<i64>(links, "indptr"), field<i64>(links, "indices"),
           field<double>(links, "data"), field<i64>(links, "t_indptr"),
           field<i64>(links, "t_indices"), field<double>(links, "t_data"),
           std::move(bhat), std::move(allowed), std::move(capacity), Arr<double>(), false, {}};
    if (!priority.is_none()) {
        a.priority = coalloc::bind::ensure_array<double>(priority);
        a.has_priority = true;
    }
    prepare(a);
    return a;
}

// The allocation as given: read-only input (count_moves) -> any int array is converted.
Arr<i64> read_assign(const py::object& obj, i64 n) {
    Arr<i64> a = coalloc::bind::ensure_array<i64>(obj);
    need_length(a, n, "assign");
    return a;
}

// Links from which a call's instance is freed on a thread of its own: on the 5,000-task
// Fig. 3 request (25 million links) the instance holds ~400 MB, and returning its pages took
// 0.2-0.4 s under load after the deadline had stopped the search (issue 36: the anytime
// search returned that late).  Smaller instances are freed in the call, as before.
constexpr std::size_t kFreeAsideLinks = std::size_t{1} << 22;

// Frees a call's instance: on a detached thread when it is large (nothing of Python or of
// the call is touched there), else here; here too when no thread can be started.
struct FreeInstance {
    std::unique_ptr<ls::Instance>& inst;
    ~FreeInstance() {
        if (inst && inst->nb.size() >= kFreeAsideLinks) {
            try {
                std::thread([p = std::move(inst)]() mutable { p.reset(); }).detach();
            } catch (const std::system_error&) {  // the lambda, and the instance, freed here
            }
        }
        inst.reset();  // a small one (or none left)
    }
};

const char* kArgsDoc = R"doc(
links : KernelLinks
    The request's links (:class:`coalloc.ctaap.model.KernelLinks`): ``indptr``,
    ``indices``, ``data`` (int64, int64, float64), the CSR of the request bandwidth ``b``
    (n x n; ``b[i, k] > 0`` is a link i -> k; duplicates are summed, the diagonal and values
    <= 0 ignored), and ``t_indptr``, ``t_indices``, ``t_data``, the CSR of ``b``'s
    transpose (checked against it: ValueError if it differs).
bhat : ndarray of float64, shape (m, m)
    Available bandwidth between clusters (diagonal: inside a cluster); may be asymmetric.
allowed : ndarray of bool/uint8, shape (n, m)
    Nonzero where task i may go to cluster j.
capacity : ndarray of int64, shape (m,)
    Non-negative cluster capacities.)doc";

}  // namespace

PYBIND11_MODULE(_localsearch, mod) {
    coalloc::bind::register_exceptions(mod);
    mod.doc() =
        "Iterated local search (ARW-style (0,1) insertions, (1,2) swaps, forced-insertion "
        "perturbations) that grows a feasible CTAAP allocation.  See "
        "coalloc/ctaap/localsearch.hpp; slow twin in coalloc._reference.localsearch.";

    mod.def(
        "improve",
        [](py::object links, Arr<double> bhat, Arr<std::uint8_t> allowed, Arr<i64> capacity,
           py::object assign_obj, i64 max_iters, py::int_ seed_obj, py::object priority,
           bool self_check, py::object deadline) {
            const coalloc::Deadline dl = coalloc::bind::deadline_arg(deadline);
            Args a = make_args(links, std::move(bhat), std::move(allowed), std::move(capacity),
                               std::move(priority));
            const i64 n = a.raw.n;
            // assign is written in place: it must already be a writable C-contiguous int64
            // vector (a converted copy would silently swallow the result).
            need(py::isinstance<py::array_t<i64, py::array::c_style>>(assign_obj),
                 "assign must be a C-contiguous numpy array of dtype int64 (it is updated in "
                 "place)");
            auto assign = py::reinterpret_borrow<py::array_t<i64, py::array::c_style>>(assign_obj);
            need_length(assign, n, "assign");
            need(assign.writeable(), "assign must be writable (it is updated in place)");
            need(max_iters >= 0, "max_iters must be >= 0");
            const std::uint64_t seed = coalloc::bind::seed_u64(seed_obj);  // modulo 2^64
            i64* out = assign.mutable_data();
            ls::Counters C;
            std::unique_ptr<ls::Instance> inst;
            {
                py::gil_scoped_release release;
                const FreeInstance free_instance{inst};  // after the search, its user
                // the set-up looks at the deadline too (every 16 rows or tasks), not only
                // the search (issue 36)
                coalloc::Poll setup(dl, 16);
                inst = std::make_unique<ls::Instance>(ls::build_instance(a.raw, &setup));
                ls::Search s(*inst, out, &setup);
                C = s.run(max_iters, seed, self_check, dl);
                const auto& res = s.assignment();
                std::copy(res.begin(), res.end(), out);
            }
            py::dict d;
            d["insertions"] = C.insertions;
            d["swaps_1_2"] = C.swaps_1_2;
            d["plateau_moves"] = C.plateau_moves;
            d["perturbations"] = C.perturbations;
            d["iterations"] = C.iterations;
            d["accepted"] = C.accepted;
            d["initial_size"] = C.initial_size;
            d["best_size"] = C.best_size;
            return d;
        },
        py::arg("links"), py::arg("bhat"), py::arg("allowed"),
        py::arg("capacity"), py::arg("assign"), py::arg("max_iters") = 500,
        py::arg("seed") = 0, py::arg("priority") = py::none(), py::arg("self_check") = false,
        py::arg("deadline") = py::none(),
        (std::string(R"doc(
Grow a feasible allocation by iterated local search; ``assign`` is updated IN PLACE.

Parameters
----------)doc") +
         kArgsDoc + R"doc(
assign : ndarray of int64, shape (n,), writable, C-contiguous
    A feasible allocation (cluster of each task, -1: unplaced); ValueError if it is not
    feasible.  On return it holds the best allocation found, never smaller than the input
    and always free of (0,1) insertions and (1,2) swaps (see :func:`count_moves`).
max_iters : int, default 500
    Perturbation rounds after the first descent (0: descent only).  Stops earlier if every
    task that has an allowed cluster (or every slot) is used.  Each round costs
    O(deg * m) per placement it changes; on the Fig. 2 instances (n = 50, m = 5) 500
    rounds take about 2 ms and reach the optimum on ~95% of them.
seed : int, default 0
    Seed of the internal xoshiro256** generator (any int, taken modulo 2**64): same
    inputs and seed, same result.
priority : ndarray of float64, shape (n, m), optional
    Insertion preference: among the possible (0,1) insertions the highest is taken
    (ties at random), e.g. the step-1 weights.  NaN counts as lowest.
self_check : bool, default False
    Testing aid: recompute every incremental structure after each move (slow);
    RuntimeError on a mismatch.
deadline : coalloc._shared.interrupt.KernelDeadline, optional
    The call's deadline (None: the calling thread's, built now).

Returns
-------
dict
    ``insertions``, ``swaps_1_2`` (moves applied), ``plateau_moves`` (perturbations that
    kept the size), ``perturbations`` (forced pairs), ``iterations`` (rounds run),
    ``accepted`` (rounds whose result was kept), ``initial_size`` and ``best_size``.
)doc")
            .c_str());

    auto moves_prelude = [](const py::object& links, Arr<double> bhat,
                            Arr<std::uint8_t> allowed, Arr<i64> capacity) {
        return make_args(links, std::move(bhat), std::move(allowed), std::move(capacity),
                         py::none());
    };

    mod.def(
        "count_moves",
        [moves_prelude](py::object links, Arr<double> bhat, Arr<std::uint8_t> allowed,
                        Arr<i64> capacity, py::object assign_obj) {
            Args a = moves_prelude(links, bhat, allowed, capacity);
            Arr<i64> assign = read_assign(assign_obj, a.raw.n);
            i64 n_ins = 0, n_swap = 0;
            {
                py::gil_scoped_release release;
                const ls::Instance inst = ls::build_instance(a.raw);
                ls::Search s(inst, assign.data());
                s.for_each_insertion([&](i64, i64) { return ++n_ins, false; });
                s.for_each_swap([&](i64, i64, i64, i64, i64) { return ++n_swap, false; });
            }
            return py::make_tuple(n_ins, n_swap);
        },
        py::arg("links"), py::arg("bhat"), py::arg("allowed"), py::arg("capacity"),
        py::arg("assign"),
        (std::string(R"doc(
Number of available (0,1) insertions and (1,2) swaps of a feasible allocation.

A (0,1) insertion is a pair (k, l): unplaced task k fits cluster l (allowed, free slot, no
conflict with a placed task).  A (1,2) swap is (i, {(k1, l1), (k2, l2)}): removing placed
task i from its cluster j and adding the two placements, of distinct tasks k1 != k2 each
unplaced or equal to i (then l != j), gives a feasible allocation.

Parameters
----------)doc") +
         kArgsDoc + R"doc(
assign : array_like of int, shape (n,)
    A feasible allocation (not modified); ValueError if it is not feasible.

Returns
-------
(int, int)
    (number of insertions, number of swaps); the allocation is a local optimum of
    :func:`improve` iff both are 0.
)doc")
            .c_str());

    mod.def(
        "list_moves",
        [moves_prelude](py::object links, Arr<double> bhat, Arr<std::uint8_t> allowed,
                        Arr<i64> capacity, py::object assign_obj, i64 limit) {
            Args a = moves_prelude(links, bhat, allowed, capacity);
            Arr<i64> assign = read_assign(assign_obj, a.raw.n);
            need(limit >= 0, "limit must be >= 0");
            std::vector<i64> ins, sw;
            bool too_many = false;
            {
                py::gil_scoped_release release;
                const ls::Instance inst = ls::build_instance(a.raw);
                ls::Search s(inst, assign.data());
                s.for_each_insertion([&](i64 k, i64 l) {
                    ins.push_back(k);
                    ins.push_back(l);
                    return false;
                });
                too_many = s.for_each_swap([&](i64 i, i64 k1, i64 l1, i64 k2, i64 l2) {
                    sw.insert(sw.end(), {i, k1, l1, k2, l2});
                    return static_cast<i64>(sw.size() / 5) > limit;
                });
            }
            need(!too_many, "more than limit = " + std::to_string(limit) + " swaps");
            py::array_t<i64> a_ins({static_cast<py::ssize_t>(ins.size() / 2), py::ssize_t{2}});
            py::array_t<i64> a_sw({static_cast<py::ssize_t>(sw.size() / 5), py::ssize_t{5}});
            std::copy(ins.begin(), ins.end(), a_ins.mutable_data());
            std::copy(sw.begin(), sw.end(), a_sw.mutable_data());
            return py::make_tuple(a_ins, a_sw);
        },
        py::arg("links"), py::arg("bhat"), py::arg("allowed"), py::arg("capacity"),
        py::arg("assign"), py::arg("limit") = 1000000,
        R"doc(
The moves that :func:`count_moves` counts, listed (same arguments, plus ``limit``).

Returns
-------
insertions : ndarray of int64, shape (K, 2)
    Rows (k, l), in no particular order.
swaps : ndarray of int64, shape (S, 5)
    Rows (i, k1, l1, k2, l2) with k1 < k2, in no particular order.  ValueError if there
    are more than ``limit``.
)doc");
}
