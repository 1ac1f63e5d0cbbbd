"""Reproduce Table 4 / Fig. 6 of seed 003 (assign vs assign+) on a generated workload.

The paper replays the 19,258 DeterLab experiments of 2011 on a testbed cut to 255 PCs;
that workload is not public, so a generated one of the same shape is used (a DeterLab-like
testbed of 255 PCs of five types behind five switches, Poisson arrivals, log-normal
durations and sizes, LANs/trees/rings/dumbbells/sparse graphs, some nodes asking for a
hardware type or memory). As in the paper, experiments that fail on the empty testbed are
removed first. Every mapper replays the whole workload on its own copy of the testbed;
the annealer is replayed with several seeds (mean and deviation). Every mapping is
re-checked by the independent ``verify_mapping`` on the empty-testbed pass.

    python -m bench.testbed.table4                       # reduced: 1,500 experiments, 3 seeds
    python -m bench.testbed.table4 --quick               # 300 experiments, 2 seeds
    python -m bench.testbed.table4 --exact-only          # gap to exact and speed only
    python -m bench.testbed.table4 --speed-only --speed-reps 10      # speed only
    python -m bench.testbed.table4 --replay-only --experiments 19258 --seeds 3   # Table 4 only

**The replay in parts.** The replay (Table 4 / Fig. 6) is split into parts, each written to
``bench/out/testbed_replay<suffix>/`` as ``<part>.csv`` (one row per experiment) with a
``<part>.json`` sidecar (the workload parameters: experiments, seed, duration, testbed; the
git commit, whether the tree was dirty, a digest of the code that ran, the start and end
time, the load average, the run time):

* ``filter``: the empty-testbed pass (``experiment, kept, isw, seconds, constraint``). It is
  computed ONCE per workload and reused by every later call whatever its options (the
  default assign+ may change, the other parts must stay valid); ``--redo filter`` recomputes
  it. Its sidecar records the commit that computed it.
* ``plus_<variant>``: the replay of one assign+ variant (``assign+``, ``assign+.1``,
  ``assign+.1m``, ``assign+.2m``; seed ``--seed``).
* ``anneal_seed<S>``: one replay of the annealer with seed ``S`` = 1000, 2000, ...
  (``--seeds`` of them).

A replay part's CSV has ``k, arrival, success, isw, isw_in_use, seconds, constraint`` (``k``:
replay order over the kept experiments; ``isw`` empty on a failure; ``constraint``: the
failure's ``reason["constraint"]``); its sidecar also records the digest of the kept
experiments and the filter's commit. With ``--resume`` a part is reused only when its
sidecar's parameters (workload, method, seed, filter digest) equal the wanted ones; without
it every replay part is recomputed. ``--redo NAME`` recomputes the parts named (``plus``,
``anneal``, ``plus_assign+``, ``anneal_seed3000``, ``filter``) even with ``--resume``.
``--jobs N`` runs independent parts in N processes (the filter, split in chunks, first; then
the assign+ variants; then the annealer seeds one by one, so that after a few seeds there is
a usable report). Each finished part prints one line with its elapsed time, and every
``--status-every`` seconds a running part prints how far it is (even with ``--quiet``, which
only turns the bars off). ``--report-only`` assembles Table 4 (CSV, PNG and the printed
table) from whatever parts exist for the workload, saying how many annealer seeds are in
(mean and deviation over those)::

    python -u -m bench.testbed.table4 --replay-only --experiments 19258 --seeds 10 \\
        --jobs 2 --resume --out-suffix _full --quiet          # paper's size; rerun to resume
    python -m bench.testbed.table4 --report-only --experiments 19258 --seeds 10 \\
        --out-suffix _full                                    # Table 4 from the parts so far

Writes bench/out/testbed_table4.csv, testbed_fig6.png (failure rate and inter-switch
bandwidth in use over time), testbed_exact.csv (small experiments against CP-SAT) and
testbed_speed.csv (side-by-side run times); ``--out-dir`` writes elsewhere.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import csv
import datetime
import functools
import hashlib
import json
import math
import multiprocessing
import os
import pathlib
import platform
import signal
import statistics
import subprocess
import sys
import time

import numpy as np

import coalloc
from bench.shared._plot import pyplot
from bench.shared._progress import add_quiet, bar, say
from coalloc.testbed import SimulationResult, assign, simulate, verify_mapping
from coalloc.testbed import generators as g

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "out")
PLUS = ["assign+", "assign+.1", "assign+.1m", "assign+.2m"]
PAPER = {"assign": 1176, "assign+.1": 905, "assign+.1m": 983, "assign+.2m": 917}
PAPER_N = 19258
INTERARRIVAL = 1.0
FILTER_METHOD = "assign+"  # the empty-testbed pass (it falls back to the annealer)
REPLAY_COLUMNS = ["k", "arrival", "success", "isw", "isw_in_use", "seconds", "constraint"]
FILTER_COLUMNS = ["experiment", "kept", "isw", "seconds", "constraint"]


# ---------------------------------------------------------------- workload and provenance


def _testbed_text(seed):
    return f"generators.deterlab(255, 5, seed={seed})"


def workload_params(args):
    """The parameters that define the replayed workload (compared before reusing a part)."""
    return {"experiments": int(args.experiments), "seed": int(args.seed),
            "duration": float(args.duration), "mean_interarrival": INTERARRIVAL,
            "testbed": _testbed_text(int(args.seed))}  # fmt: skip


@functools.lru_cache(maxsize=2)
def _generated(experiments, seed, duration):
    ptop = g.deterlab(255, 5, seed=seed)
    wl = g.workload(experiments, seed=seed, mean_interarrival=INTERARRIVAL,
                    mean_duration=duration)  # fmt: skip
    return ptop, wl


def _generate(wp):
    return _generated(wp["experiments"], wp["seed"], wp["duration"])


def _git(*cmd, cwd):
    try:
        out = subprocess.run(["git", *cmd], cwd=cwd, capture_output=True, text=True,
                             timeout=20, check=True)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


def provenance():
    """The git commit, whether the tree was dirty, and a digest of the code that runs
    (the testbed family, the shared layer, the compiled kernels and this script)."""
    pkg = pathlib.Path(coalloc.__file__).resolve().parent
    files = (sorted(pkg.glob("testbed/**/*.py")) + sorted(pkg.glob("testbed/*.so"))
             + sorted(pkg.glob("_shared/**/*.py")) + [pathlib.Path(__file__).resolve()])
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode())
        h.update(f.read_bytes())
    top = _git("rev-parse", "--show-toplevel", cwd=pkg)
    commit = _git("rev-parse", "HEAD", cwd=pkg) if top else None
    dirty = None
    if top:
        st = _git("status", "--porcelain", "--untracked-files=no", "--", "src", "bench",
                  cwd=top)  # fmt: skip
        dirty = None if st is None else bool(st)
    return {"commit": commit, "dirty": dirty, "code_sha256": h.hexdigest()[:16],
            "coalloc": getattr(coalloc, "__version__", None), "python": platform.python_version(),
            "host": platform.node()}  # fmt: skip


def _now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _load():
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def _constraint(reason):
    if isinstance(reason, dict):
        return str(reason.get("constraint", "unknown"))
    return "unknown" if reason is None else str(reason)


# ---------------------------------------------------------------- parts on disk


def _digest(kept):
    return hashlib.sha256(",".join(map(str, kept)).encode()).hexdigest()[:16]


def _write_part(d, stem, columns, rows, meta):
    """Write ``<stem>.csv`` then its sidecar, each atomically (a killed run leaves none)."""
    d.mkdir(parents=True, exist_ok=True)
    side = d / f"{stem}.json"
    if side.exists():
        side.unlink()  # the CSV is replaced first; a stale sidecar must not vouch for it
    tmp = d / f".{stem}.csv.tmp"
    with open(tmp, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(columns)
        w.writerows(rows)
    os.replace(tmp, d / f"{stem}.csv")
    meta = dict(meta, rows=len(rows))
    tmp = d / f".{stem}.json.tmp"
    tmp.write_text(json.dumps(meta, indent=1) + "\n")
    os.replace(tmp, side)


def read_sidecar(d, stem):
    """The sidecar of part ``stem`` in ``d``, or None."""
    p = pathlib.Path(d) / f"{stem}.json"
    if not p.exists() or not (pathlib.Path(d) / f"{stem}.csv").exists():
        return None
    try:
        return json.loads(p.read_text())
    except ValueError:
        return None


def _matching(d, stem, params):
    meta = read_sidecar(d, stem)
    return meta if meta is not None and meta.get("params") == params else None


def _rows(d, stem):
    with open(pathlib.Path(d) / f"{stem}.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def _fl(x):
    return float(x) if x != "" else math.nan


def load_replay(d, stem, method):
    """A replay part back as a one-method :class:`SimulationResult`."""
    rows = _rows(d, stem)
    res = SimulationResult(methods=[method],
                           arrivals=np.array([float(r["arrival"]) for r in rows]))
    res.success[method] = np.array([r["success"] == "1" for r in rows], dtype=bool)
    res.isw[method] = np.array([_fl(r["isw"]) for r in rows])
    res.isw_in_use[method] = np.array([float(r["isw_in_use"]) for r in rows])
    res.seconds[method] = np.array([float(r["seconds"]) for r in rows])
    res.reasons[method] = [(int(r["k"]), {"constraint": r["constraint"]}) for r in rows
                           if r["success"] != "1"]  # fmt: skip
    return res


def _filter_params(wp):
    return {"part": "filter", "method": FILTER_METHOD, "assign_seed": wp["seed"], "workload": wp}


def _replay_params(stem, method, sim_seed, wp, digest):
    return {"part": stem, "method": method, "sim_seed": int(sim_seed), "workload": wp,
            "filter_sha256": digest}  # fmt: skip


def planned_parts(args):
    """``(stem, method, seed)`` of every replay part, in the order they are run."""
    parts = [(f"plus_{m}", m, int(args.seed)) for m in PLUS]
    parts += [(f"anneal_seed{1000 * (s + 1)}", "anneal", 1000 * (s + 1))
              for s in range(args.seeds)]  # fmt: skip
    return parts


def _redo(stem, names):
    return any(stem == n or stem.startswith(n + "_") or (n == "anneal" and
               stem.startswith("anneal_seed")) for n in names)  # fmt: skip


# ---------------------------------------------------------------- computing the parts


def _init_worker():
    """A worker dies with its parent (Linux), so stopping the run stops every part."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _filter_chunk(wp, lo, hi):
    """Empty-testbed pass over experiments ``lo:hi``: one row each (``FILTER_COLUMNS``)."""
    ptop, wl = _generate(wp)
    out = []
    for i in range(lo, hi):
        top = wl[i][2]
        t0 = time.perf_counter()
        r = assign(top, ptop, FILTER_METHOD, seed=wp["seed"])
        secs = time.perf_counter() - t0
        if r.success:
            rep = verify_mapping(top, ptop, r.mapping, r.routes,
                                 claimed=r.interswitch_bandwidth)  # fmt: skip
            if not rep.ok:
                raise RuntimeError(f"verification failed (experiment {i}): {rep}")
            out.append([i, 1, repr(float(r.interswitch_bandwidth)), repr(secs), ""])
        else:
            out.append([i, 0, "", repr(secs), _constraint(r.reason)])
    return out


