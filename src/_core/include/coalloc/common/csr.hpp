// A read-only view of a CSR matrix held by someone else (typically NumPy arrays kept alive
// by a binding): row r holds the entries e in [indptr[r], indptr[r + 1]), entry e being
// (indices[e], data[e]).  Nothing is copied or checked here; whoever builds the view
// checks the structure (indptr[0] == 0, non-decreasing, indptr[n] == nnz, indices in
// range) before a kernel walks it, with the messages of its own API.
//
// Users: coalloc/ctaap/localsearch.hpp (the request bandwidth b and its transpose),
// coalloc/taskmap/flowinject.hpp (the task graph); coalloc/common/pybind.hpp builds views
// from NumPy arrays.
//
// The header does not depend on Python.

#pragma once

#include <cstdint>

namespace coalloc {

template <class V = double, class I = std::int64_t>
struct CsrView {
    using value_type = V;
    using index_type = I;

    I n = 0;                     // number of rows
    I nnz = 0;                   // len(indices) == len(data); indptr[n] when well formed
    const I* indptr = nullptr;   // n + 1
    const I* indices = nullptr;  // nnz
    const V* data = nullptr;     // nnz

    // First entry of row r and one past its last entry.
    I begin(I r) const { return indptr[r]; }
    I end(I r) const { return indptr[r + 1]; }
    I row_size(I r) const { return indptr[r + 1] - indptr[r]; }
    // Column and value of entry e.
    I col(I e) const { return indices[e]; }
    const V& val(I e) const { return data[e]; }
};

}  // namespace coalloc
