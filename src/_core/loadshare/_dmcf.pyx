# cython: language_level=3
# distutils: language = c++
"""The generation step of DMCF-GGA (Hovey & Jung) and the best-fit balancer.

``migrate`` is ConditionalMigration (Algorithm 3) for every node-agent against the coalition
snapshot of the previous generation; ``first_fit_all`` is Phase II (first fit inside each
coalition) for the coalitions marked dirty. Both run without the GIL. The random numbers
are counter based (splitmix64 of the seed, the generation and the node), so a node's draw
does not depend on which worker or thread computes it. The kernels trust their input; the
NumPy twins are in :mod:`coalloc.loadshare._reference.dmcf`.
"""

from libc.stdint cimport int64_t, uint64_t, uint8_t
from libcpp.vector cimport vector
from libcpp.set cimport set as cset
from libcpp.pair cimport pair
from cython.operator cimport dereference as cython_deref


from coalloc.common.interrupt cimport Deadline, Poll, coalloc_raise_interrupt, deadline_of
from coalloc.common.xoshiro cimport splitmix64

cdef uint64_t GOLDEN = 0x9E3779B97F4A7C15ULL
cdef uint64_t NODE_MUL = 0xD1B54A32D192ED03ULL


cdef inline uint64_t mix64(uint64_t x) noexcept nogil:
    # splitmix64's output for state x (the state itself is not kept): the common generator's
    # step of coalloc/common/xoshiro.hpp, so the draws are counter based
    return splitmix64(x)


def migrate(
    const int64_t[::1] coal,        # IN  (n,)  coalition of every node (snapshot)
    const double[::1] node_load,    # IN  (n,)  load of every node (Mflops)
    const double[::1] node_cap,     # IN  (n,)  capacity of every node
    double[::1] coal_load,          # IN/OUT (nc,) load of every coalition
    double[::1] coal_cap,           # IN/OUT (nc,) capacity of every coalition
    int64_t[::1] coal_count,        # IN/OUT (nc,) members of every coalition
    double p,                       # probability of a migration attempt
    double th,                      # coalition threshold th_c (in units of cap_ref)
    double cap_ref,                 # the capacity unit of the threshold
    uint64_t seed,
    int64_t generation,
    int64_t[::1] out,               # OUT (n,)  coalition of every node after migration
):
    """One round of conditional migration (Algorithm 3); returns ``(attempts, moves)``.

    Node-agents act in increasing id; the cm-agents' lists (``coal_load``, ``coal_cap``,
    ``coal_count``) are updated after every migration. Node ``i`` draws
    ``u1 = mix64(seed ^ (generation + 1) * G ^ (i + 1) * M)`` and ``u2 = mix64(u1)``; it
    attempts when ``(u1 >> 11) * 2**-53 < p``, with candidate coalition ``c = u2 % nc``.
    With ``e_c = (coal_load[c] - coal_cap[c]) / cap_ref`` it moves to ``c != coal[i]`` (a
    coalition with members) when Algorithm 3's condition holds,
    ``(node_load[i] > node_cap[i] and e_from > th and e_to < th)`` or
    ``(node_load[i] < node_cap[i] and e_from < th and e_to > th)``, and the move raises
    the summed throughput ``min(load, cap)`` of the two coalitions (section 3.1.1, step 2).
    """
    cdef Py_ssize_t n = coal.shape[0]
    cdef Py_ssize_t nc = coal_load.shape[0]
    cdef Py_ssize_t i
    cdef uint64_t u1, u2, base
    cdef int64_t c, c1
    cdef double r, e1, e2, l, k, before, after
    cdef int64_t attempts = 0, moves = 0
    if out.shape[0] != n or coal_cap.shape[0] != nc or coal_count.shape[0] != nc:
        raise ValueError("migrate: inconsistent array lengths")
    base = seed ^ (<uint64_t>(generation + 1) * GOLDEN)
    with nogil:
        for i in range(n):
            c1 = coal[i]
            out[i] = c1
            u1 = mix64(base ^ (<uint64_t>(i + 1) * NODE_MUL))
            u2 = mix64(u1)
            r = <double>(u1 >> 11) * (1.0 / 9007199254740992.0)
            if r >= p:
                continue
            attempts += 1
            c = <int64_t>(u2 % <uint64_t>nc)
            if c == c1 or coal_count[c] == 0:
                continue
            e1 = (coal_load[c1] - coal_cap[c1]) / cap_ref
            e2 = (coal_load[c] - coal_cap[c]) / cap_ref
            l = node_load[i]
            k = node_cap[i]
            if not ((l > k and e1 > th and e2 < th) or (l < k and e1 < th and e2 > th)):
                continue
            before = _min(coal_load[c1], coal_cap[c1]) + _min(coal_load[c], coal_cap[c])
            after = (_min(coal_load[c1] - l, coal_cap[c1] - k)
                     + _min(coal_load[c] + l, coal_cap[c] + k))
            if after <= before:
                continue
            out[i] = c
            moves += 1
            coal_load[c1] -= l
            coal_cap[c1] -= k
            coal_count[c1] -= 1
            coal_load[c] += l
            coal_cap[c] += k
            coal_count[c] += 1
    return int(attempts), int(moves)