def _status(stem, total, every):
    """A callback for :func:`simulate` printing how far part ``stem`` is every ``every`` s."""
    t0 = time.perf_counter()
    last = [t0]

    def cb(method, k, ok):
        now = time.perf_counter()
        if every and now - last[0] >= every and k + 1 < total:
            last[0] = now
            el = now - t0
            rate = (k + 1) / el
            say(f"  [{stem}] {k + 1}/{total} experiments, {el / 60:.1f} min, "
                f"{rate:.1f} exp/s, ~{(total - k - 1) / rate / 60:.0f} min left, "
                f"load {_load()}")  # fmt: skip
            sys.stdout.flush()

    return cb


def _run_replay(stem, method, sim_seed, wp, kept, digest, filter_commit, d, prov, quiet,
                status_every):  # fmt: skip
    """Replay one part and write it; returns ``(stem, failures, rows, elapsed)``."""
    started, load0, t0 = _now(), _load(), time.perf_counter()
    ptop, wl = _generate(wp)
    wl = [wl[i] for i in kept]
    res = simulate(ptop, wl, [method], seed=sim_seed, show_progress=False if quiet else None,
                   on_experiment=_status(stem, len(wl), status_every))  # fmt: skip
    why = dict(res.reasons[method])
    rows = []
    for k in range(len(wl)):
        ok = bool(res.success[method][k])
        rows.append([k, repr(float(res.arrivals[k])), int(ok),
                     repr(float(res.isw[method][k])) if ok else "",
                     repr(float(res.isw_in_use[method][k])),
                     repr(float(res.seconds[method][k])),
                     "" if ok else _constraint(why.get(k))])  # fmt: skip
    elapsed = time.perf_counter() - t0
    meta = {"params": _replay_params(stem, method, sim_seed, wp, digest),
            "filter_commit": filter_commit, **prov, "started": started, "finished": _now(),
            "elapsed_s": round(elapsed, 1), "load_start": load0, "load_end": _load(),
            "failures": res.failures(method)}  # fmt: skip
    _write_part(d, stem, REPLAY_COLUMNS, rows, meta)
    return stem, res.failures(method), len(rows), elapsed


