// Reading the flat arrays of coalloc.testbed.anneal.kernel_data from a Python dict (shared by
// the _anneal and _allocate bindings).

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "coalloc/common/pybind.hpp"
#include "coalloc/testbed/allocate.hpp"
#include "coalloc/testbed/anneal.hpp"

namespace coalloc {
namespace testbed_bind {

namespace py = pybind11;
using i64 = std::int64_t;
using coalloc::bind::Arr;
using coalloc::bind::need;

template <class T>
Arr<T> get(const py::dict& data, const char* key) {
    need(data.contains(key), std::string("data lacks '") + key + "'");
    return coalloc::bind::ensure_array<T>(data[key]);
}

// What a kernel stopped before its end hands back beside its best answer: the Python error
// the poll left pending (Ctrl-C, a cancelled scope), fetched and cleared so that the call can
// return its answer, for the Python caller to raise; None when the kernel's own deadline
// stopped it (no error is pending then).  Call with the GIL held.
inline py::object stop_error() {
    if (!PyErr_Occurred()) return py::none();
    PyObject *type = nullptr, *value = nullptr, *trace = nullptr;
    PyErr_Fetch(&type, &value, &trace);
    PyErr_NormalizeException(&type, &value, &trace);
    if (value != nullptr && trace != nullptr) PyException_SetTraceback(value, trace);
    Py_XDECREF(type);
    Py_XDECREF(trace);
    if (value == nullptr) return py::none();
    return py::reinterpret_steal<py::object>(value);
}

// The kernel deadline of params["deadline"] (a coalloc._shared.interrupt.KernelDeadline;
// absent or None: the calling thread's, built now from its scopes).
inline Deadline deadline_of(const py::dict& params) {
    if (!params.contains("deadline")) return coalloc::bind::deadline_arg(py::none());
    return coalloc::bind::deadline_arg(params["deadline"]);
}

// Fills d from data; the arrays stay alive in keep.
inline void fill_data(const py::dict& data, anneal::Data& d, std::vector<py::object>& keep) {
    namespace an = coalloc::anneal;
            auto I = [&](const char* k) {
        Arr<i64> a = get<i64>(data, k);
        keep.push_back(a);
        return a;
    };
    auto D = [&](const char* k) {
        Arr<double> a = get<double>(data, k);
        keep.push_back(a);
        return a;
    };
    Arr<i64> la = I("la"), lb = I("lb"), ltriv = I("ltriv"), lemu = I("lemu");
    Arr<double> lbw = D("lbw");
    Arr<i64> cand_ptr = I("cand_ptr"), cand_idx = I("cand_idx"), mem_ptr = I("mem_ptr"),
             mem_idx = I("mem_idx"), inc_ptr = I("inc_ptr"), inc_idx = I("inc_idx");
    Arr<i64> pclass = I("pclass"), pswitch = I("pswitch"), pis = I("pis_switch"),
             pif = I("pifaces");
    Arr<double> pifbw = D("pifbw");
    Arr<i64> vtype = I("vtype"), vstatic = I("vstatic");
    Arr<double> fcost = D("fcost"), vslots = D("vslots"), cap = D("cap");
    Arr<i64> tlimit = I("tlimit");
    Arr<double> tweight = D("tweight");
    Arr<double> vadd = D("vadd"), padd = D("padd");
    Arr<i64> fixed = I("fixed"), vclass = I("vclass");
    Arr<double> vclass_w = D("vclass_w");
    Arr<i64> hops = I("hops"), path_ptr = I("path_ptr"), path_idx = I("path_idx");
    Arr<double> tcap = D("tcap");
    Arr<i64> dir_ptr = I("dir_ptr"), dir_idx = I("dir_idx");
    d.nv = vslots.shape(0);
    d.npn = pclass.shape(0);
    d.nc = mem_ptr.shape(0) - 1;
    d.nty = tlimit.shape(0);
    d.na = vadd.ndim() == 2 ? vadd.shape(1) : 0;
    i64 ns = 0;
    while (ns * ns < hops.shape(0)) ++ns;
    need(ns * ns == hops.shape(0), "hops must hold ns * ns entries");
    d.ns = ns;
    d.nvc = vclass_w.shape(0);
    d.ne = la.shape(0);
    need(cand_ptr.shape(0) == d.nv + 1 && inc_ptr.shape(0) == d.nv + 1,
         "cand_ptr and inc_ptr must have nv + 1 entries");
    need(vtype.size() == d.nv * d.nc && fcost.size() == d.nv * d.nc &&
             vstatic.size() == d.nv * d.nc,
         "vtype, vstatic and fcost must have nv x nc entries");
    need(cap.size() == d.npn * d.nty && tweight.size() == d.npn * d.nty,
         "cap and tweight must have npn x ntypes entries");
    need(path_ptr.shape(0) == ns * ns + 1, "path_ptr must have ns * ns + 1 entries");
    d.la = la.data(); d.lb = lb.data(); d.ltriv = ltriv.data(); d.lemu = lemu.data();
    d.lbw = lbw.data();
    d.cand_ptr = cand_ptr.data(); d.cand_idx = cand_idx.data();
    d.mem_ptr = mem_ptr.data(); d.mem_idx = mem_idx.data();
    d.inc_ptr = inc_ptr.data(); d.inc_idx = inc_idx.data();
    d.pclass = pclass.data(); d.pswitch = pswitch.data(); d.pis_sw = pis.data();
    d.pif = pif.data(); d.pifbw = pifbw.data();
    d.vtype = vtype.data(); d.vstatic = vstatic.data(); d.fcost = fcost.data();
    d.vslots = vslots.data(); d.cap = cap.data(); d.tlimit = tlimit.data();
    d.tweight = tweight.data();
    d.has_limits = false;
    for (i64 t = 0; t < d.nty; ++t) d.has_limits = d.has_limits || d.tlimit[t] >= 0;
    d.vadd = vadd.data(); d.padd = padd.data();
    d.fixed = fixed.data(); d.vclass = vclass.data(); d.vclass_w = vclass_w.data();
    d.hops = hops.data(); d.path_ptr = path_ptr.data(); d.path_idx = path_idx.data();
    d.tcap = tcap.data();
    need(dir_ptr.shape(0) == d.npn + 1, "dir_ptr must have npn + 1 entries");
    d.dir_ptr = dir_ptr.data();
    d.dir_idx = dir_idx.data();
}

// Fills x, assign+'s arrays beyond the annealer's, from data (after fill_data filled d); the
// arrays stay alive in keep.
inline void fill_plus(const py::dict& data, const anneal::Data& d, allocate::PlusData& x,
                      std::vector<py::object>& keep) {
    Arr<double> cscore = get<double>(data, "cscore");
    Arr<i64> vscore = get<i64>(data, "vscore"), parent = get<i64>(data, "parent"),
             list_ptr = get<i64>(data, "list_ptr"), list_idx = get<i64>(data, "list_idx"),
             vlist = get<i64>(data, "vlist"), cswitch = get<i64>(data, "cswitch");
    need(cscore.size() == d.nc && cswitch.size() == d.nc, "cscore/cswitch need nc entries");
    need(vscore.size() == d.nv && parent.size() == d.nv && vlist.size() == d.nv,
         "vscore/parent/vlist need nv entries");
    for (const py::object& a : {py::object(cscore), py::object(vscore), py::object(parent),
                                py::object(list_ptr), py::object(list_idx), py::object(vlist),
                                py::object(cswitch)})
        keep.push_back(a);
    x.cscore = cscore.data();
    x.vscore = vscore.data();
    x.parent = parent.data();
    x.list_ptr = list_ptr.data();
    x.list_idx = list_idx.data();
    x.vlist = vlist.data();
    x.cswitch = cswitch.data();
    x.nlists = list_ptr.shape(0) - 1;
    x.ntrunks = get<double>(data, "tcap").shape(0);
}

}  // namespace testbed_bind
}  // namespace coalloc