cdef inline double _min(double a, double b) noexcept nogil:
    return a if a < b else b


def first_fit_all(
    const int64_t[::1] coal,        # IN  (n,)  coalition of every node
    const double[::1] node_cap,     # IN  (n,)
    const double[::1] job_size,     # IN  (J,)  in arrival order
    const int64_t[::1] job_origin,  # IN  (J,)
    const int64_t[::1] job_order,   # IN  (J,)  the order jobs are offered in (a permutation)
    const uint8_t[::1] dirty,       # IN  (nc,) 1 = recompute this coalition
    int64_t[::1] placement,         # OUT (J,)  node of every job of a dirty coalition
    double[::1] coal_tp,            # OUT (nc,) throughput of every dirty coalition
    deadline=None,  # IN  KernelDeadline (None: the calling thread's)
):
    """Phase II: first fit of each dirty coalition's jobs on its members.

    Members are taken in increasing node id, jobs in ``job_order`` (arrival order for first
    fit, decreasing size for first fit decreasing). A job goes to the
    first member whose remaining capacity is at least its size. The jobs no member could
    take whole are then placed, in arrival order, on the member with the most remaining
    capacity if that is positive (the excess waits in its queue), else at their origin. Returns ``(probes, moved)``: members examined, and jobs
    placed away from their origin (in the dirty coalitions).
    """
    cdef Py_ssize_t n = coal.shape[0]
    cdef Py_ssize_t nc = dirty.shape[0]
    cdef Py_ssize_t J = job_size.shape[0]
    cdef Py_ssize_t i, j, k, c, a, b, best, nleft
    cdef int64_t probes = 0, moved = 0
    cdef double s, room, tp
    cdef vector[int64_t] nstart, jstart, members, jobs, fill
    cdef vector[double] rem
    if (node_cap.shape[0] != n or job_origin.shape[0] != J or placement.shape[0] != J
            or job_order.shape[0] != J):
        raise ValueError("first_fit_all: inconsistent array lengths")
    if coal_tp.shape[0] != nc:
        raise ValueError("first_fit_all: coal_tp must have one entry per coalition")
    cdef Poll poll = Poll(deadline_of(deadline), 64)  # a job probes up to every member of its coalition
    with nogil:
        nstart.assign(nc + 1, 0)
        jstart.assign(nc + 1, 0)
        for i in range(n):
            nstart[coal[i] + 1] += 1
        for j in range(J):
            jstart[coal[job_origin[j]] + 1] += 1
        for c in range(nc):
            nstart[c + 1] += nstart[c]
            jstart[c + 1] += jstart[c]
        members.assign(n, 0)
        jobs.assign(J, 0)
        fill.assign(nc, 0)
        for i in range(n):
            c = coal[i]
            members[nstart[c] + fill[c]] = i
            fill[c] += 1
        fill.assign(nc, 0)
        for k in range(J):
            j = job_order[k]
            c = coal[job_origin[j]]
            jobs[jstart[c] + fill[c]] = j
            fill[c] += 1
        rem.assign(n, 0.0)
        for c in range(nc):
            if not dirty[c] or poll.stopped():
                continue
            a = nstart[c]
            b = nstart[c + 1]
            for k in range(a, b):
                rem[members[k]] = node_cap[members[k]]
            nleft = 0
            for k in range(jstart[c], jstart[c + 1]):
                if poll.stop():
                    break
                j = jobs[k]
                s = job_size[j]
                i = -1
                for a in range(nstart[c], b):
                    probes += 1
                    if rem[members[a]] >= s:
                        i = members[a]
                        break
                if i < 0:
                    jobs[jstart[c] + nleft] = j  # slot k >= jstart[c] + nleft is consumed
                    nleft += 1
                    continue
                placement[j] = i
                rem[i] -= s
                if i != job_origin[j]:
                    moved += 1
            # leftovers (in job order): the member with the most room, else the origin
            for k in range(jstart[c], jstart[c] + nleft):
                if poll.stop():
                    break
                j = jobs[k]
                s = job_size[j]
                best = -1
                room = 0.0
                for a in range(nstart[c], b):
                    probes += 1
                    if rem[members[a]] > room:
                        room = rem[members[a]]
                        best = members[a]
                i = best if best >= 0 else job_origin[j]
                placement[j] = i
                rem[i] -= s
                if i != job_origin[j]:
                    moved += 1
            tp = 0.0
            for k in range(nstart[c], b):
                i = members[k]
                tp += node_cap[i] - rem[i] if rem[i] > 0 else node_cap[i]
            coal_tp[c] = tp
    if poll.stopped():
        coalloc_raise_interrupt()
    return int(probes), int(moved)