def _pool(jobs):
    ctx = multiprocessing.get_context("fork") if "fork" in \
        multiprocessing.get_all_start_methods() else None  # fmt: skip
    return cf.ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_init_worker)


def _compute_filter(wp, d, prov, args, pool):
    started, load0, t0 = _now(), _load(), time.perf_counter()
    n = wp["experiments"]
    if pool is None:
        rows = []
        for lo in bar(range(0, n, 50), desc="empty testbed", unit="x50 exp"):
            rows += _filter_chunk(wp, lo, min(n, lo + 50))
    else:
        size = max(1, min(500, math.ceil(n / (4 * args.jobs))))
        futs = [pool.submit(_filter_chunk, wp, lo, min(n, lo + size)) for lo in range(0, n, size)]
        done = [f.result() for f in bar(futs, desc="empty testbed", unit="chunk")]
        rows = [r for chunk in done for r in chunk]
    kept = [r[0] for r in rows if r[1] == 1]
    elapsed = time.perf_counter() - t0
    meta = {"params": _filter_params(wp), **prov, "kept": len(kept),
            "dropped": n - len(kept), "kept_sha256": _digest(kept), "started": started,
            "finished": _now(), "elapsed_s": round(elapsed, 1), "load_start": load0,
            "load_end": _load()}  # fmt: skip
    _write_part(d, "filter", FILTER_COLUMNS, rows, meta)
    return elapsed


def _kept(d):
    return [int(r["experiment"]) for r in _rows(d, "filter") if r["kept"] == "1"]


def replay_dir(args):
    """Where the parts of this run live: ``<out>/testbed_replay<suffix>``."""
    return pathlib.Path(args.out_dir) / f"testbed_replay{args.out_suffix}"


def run_parts(args):
    """Compute the filter (once per workload) and the replay parts not yet valid on disk."""
    d = replay_dir(args)
    wp = workload_params(args)
    prov = provenance()
    t_run = time.perf_counter()
    say(f"replay parts in {d} (commit {prov['commit']}{' dirty' if prov['dirty'] else ''}, "
        f"code {prov['code_sha256']}, jobs {args.jobs}, load {_load()})")  # fmt: skip
    _generate(wp)  # before the workers fork: they inherit it
    pool = _pool(args.jobs) if args.jobs > 1 else None
    try:
        fmeta = None if _redo("filter", args.redo) else _matching(d, "filter", _filter_params(wp))
        if fmeta is not None:
            say(f"part filter: reused (computed at commit {fmeta.get('commit')}, "
                f"{fmeta.get('finished')}; {fmeta['kept']} kept, {fmeta['dropped']} dropped)")
        else:
            el = _compute_filter(wp, d, prov, args, pool)
            fmeta = read_sidecar(d, "filter")
            say(f"part filter: done in {el:.0f} s ({fmeta['kept']} kept, {fmeta['dropped']} "
                f"dropped; total elapsed {time.perf_counter() - t_run:.0f} s)")
        kept = _kept(d)
        digest = _digest(kept)
        if digest != fmeta["kept_sha256"]:
            raise SystemExit(f"{d / 'filter.csv'} does not match its sidecar: --redo filter")
        todo = []
        for stem, m, s in planned_parts(args):
            meta = None
            if args.resume and not _redo(stem, args.redo):
                meta = _matching(d, stem, _replay_params(stem, m, s, wp, digest))
            if meta is not None:
                say(f"part {stem}: reused ({meta['failures']} failures, commit "
                    f"{meta.get('commit')}, {meta.get('finished')})")
            else:
                todo.append((stem, m, s))
        common = (wp, kept, digest, fmeta.get("commit"), d, prov, args.quiet, args.status_every)
        n_done = 0

        def line(out):
            stem, fails, rows, el = out
            say(f"part {stem}: done in {el:.0f} s ({fails} failures of {rows}; "
                f"{n_done}/{len(todo)} parts; total elapsed "
                f"{time.perf_counter() - t_run:.0f} s; load {_load()})")
            sys.stdout.flush()

        if pool is None:
            for stem, m, s in todo:
                out = _run_replay(stem, m, s, *common)
                n_done += 1
                line(out)
        else:
            futs = [pool.submit(_run_replay, stem, m, s, *common) for stem, m, s in todo]
            for f in cf.as_completed(futs):
                n_done += 1
                line(f.result())
    except RuntimeError as exc:
        raise SystemExit(str(exc)) from exc
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)