def best_fit_decreasing(
    const double[::1] node_cap,     # IN  (n,)
    const double[::1] job_size,     # IN  (J,)  in arrival order
    const int64_t[::1] job_origin,  # IN  (J,)
    const int64_t[::1] size_order,  # IN  (J,)  every job, largest first
    int64_t[::1] placement,         # OUT (J,)
    bint keep=True,
    deadline=None,  # IN  KernelDeadline (None: the calling thread's)
):
    """Place every job: kept jobs at their origin, the others by best fit, largest first.

    With ``keep``, a job is *kept* (``placement[j] = origin``) when, in arrival order, it
    fits whole in what its origin has left; without, no job is kept. The other jobs, in ``size_order`` (every job, largest first;
    kept ones are skipped), go to the node with the least remaining capacity that still
    holds them whole (ties: smaller id); when none does, to the node with the most
    remaining capacity if positive (the excess waits in its queue), else back to their
    origin. Returns the number of jobs placed away from their origin.
    """
    cdef Py_ssize_t n = node_cap.shape[0]
    cdef Py_ssize_t J = job_size.shape[0]
    cdef Py_ssize_t i, j, k
    cdef int64_t moved = 0, o
    cdef double s
    cdef vector[double] rem
    cdef vector[uint8_t] kept
    cdef cset[pair[double, int64_t]] free
    cdef cset[pair[double, int64_t]].iterator it
    cdef pair[double, int64_t] key
    if job_origin.shape[0] != J or placement.shape[0] != J or size_order.shape[0] != J:
        raise ValueError("best_fit_decreasing: inconsistent array lengths")
    # a time limit or Ctrl-C stops the placement (about 1 us a job: 563,000 jobs took 0.6 s
    # under load); the half-built placement is not an answer (issue 36), the error says so
    cdef Poll poll = Poll(deadline_of(deadline), 1024)
    with nogil:
        rem.assign(n, 0.0)
        kept.assign(J, 0)
        for i in range(n):
            rem[i] = node_cap[i]
        for j in range(J):
            o = job_origin[j]
            if keep and rem[o] >= job_size[j]:
                kept[j] = 1
                placement[j] = o
                rem[o] -= job_size[j]
        for i in range(n):
            if rem[i] > 0:
                free.insert(pair[double, int64_t](rem[i], i))
        for k in range(J):
            if poll.stop():
                break
            j = size_order[k]
            if kept[j]:
                continue
            s = job_size[j]
            o = job_origin[j]
            if free.empty():
                placement[j] = o
                rem[o] -= s
                continue
            it = free.lower_bound(pair[double, int64_t](s, -1))
            if it == free.end():
                it = free.end()
                it = free.find(deref_last(free))
            key = deref_it(it)
            free.erase(it)
            i = key.second
            placement[j] = i
            rem[i] -= s
            if rem[i] > 0:
                free.insert(pair[double, int64_t](rem[i], i))
            if i != o:
                moved += 1
    if poll.stopped():
        coalloc_raise_interrupt()
    return int(moved)