# ---------------------------------------------------------------- the report


def report(args):
    """Table 4 / Fig. 6 from the parts on disk (whatever of them exist for this workload)."""
    out_dir = pathlib.Path(args.out_dir)
    d = replay_dir(args)
    wp = workload_params(args)
    fmeta = _matching(d, "filter", _filter_params(wp))
    if fmeta is None:
        other = read_sidecar(d, "filter")
        found = f"; {d / 'filter.json'} is for {other['params']['workload']}" if other else ""
        raise SystemExit(f"no empty-testbed filter for workload {wp} in {d}{found}")
    kept = _kept(d)
    digest = _digest(kept)
    n = len(kept)
    print(f"workload: {wp['experiments']} generated, {fmeta['dropped']} dropped (fail on the "
          f"empty testbed), {n} replayed (filter computed at commit {fmeta.get('commit')})")
    plus, stale = {}, []
    for m in PLUS:
        stem = f"plus_{m}"
        if _matching(d, stem, _replay_params(stem, m, args.seed, wp, digest)):
            plus[m] = load_replay(d, stem, m)
        elif read_sidecar(d, stem) is not None:
            stale.append(stem)
    anneal, seeds = [], []
    for side in sorted(d.glob("anneal_seed*.json"), key=lambda p: int(p.stem[11:] or 0)):
        meta = read_sidecar(d, side.stem)
        s = int(side.stem[len("anneal_seed"):])
        if meta is not None and meta.get("params") == _replay_params(side.stem, "anneal", s,
                                                                     wp, digest):
            anneal.append(load_replay(d, side.stem, "anneal"))
            seeds.append(s)
        else:
            stale.append(side.stem)
    missing = [m for m in PLUS if m not in plus]
    print(f"annealer seeds in: {len(anneal)} ({', '.join(map(str, seeds)) or 'none'}; "
          f"{args.seeds} asked for); assign+ variants in: {len(plus)} of {len(PLUS)}"
          + (f" (missing {', '.join(missing)})" if missing else "")
          + (f"; ignored (other parameters or filter): {', '.join(stale)}" if stale else ""))
    commits = sorted({str(read_sidecar(d, p.stem).get("commit")) for p in d.glob("*.json")
                      if read_sidecar(d, p.stem) is not None})  # fmt: skip
    print(f"parts computed at commit(s): {', '.join(commits)}")
    if not anneal and not plus:
        print("no replay part yet: nothing to tabulate")
        return None
    rows = []
    mean_a = math.nan
    if anneal:
        fails_a = [r.failures("anneal") for r in anneal]
        mean_a = statistics.mean(fails_a)
        sd_a = statistics.stdev(fails_a) if len(fails_a) > 1 else 0.0
        rows.append({"algorithm": f"assign (anneal, {len(anneal)} seeds)",
                     "failures": f"{mean_a:.1f} (sd {sd_a:.1f})",
                     "rate": mean_a / n, "vs_assign": 1.0,
                     "paper_failures": PAPER["assign"], "paper_vs_assign": 1.0,
                     "median_ms": statistics.median(float(np.median(r.seconds["anneal"])) * 1e3
                                                    for r in anneal),
                     "mean_isw": statistics.mean(float(np.nanmean(r.isw["anneal"]))
                                                 for r in anneal),
                     "runs": len(anneal)})  # fmt: skip
    for m, res in plus.items():
        f = res.failures(m)
        rows.append({"algorithm": m, "failures": str(f), "rate": f / n,
                     "vs_assign": f / mean_a if mean_a else float("nan"),
                     "paper_failures": PAPER.get(m, ""),
                     "paper_vs_assign": PAPER[m] / PAPER["assign"] if m in PAPER else "",
                     "median_ms": float(np.median(res.seconds[m])) * 1e3,
                     "mean_isw": float(np.nanmean(res.isw[m])), "runs": 1})  # fmt: skip
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"testbed_table4{args.out_suffix}.csv"
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"\n{n} experiments replayed (paper: {PAPER_N}); failures")
    print("| algorithm | failures | rate | vs assign | paper | paper vs assign | median ms |"
          " mean inter-switch bw (kbps) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        pv = r["paper_vs_assign"]
        print(f"| {r['algorithm']} | {r['failures']} | {100 * r['rate']:.2f}% | "
              f"{100 * r['vs_assign']:.1f}% | {r['paper_failures']} | "
              f"{'' if pv == '' else f'{100 * pv:.1f}%'} | {r['median_ms']:.2f} | "
              f"{r['mean_isw']:.0f} |")
    if "assign+" in plus and anneal:
        both = plus["assign+"].success["assign+"]
        worse = [int((~both & r.success["anneal"]).sum()) for r in anneal]
        print(f"\nassign+ failed where the annealer (seed runs) succeeded: {worse} experiments "
              f"(states diverge during a replay, so this is not a per-case comparison)")
        t_plus = float(plus["assign+"].seconds["assign+"].sum())
        t_ann = statistics.mean(float(r.seconds["anneal"].sum()) for r in anneal)
        print(f"total mapper time: assign+ {t_plus:.1f} s, anneal {t_ann:.1f} s per seed "
              f"(ratio {t_ann / t_plus:.1f}x)")
    plt = None if getattr(args, "no_plot", False) else pyplot()
    png = f"testbed_fig6{args.out_suffix}.png"
    if plt is not None:
        window = max(50, n // 20)
        fig, ax = plt.subplots(1, 2, figsize=(11, 4))
        # whole windows only (a short last window is a few experiments' noise), each drawn
        # at its last experiment
        full = n // window
        xs = (np.arange(full) + 1) * window

        def smooth(series):  # the mean over the last `window` experiments
            if n < window:
                return np.zeros(0), np.zeros(0)
            kernel = np.ones(window) / window
            return np.arange(window, n + 1), np.convolve(series, kernel, mode="valid")

        if anneal:
            rates = np.array([r.failure_rate("anneal", window)[:full] for r in anneal])
            ax[0].errorbar(xs, rates.mean(0), yerr=rates.std(0),
                           label=f"assign (anneal, {len(anneal)} seeds)", capsize=2)
            ax[1].plot(*smooth(np.mean([r.isw_in_use["anneal"] for r in anneal], axis=0) / 1e6),
                       label=f"assign (anneal, mean of {len(anneal)} seeds)")  # fmt: skip
        for m, res in plus.items():
            ax[0].plot(xs, res.failure_rate(m, window)[:full], label=m)
        if "assign+" in plus:
            ax[1].plot(*smooth(plus["assign+"].isw_in_use["assign+"] / 1e6), label="assign+")
        ax[0].set_xlabel("experiments")
        ax[0].set_ylabel(f"failure rate (per {window})")
        ax[0].legend(fontsize=8)
        ax[1].set_xlabel("experiments")
        ax[1].set_ylabel(f"inter-switch bandwidth in use (Gb/s, mean of {window})")
        ax[1].legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out_dir / png, dpi=110)
        plt.close(fig)
    print(f"wrote {path}" + (f" and {png}" if plt is not None else ""))
    return rows


def table4(args):
    """The replay: compute the parts (reusing what ``--resume`` allows), then the report."""
    run_parts(args)
    return report(args)


def exact_gap(args):
    """Small experiments on a small testbed with tight trunks: both heuristics vs CP-SAT,
    and their run times side by side."""
    os.makedirs(OUT, exist_ok=True)
    rows = []
    ptop = g.deterlab(48, 4, trunk_bw=1_000_000, trunks_per_pair=1, seed=args.seed)
    for i in bar(range(args.small), desc="exact", unit="exp"):
        top = g.random_topology(3 + i % 8, seed=args.seed + 7919 * i)
        rec = {"case": i, "nodes": len(top.nodes), "links": len(top.links)}
        for m in ("assign+", "assign+.1", "anneal", "exact"):
            t0 = time.perf_counter()
            r = assign(top, ptop, m, seed=args.seed + i)
            rec[f"{m}_s"] = time.perf_counter() - t0
            rec[f"{m}_isw"] = r.interswitch_bandwidth if r.success else None
            if r.success:
                rep = verify_mapping(top, ptop, r.mapping, r.routes,
                                     claimed=r.interswitch_bandwidth)  # fmt: skip
                if not rep.ok:
                    raise SystemExit(f"verification failed ({m}, case {i}): {rep}")
            if m == "exact":
                rec["exact_status"] = r.status
        rows.append(rec)
    path = os.path.join(OUT, f"testbed_exact{args.out_suffix}.csv")
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    opt = [r for r in rows if r["exact_status"] == "optimal"]
    print(f"\n{len(rows)} small experiments, {len(opt)} solved to optimality by CP-SAT")
    for m in ("assign+", "assign+.1", "anneal"):
        solved = [r for r in opt if r[f"{m}_isw"] is not None]
        gaps = [(r[f"{m}_isw"] - r["exact_isw"]) / r["exact_isw"] if r["exact_isw"] else
                (0.0 if r[f"{m}_isw"] == 0 else float("inf")) for r in solved]  # fmt: skip
        fails = sum(1 for r in opt if r[f"{m}_isw"] is None)
        within = sum(1 for x in gaps if x <= 0.10 + 1e-12)
        print(f"  {m:10s} failed {fails}, at optimum {sum(1 for x in gaps if x <= 1e-12)}, "
              f"within 10% {within}/{len(solved)}, mean gap "
              f"{statistics.mean([x for x in gaps if x != float('inf')] or [0]):.3f}")
    cmp_ = [r for r in rows if r["assign+_isw"] is not None and r["anneal_isw"] is not None]
    print(f"  assign+ inter-switch bw <= anneal's in {sum(1 for r in cmp_ if r['assign+_isw'] <= r['anneal_isw'] + 1e-9)}/{len(cmp_)} cases")  # noqa: E501
    ratio = [r["anneal_s"] / r["assign+_s"] for r in rows]
    print(f"  run time anneal / assign+ (same process, side by side): median "
          f"{statistics.median(ratio):.1f}x, min {min(ratio):.1f}x")
    both = sum(1 for r in rows if r["assign+_isw"] is None and r["anneal_isw"] is not None)
    print(f"  assign+ failed where anneal succeeded: {both}")
    print(f"wrote {path}")


def speed(args):
    """Side-by-side run time on the generated workload's topologies (empty testbed).

    Two measurements of the same cases in the same run: interleaved (assign+ then the
    annealer on one experiment, three times; each call follows a call of the other method,
    so the short assign+ call starts with caches the annealer has used) and batch (each
    method over a size's experiments back to back, as a batch of requests runs).
    """
    os.makedirs(OUT, exist_ok=True)
    ptop = g.deterlab(255, 5, seed=args.seed)
    rows = []
    for size in (4, 8, 16, 32, 64):
        tops = []
        for k in range(args.speed_reps):
            top = g.random_topology(size, seed=args.seed + 31 * size + k)
            tops.append(top)
            rec = {"size": size, "rep": k}
            assign(top, ptop, "assign+", seed=k)  # warm the testbed cache
            best = {"assign+": float("inf"), "anneal": float("inf")}
            cpu = dict(best)
            for _ in range(3):  # interleaved, the fastest of three (the machine is shared)
                for m in ("assign+", "anneal"):
                    t0, c0 = time.perf_counter(), time.process_time()
                    r = assign(top, ptop, m, seed=k)
                    best[m] = min(best[m], time.perf_counter() - t0)
                    cpu[m] = min(cpu[m], time.process_time() - c0)
                    rec[f"{m}_isw"] = r.interswitch_bandwidth if r.success else None
                    rec[f"{m}_fallback"] = bool(r.params.get("fallback_used"))
            for m in best:
                rec[f"{m}_s"] = best[m]
                rec[f"{m}_cpu_s"] = cpu[m]
            rows.append(rec)
        # batch: each method maps the size's experiments back to back (as a batch of
        # requests runs), the two methods' blocks alternating; the fastest of three per case
        sub = rows[-len(tops):]
        for rec in sub:
            rec["assign+_batch_s"] = rec["anneal_batch_s"] = float("inf")
        for _ in range(3):
            for m in ("assign+", "anneal"):
                for k, (top, rec) in enumerate(zip(tops, sub)):
                    t0 = time.perf_counter()
                    assign(top, ptop, m, seed=k)
                    rec[f"{m}_batch_s"] = min(rec[f"{m}_batch_s"], time.perf_counter() - t0)
    path = os.path.join(OUT, f"testbed_speed{args.out_suffix}.csv")
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print("\n| virtual nodes (about) | assign+ median ms | anneal median ms | ratio |"
          " CPU ms assign+ | CPU ms anneal | CPU ratio | assign+ fallbacks |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size in (4, 8, 16, 32, 64):
        sub = [r for r in rows if r["size"] == size]
        a = statistics.median(r["assign+_s"] for r in sub) * 1e3
        b = statistics.median(r["anneal_s"] for r in sub) * 1e3
        ca = statistics.median(r["assign+_cpu_s"] for r in sub) * 1e3
        cb = statistics.median(r["anneal_cpu_s"] for r in sub) * 1e3
        fb = sum(1 for r in sub if r["assign+_fallback"])
        print(f"| {size} | {a:.2f} | {b:.2f} | {b / a:.1f}x | {ca:.2f} | {cb:.2f} | "
              f"{cb / ca:.1f}x | {fb}/{len(sub)} |")
    print("\nbatch (each method over a size's experiments back to back, wall time):")
    print("| virtual nodes (about) | assign+ median ms | anneal median ms | ratio |")
    print("|---:|---:|---:|---:|")
    for size in (4, 8, 16, 32, 64):
        sub = [r for r in rows if r["size"] == size]
        a = statistics.median(r["assign+_batch_s"] for r in sub) * 1e3
        b = statistics.median(r["anneal_batch_s"] for r in sub) * 1e3
        print(f"| {size} | {a:.2f} | {b:.2f} | {b / a:.1f}x |")
    for key, what in (("s", "wall"), ("cpu_s", "CPU"), ("batch_s", "batch, wall")):
        ratio = [r[f"anneal_{key}"] / r[f"assign+_{key}"] for r in rows]
        tot = sum(r[f"anneal_{key}"] for r in rows) / sum(r[f"assign+_{key}"] for r in rows)
        print(f"all {len(rows)} ({what} time): median ratio {statistics.median(ratio):.1f}x, "
              f"total-time ratio {tot:.1f}x")
    print(f"wrote {path}")


def main(argv=None):
    global OUT
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_quiet(ap)
    ap.add_argument("--experiments", type=int, default=1500)
    ap.add_argument("--seeds", type=int, default=3, help="annealer replays (paper: 10)")
    ap.add_argument("--duration", type=float, default=6.0, help="mean duration (arrivals 1/s)")
    ap.add_argument("--small", type=int, default=40, help="small experiments for the exact gap")
    ap.add_argument("--speed-reps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--exact-only", action="store_true")
    ap.add_argument("--speed-only", action="store_true")
    ap.add_argument("--replay-only", action="store_true", help="Table 4 / Fig. 6 only")
    ap.add_argument("--report-only", action="store_true",
                    help="assemble Table 4 / Fig. 6 from the replay parts on disk")
    ap.add_argument("--resume", action="store_true",
                    help="reuse replay parts whose parameters match (the filter always is)")
    ap.add_argument("--redo", nargs="+", default=[], metavar="PART",
                    help="recompute these parts: filter, plus, anneal, plus_assign+, "
                         "anneal_seed2000, ...")  # fmt: skip
    ap.add_argument("--jobs", type=int, default=1, help="replay parts run in N processes")
    ap.add_argument("--status-every", type=float, default=300.0, metavar="SECONDS",
                    help="a running part prints how far it is (0: never)")
    ap.add_argument("--no-plot", action="store_true", help="no Fig. 6 PNG (the CSVs only)")
    ap.add_argument("--out-dir", default=OUT, help="where the outputs go (bench/out)")
    ap.add_argument("--out-suffix", default="", help="appended to the output file names")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    OUT = args.out_dir
    t_start = time.perf_counter()
    if args.quick:
        args.experiments, args.seeds, args.small, args.speed_reps = 300, 2, 12, 2
    if args.report_only:
        report(args)
    elif args.speed_only:
        speed(args)
    elif args.replay_only:
        table4(args)
    else:
        exact_gap(args)
        speed(args)
        if not args.exact_only:
            table4(args)
    print(f"elapsed {time.perf_counter() - t_start:.0f} s")


if __name__ == "__main__":
    main()