cdef inline pair[double, int64_t] deref_it(cset[pair[double, int64_t]].iterator it) noexcept nogil:
    return cython_deref(it)


cdef inline pair[double, int64_t] deref_last(cset[pair[double, int64_t]]& s) noexcept nogil:
    return cython_deref(s.rbegin())


def size_order(
    const double[::1] job_size,     # IN  (J,)  finite, validated by the model
    int64_t[::1] order,             # OUT (J,)  every job, largest first (ties: arrival order)
    deadline=None,  # IN  KernelDeadline (None: the calling thread's)
):
    """Every job, largest first, ties in arrival order: ``np.argsort(-job_size,
    kind="stable")`` (the twin), stopped by a time limit or Ctrl-C.

    A bottom-up merge sort (insertion sort on runs of 32, then merges of doubling width)
    that polls the deadline every 2048 elements: NumPy's sort cannot be interrupted, and
    563,000 jobs took 0.1-0.9 s to sort under load, before any deadline was looked at
    (issue 36). Stopped, ``order`` is left unwritten and the pending error is raised.
    """
    cdef Py_ssize_t J = job_size.shape[0]
    cdef Py_ssize_t i, j, lo, mid, hi, a, b, o, width
    cdef Py_ssize_t run = 32
    cdef vector[double] key, key2
    cdef vector[int64_t] idx, idx2
    cdef double v
    cdef int64_t x
    cdef bint halted = False
    if order.shape[0] != J:
        raise ValueError("size_order: inconsistent array lengths")
    cdef Deadline dl = deadline_of(deadline)
    cdef Poll poll = Poll(dl, 2048)      # once per merged element
    cdef Poll poll_runs = Poll(dl, 64)   # once per run of 32 sorted by insertion
    with nogil:
        # a deadline already past: no buffers (touching 18 MB of new memory for 563,000 jobs
        # took tens of ms under load)
        halted = poll_runs.stop_now()
        if not halted:
            key.resize(J)
            idx.resize(J)
        for i in range(J if not halted else 0):
            key[i] = job_size[i]
            idx[i] = i
        lo = 0
        while lo < J and not halted:  # runs of `run` jobs, by insertion (stable)
            hi = lo + run if lo + run < J else J
            for i in range(lo + 1, hi):
                v = key[i]
                x = idx[i]
                j = i
                while j > lo and key[j - 1] < v:
                    key[j] = key[j - 1]
                    idx[j] = idx[j - 1]
                    j -= 1
                key[j] = v
                idx[j] = x
            halted = poll_runs.stop()
            lo = hi
        if not halted:
            key2.resize(J)
            idx2.resize(J)
        width = run
        while width < J and not halted:  # merges of doubling width (left first on ties)
            lo = 0
            while lo < J and not halted:
                mid = lo + width if lo + width < J else J
                hi = lo + 2 * width if lo + 2 * width < J else J
                a = lo
                b = mid
                o = lo
                while o < hi:
                    if b >= hi or (a < mid and not (key[b] > key[a])):
                        key2[o] = key[a]
                        idx2[o] = idx[a]
                        a += 1
                    else:
                        key2[o] = key[b]
                        idx2[o] = idx[b]
                        b += 1
                    o += 1
                    if poll.stop():
                        halted = True
                        break
                lo = hi
            key.swap(key2)
            idx.swap(idx2)
            width *= 2
        if not halted:
            for i in range(J):
                order[i] = idx[i]
    if poll.stopped() or poll_runs.stopped():
        coalloc_raise_interrupt()
