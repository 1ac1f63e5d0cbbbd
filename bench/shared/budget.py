"""The time-budget benchmark of issue 36: every family and method under ``time_limit``.

For every problem kind (ctaap, taskmap, collective, testbed, loadshare, gap) and method:

* the **untimed** run's time (median over ``--repeats`` warm runs, after one first call whose
  time is recorded too: lazy imports such as CP-SAT's land there) and **when its first answer
  comes**: from the result's ``trajectory`` (rows ``(seconds, objective, bound)``) where the
  method records one, else from ``timings["first_answer"]`` (the first
  :func:`coalloc._shared.params.offer_incumbent`) of a run under a limit that does not bind,
  else the untimed run's time (the column ``source`` says which);
* runs with ``time_limit`` T in ``--limits`` (default 0.05, 0.5, 5 s) and at 0.6 of the
  untimed time, **warm** (a worker process that has solved the instance once already: the
  time of the ``solve`` call) and **fresh** (a new ``python -c`` process per run: the whole
  process's wall time and the ``solve`` call's time inside it, separately);
* optionally under **load** (``--load 2``: two busy-loop processes for the whole run, with
  ``os.getloadavg()`` recorded at the start, at the end and with every run).

Every run records elapsed, overrun = elapsed - T, status, whether it holds a solution, and
whether that solution passes the family's ``verify``. The summary per kind/instance/method/
mode gives the **answer rate** over the runs whose T is past the method's first answer, the
**median / p99 / max overrun**, and whether elapsed <= T + max(0.05 s, 0.05 T) in at least
99 % of the runs (issue 36's target; for fresh runs on the ``solve`` call's time, with the
process's wall time beside it). The whole record goes to ``bench/out/budget-<time>.json``.

Instances (``--sizes``): ``small`` (milliseconds; test-sized) and ``medium`` (a default
untimed run of about 0.5-2 s on the 2-core VM, the issue's sizes: CTAAP Fig. 2 with 1,000
tasks, task mapping ``stencil_task_graph((64, 64))`` on ``hierarchical_cluster()``,
collective a 1,000-node request on a 3,000-node Table 1 pool, testbed an 800-node sparse
experiment onto a 2,000-PC DeterLab-like testbed, loadshare ``paper_setup(30000, seed=1)``
with ``coalition_size=45``, GAP type C 10 x 400); ``large``: the CTAAP anytime search (method
``ctaap``) on a 5,000-task Fig. 3 instance (one untimed run: about 90 s under a load of 8).
Exact methods' "untimed" runs are capped at ``--untimed-cap`` seconds (they
may not end on a medium instance); a capped run says so.

    PYTHONPATH=src python -m bench.shared.budget --quick              # smoke, under a minute
    PYTHONPATH=src python -m bench.shared.budget                      # every size, warm + fresh
    PYTHONPATH=src python -m bench.shared.budget --load 2 --repeats 5 # the issue's target, loaded
    PYTHONPATH=src python -m bench.shared.budget --families testbed --methods anneal \\
        --limits 0.05 0.5 --sizes medium --modes warm
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import platform
import select
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

KINDS = ("ctaap", "taskmap", "collective", "testbed", "loadshare", "gap")
#: A family's name -> its kinds (``--families loadshare`` runs the GAP too).
FAMILY_KINDS = {"loadshare": ("loadshare", "gap")}
SIZES = ("small", "medium", "large")
DEFAULT_LIMITS = (0.05, 0.5, 5.0)
#: How lines are printed: ``bench.shared._progress.say`` in the benchmark (it keeps the
#: progress bar intact); plain ``print`` in a worker.
_PRINTER: List[Callable[..., None]] = [print]


def _say(*parts: Any) -> None:
    _PRINTER[0](*parts)
    sys.stdout.flush()


#: What a run records when it gave no result: the call raised, hung (killed) or crashed.
FAILED = ("raised", "hung", "crashed")


# ------------------------------------------------------------------------ instances


def _ctaap(size: str) -> Any:
    from coalloc import ctaap as ct

    if size == "small":
        return ct.Instance(*ct.generators.fig2(2, n_tasks=50, seed=1))
    if size == "medium":
        return ct.Instance(*ct.generators.fig2(2, n_tasks=1000, seed=1))
    return ct.Instance(*ct.generators.fig3(5000, seed=1))


def _taskmap(size: str) -> Any:
    from coalloc import taskmap as tm

    shape = (8, 8) if size == "small" else (64, 64)
    return tm.Instance(
        tm.generators.stencil_task_graph(shape), tm.generators.hierarchical_cluster()
    )


def _collective(size: str) -> Any:
    from coalloc import collective as co

    if size == "small":
        pool = co.generators.table1_pool(16, n_slots=48, seed=1)
        return co.Instance(co.generators.section42_requests(pool, 4, 2, seed=1)[0][1], pool)
    pool = co.generators.table1_pool(3000, seed=1)
    return co.Instance(co.generators.section42_requests(pool, 1000, 2, seed=1)[0][1], pool)


def _testbed(size: str) -> Any:
    from coalloc import testbed as tb

    if size == "small":
        return tb.Instance(tb.generators.random_sparse(40, 2, seed=1), tb.generators.deterlab(255))
    ptop = tb.generators.deterlab(2000, seed=1)
    return tb.Instance(tb.generators.random_sparse(800, 2, seed=1), ptop)


def _loadshare(size: str) -> Any:
    from coalloc import loadshare as ls

    return ls.Instance(ls.generators.paper_setup(40 if size == "small" else 30000, seed=1))


def _gap(size: str) -> Any:
    from coalloc import loadshare as ls

    m, n = (5, 50) if size == "small" else (10, 400)
    return _gap_kind()(ls.generators.gap_instance("c", m, n, seed=1))


def _gap_kind() -> Any:
    from coalloc._shared.family import problem_kinds

    return next(k for k in problem_kinds() if k.kind == "gap")


BUILDERS: Dict[str, Callable[[str], Any]] = {
    "ctaap": _ctaap,
    "taskmap": _taskmap,
    "collective": _collective,
    "testbed": _testbed,
    "loadshare": _loadshare,
    "gap": _gap,
}

#: (kind, size) -> the methods that run on it (None: all); the 5,000-task CTAAP instance is
#: for the anytime search only.
ONLY: Dict[Tuple[str, str], Optional[Tuple[str, ...]]] = {("ctaap", "large"): ("ctaap",)}


def method_params(kind: str, size: str, method: str, func: Any) -> dict:
    """Parameters beyond the defaults: the issue's coalition size on the large grid."""
    import inspect

    params: dict = {}
    if kind == "loadshare" and size != "small":
        try:
            names = inspect.signature(func).parameters
        except (TypeError, ValueError):
            names = {}
        if "coalition_size" in names:
            params["coalition_size"] = 45
    return params


def is_exact(method: str) -> bool:
    return method in ("exact", "brute_force")


# ------------------------------------------------------------------------ the warm worker
#
# A worker is ``python bench/shared/budget.py --worker``: it reads one JSON request per line
# on standard input and answers one JSON line. It builds each (kind, size) instance once and
# keeps every method warm. The parent waits for an answer with a timeout and replaces a
# worker that overran it (a method that ignores its limit cannot stall the benchmark).

def _first_from_trajectory(result: Any) -> Optional[float]:
    traj = getattr(result, "trajectory", None)
    if traj is None:
        return None
    try:
        for row in traj:
            if len(row) >= 2 and math.isfinite(float(row[1])):
                return float(row[0])
    except (TypeError, ValueError):
        return None
    return None


def _describe(inst: Any, result: Any) -> dict:
    holds = bool(getattr(result, "has_solution", False))
    ok = None
    if holds:
        try:
            ok = bool(inst.verify(result).ok)
        except Exception as exc:  # noqa: BLE001 - recorded, not fatal
            ok = f"verify raised {type(exc).__name__}: {exc}"
    total = (getattr(result, "timings", None) or {}).get("total")
    objective = getattr(result, "objective", None)
    return {
        "status": str(result.status),
        "has_solution": holds,
        "verify_ok": ok,
        "objective": None if objective is None else float(objective),
        "result_total": None if total is None else float(total),
        "message": str(getattr(result, "message", ""))[:200],
    }


def _solve_once(inst: Any, method: str, params: dict, limit: Optional[float]) -> dict:
    """One call, timed; never raises (an exception is the record's ``error``)."""
    kwargs = dict(params)
    if limit is not None:
        kwargs["time_limit"] = limit
    t0 = time.perf_counter()
    try:
        result = inst.solve(method, seed=0, **kwargs)
    except Exception as exc:  # noqa: BLE001
        return {
            "elapsed": time.perf_counter() - t0,
            "status": "raised",
            "error": f"{type(exc).__name__}: {exc}"[:300],
            "has_solution": False,
            "verify_ok": None,
        }
    elapsed = time.perf_counter() - t0
    out = {"elapsed": elapsed, **_describe(inst, result)}
    first = _first_from_trajectory(result)
    if first is not None:
        out["first_answer"], out["first_source"] = first, "trajectory"
    elif (getattr(result, "timings", None) or {}).get("first_answer") is not None:
        # with_time_limit's record of the method's first offer_incumbent
        out["first_answer"], out["first_source"] = result.timings["first_answer"], "offer"
    return out


def worker_main() -> int:
    """The warm worker's loop (``--worker``)."""
    cache: Dict[Tuple[str, str], Any] = {}
    for line in sys.stdin:
        req = json.loads(line)
        key = (req["kind"], req["size"])
        try:
            if key not in cache:
                cache[key] = BUILDERS[key[0]](key[1])
            inst = cache[key]
            if req.get("op") == "dump":
                with open(req["path"], "wb") as fh:
                    pickle.dump(inst, fh)
                answer: dict = {
                    "ok": True,
                    "methods": list(type(inst).methods),
                    "default": type(inst).DEFAULT_METHOD,
                }
                answer["params"] = {
                    m: method_params(key[0], key[1], m, type(inst).METHODS[m])
                    for m in type(inst).methods
                }
            else:
                answer = _solve_once(inst, req["method"], req["params"], req["limit"])
        except Exception as exc:  # noqa: BLE001
            answer = {"status": "raised", "error": f"{type(exc).__name__}: {exc}"[:300]}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


class Worker:
    """A warm worker process, replaced when a request overruns its timeout."""

    def __init__(self) -> None:
        self.proc: Optional[subprocess.Popen] = None

    def _start(self) -> subprocess.Popen:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "--worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                bufsize=1,
            )
        return self.proc

    def ask(self, req: dict, timeout: float) -> dict:
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(req) + "\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], timeout)
        if not ready:
            self.close()
            return {
                "status": "hung",
                "error": f"no answer within {timeout:.0f} s (worker killed)",
                "has_solution": False,
                "verify_ok": None,
                "elapsed": timeout,
            }
        line = proc.stdout.readline()
        if not line:
            self.close()
            return {
                "status": "crashed",
                "error": "the worker died",
                "has_solution": False,
                "verify_ok": None,
                "elapsed": float("nan"),
            }
        return json.loads(line)

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None


# ------------------------------------------------------------------------ fresh processes

CHILD = r"""
import json, pickle, sys, time
t0 = time.perf_counter()
args = json.loads(sys.argv[1])
import coalloc
with open(args["path"], "rb") as fh:
    inst = pickle.load(fh)
kw = dict(args["params"])
if args["limit"] is not None:
    kw["time_limit"] = args["limit"]
t1 = time.perf_counter()
out = {"startup": t1 - t0}
try:
    r = inst.solve(args["method"], seed=0, **kw)
    out["elapsed"] = time.perf_counter() - t1
    holds = bool(r.has_solution)
    ok = None
    if holds:
        try:
            ok = bool(inst.verify(r).ok)
        except Exception as exc:
            ok = "verify raised %s" % type(exc).__name__
    total = (getattr(r, "timings", None) or {}).get("total")
    out.update(status=str(r.status), has_solution=holds, verify_ok=ok,
               objective=None if r.objective is None else float(r.objective),
               result_total=None if total is None else float(total))
except Exception as exc:
    out.update(elapsed=time.perf_counter() - t1, status="raised", has_solution=False,
               verify_ok=None, error=("%s: %s" % (type(exc).__name__, exc))[:300])
print(json.dumps(out))
"""


def fresh_run(path: str, method: str, params: dict, limit: Optional[float], timeout: float) -> dict:
    """One run in a new process: its wall time, and the call's time measured inside it."""
    args = json.dumps({"path": path, "method": method, "params": params, "limit": limit})
    t0 = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, args], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return {
            "status": "hung",
            "process_wall": timeout,
            "elapsed": timeout,
            "has_solution": False,
            "verify_ok": None,
            "error": f"no exit within {timeout:.0f} s (killed)",
        }
    wall = time.perf_counter() - t0
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        return {
            "status": "crashed",
            "process_wall": wall,
            "elapsed": float("nan"),
            "has_solution": False,
            "verify_ok": None,
            "error": done.stderr.strip()[-300:],
        }
    out = json.loads(lines[-1])
    out["process_wall"] = wall
    return out


# ------------------------------------------------------------------------ load


class Load:
    """``n`` busy-loop processes for the benchmark's duration (ended by their own ids)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.procs: List[subprocess.Popen] = []

    def __enter__(self) -> Load:
        for _ in range(self.n):
            self.procs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
        if self.n:
            time.sleep(1.0)  # let the load average see them
        return self

    def __exit__(self, *exc: Any) -> None:
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def loadavg() -> List[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


# ------------------------------------------------------------------------ statistics


def allowed(limit: float) -> float:
    """The issue's allowance: a run may end at most ``max(0.05 s, 0.05 T)`` after T."""
    return limit + max(0.05, 0.05 * limit)


def _pct(values: List[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    k = (len(values) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def summarise(entry: dict, mode: str, key: str = "elapsed") -> dict:
    """Answer rate past the first answer, overrun percentiles, the 99 % target."""
    runs = [r for r in entry["runs"] if r["mode"] == mode and r["limit"] is not None]
    first = entry.get("first_answer")
    past = [r for r in runs if first is not None and r["limit"] >= first]
    answered = [r for r in past if r.get("has_solution") and r.get("verify_ok") is True]
    over = [
        r[key] - r["limit"]
        for r in runs
        if isinstance(r.get(key), (int, float)) and math.isfinite(r[key])
    ]
    within = [
        r for r in runs if isinstance(r.get(key), (int, float)) and r[key] <= allowed(r["limit"])
    ]
    bad_verify = [r for r in runs if r.get("has_solution") and r.get("verify_ok") is not True]
    return {
        "runs": len(runs),
        "past_first": len(past),
        "answer_rate": (len(answered) / len(past)) if past else None,
        "overrun_median": statistics.median(over) if over else None,
        "overrun_p99": _pct(over, 0.99) if over else None,
        "overrun_max": max(over) if over else None,
        "within_share": (len(within) / len(runs)) if runs else None,
        "target_met": (len(within) >= 0.99 * len(runs)) if runs else None,
        "verify_failures": len(bad_verify),
        "statuses": _count(r.get("status") for r in runs),
    }


def _count(items: Any) -> dict:
    out: dict = {}
    for x in items:
        out[x] = out.get(x, 0) + 1
    return out


def _ms(x: Optional[float]) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{1e3 * x:.0f}"


def _rate(x: Optional[float]) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


# ------------------------------------------------------------------------ the benchmark


def _kinds(families: Optional[List[str]]) -> List[str]:
    if not families:
        return list(KINDS)
    out: List[str] = []
    for name in families:
        for kind in FAMILY_KINDS.get(name, (name,)):
            if kind not in KINDS:
                raise SystemExit(f"unknown family or kind {name!r} (one of {KINDS})")
            if kind not in out:
                out.append(kind)
    return out


def run_benchmark(args: argparse.Namespace) -> dict:
    """Everything the options ask for; returns the JSON record."""
    from bench.shared._progress import bar

    kinds = _kinds(args.families)
    record: dict = {
        "command": " ".join(
            [os.path.basename(sys.executable), "-m", "bench.shared.budget", *sys.argv[1:]]
        ),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "load_processes": args.load,
        },
        "settings": {
            "limits": args.limits,
            "repeats": args.repeats,
            "sizes": args.sizes,
            "modes": args.modes,
            "untimed_cap": args.untimed_cap,
            "quick": args.quick,
        },
        "loadavg_start": loadavg(),
        "entries": [],
    }
    worker = Worker()
    with tempfile.TemporaryDirectory(prefix="coalloc-budget-") as tmp, Load(args.load):
        record["loadavg_loaded"] = loadavg()
        try:
            for kind in bar(kinds, desc="budget", unit="kind"):
                for size in args.sizes:
                    if size == "large" and kind != "ctaap":
                        continue
                    path = os.path.join(tmp, f"{kind}-{size}.pkl")
                    t0 = time.perf_counter()
                    info = worker.ask(
                        {"op": "dump", "kind": kind, "size": size, "path": path}, timeout=600
                    )
                    if not info.get("ok"):
                        _say(f"{kind}/{size}: cannot build ({info.get('error')})")
                        continue
                    build = time.perf_counter() - t0
                    methods = [
                        m
                        for m in info["methods"]
                        if (not args.methods or m in args.methods)
                        and (ONLY.get((kind, size)) is None or m in ONLY[(kind, size)])
                    ]
                    for method in methods:
                        entry = _one_method(worker, kind, size, method, info, path, args)
                        entry["build_seconds"] = build
                        record["entries"].append(entry)
                        _print_entry(entry, args.modes)
        finally:
            worker.close()
        record["loadavg_end"] = loadavg()
    return record


def _one_method(
    worker: Worker,
    kind: str,
    size: str,
    method: str,
    info: dict,
    path: str,
    args: argparse.Namespace,
) -> dict:
    params = info["params"].get(method, {})
    cap = args.untimed_cap if is_exact(method) else None
    hang = (args.untimed_cap if cap else args.hang_after) * 2 + 30

    def ask(limit: Optional[float], timeout: float) -> dict:
        req = {
            "op": "solve",
            "kind": kind,
            "size": size,
            "method": method,
            "params": params,
            "limit": limit,
        }
        return worker.ask(req, timeout)

    entry: dict = {
        "kind": kind,
        "size": size,
        "method": method,
        "params": params,
        "default": method == info["default"],
        "runs": [],
        "untimed_capped": cap is not None,
    }
    first_call = ask(cap, hang)
    entry["first_call"] = first_call.get("elapsed")
    entry["first_call_status"] = first_call.get("status")
    # warm untimed runs after the first call (the 5,000-task search: the first call only)
    repeats = 0 if size == "large" else args.repeats
    untimed = [first_call] + [ask(cap, hang) for _ in range(repeats)]
    warm = untimed[1:] or untimed
    times = [
        r["elapsed"]
        for r in warm
        if isinstance(r.get("elapsed"), (int, float)) and r.get("status") not in FAILED
    ]
    entry["untimed"] = statistics.median(times) if times else None
    entry["untimed_status"] = warm[-1].get("status")
    entry["untimed_has_solution"] = warm[-1].get("has_solution")
    entry["untimed_verify_ok"] = warm[-1].get("verify_ok")
    if any(r.get("error") for r in untimed):
        entry["untimed_error"] = next(r["error"] for r in untimed if r.get("error"))
    # when the first answer comes
    first, source = None, None
    for r in warm:
        if r.get("first_answer") is not None:
            first, source = r["first_answer"], r.get("first_source")
            break
    if first is None and entry["untimed"] is not None and not args.quick:
        # a limit that does not bind (an anytime method runs to it: keep it short)
        probe_limit = min(2.0 * entry["untimed"] + 0.5, 30.0) if cap is None else cap
        probe = ask(probe_limit, probe_limit * 2 + 30)
        if probe.get("first_answer") is not None:
            first, source = probe["first_answer"], probe.get("first_source")
    if first is None and entry["untimed_has_solution"]:
        first, source = entry["untimed"], "untimed run"
    entry["first_answer"], entry["first_source"] = first, source
    # the limits
    limits: List[Tuple[str, float]] = [(f"{t:g}", float(t)) for t in args.limits]
    if entry["untimed"]:
        limits.append(("0.6x", max(1e-4, round(0.6 * entry["untimed"], 4))))
    if "warm" in args.modes:
        for label, t in limits:
            for _ in range(args.repeats):
                r = ask(t, max(t * 3, t + args.hang_after) + 30)
                r.update(mode="warm", limit=t, label=label, loadavg=loadavg()[:1])
                entry["runs"].append(r)
    chosen = args.fresh_methods
    if "fresh" in args.modes and (
        chosen is None or method in chosen or ("default" in chosen and entry["default"])
    ):
        fresh_limits = limits if not args.quick else limits[:1]
        for label, t in fresh_limits:
            for _ in range(args.repeats):
                r = fresh_run(path, method, params, t, max(t * 3, t + args.hang_after) + 60)
                r.update(mode="fresh", limit=t, label=label, loadavg=loadavg()[:1])
                entry["runs"].append(r)
    entry["summary"] = {mode: summarise(entry, mode) for mode in ("warm", "fresh")}
    entry["summary"]["fresh_process"] = summarise(entry, "fresh", key="process_wall")
    return entry


HEADER = (
    f"{'kind/size/method':34} {'mode':7} {'untimed':>8} {'first':>7} {'src':10} {'runs':>4} "
    f"{'answers':>8} {'over med':>8} {'p99':>7} {'max':>7} {'within':>7} {'99%?':>5}  statuses"
)


def _print_entry(entry: dict, modes: List[str]) -> None:
    name = f"{entry['kind']}/{entry['size']}/{entry['method']}"
    for mode in ("warm", "fresh", "fresh_process"):
        s = entry["summary"][mode]
        if not s["runs"] or mode.split("_")[0] not in modes:
            continue
        met = "-" if s["target_met"] is None else ("yes" if s["target_met"] else "NO")
        statuses = ",".join(f"{k}:{v}" for k, v in sorted(s["statuses"].items(), key=str))
        label = "process" if mode == "fresh_process" else mode
        untimed = _ms(entry["untimed"]) + ("c" if entry["untimed_capped"] else "")
        _say(
            f"{name:34} {label:7} {untimed:>8} {_ms(entry['first_answer']):>7} "
            f"{(entry['first_source'] or '-')[:10]:10} {s['runs']:>4} "
            f"{_rate(s['answer_rate']):>8} {_ms(s['overrun_median']):>8} "
            f"{_ms(s['overrun_p99']):>7} {_ms(s['overrun_max']):>7} "
            f"{_rate(s['within_share']):>7} {met:>5}  {statuses}"
        )
        if s["verify_failures"]:
            _say(f"{'':34} !! {s['verify_failures']} run(s) whose solution fails verify")
    if entry.get("untimed_error"):
        _say(f"{'':34} untimed: {entry['untimed_error'][:120]}")


def main(argv: Optional[List[str]] = None) -> int:
    """The benchmark's command line (``--worker``: the warm worker's loop)."""
    if "--worker" in (sys.argv[1:] if argv is None else argv):
        return worker_main()  # a worker runs as a script: no bench package to import
    from bench.shared._progress import add_quiet, say

    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument(
        "--families",
        nargs="+",
        help="families or kinds (default: all; loadshare includes the GAP, 'gap' alone is the GAP)",
    )
    ap.add_argument("--methods", nargs="+", help="only these methods (default: every one)")
    ap.add_argument(
        "--limits",
        nargs="+",
        type=float,
        default=None,
        help="time limits T in seconds (default 0.05 0.5 5; 0.6 x the untimed "
        "time is always added)",
    )
    ap.add_argument("--repeats", type=int, default=None, help="runs per limit (default 3)")
    ap.add_argument(
        "--sizes",
        nargs="+",
        choices=SIZES,
        default=None,
        help="instance sizes (default: small medium large)",
    )
    ap.add_argument("--modes", nargs="+", choices=("warm", "fresh"), default=["warm", "fresh"])
    ap.add_argument(
        "--fresh-methods",
        nargs="+",
        default=None,
        help="methods run in fresh processes (default: all; 'default': each kind's default method)",
    )
    ap.add_argument(
        "--load", type=int, default=0, help="busy-loop processes running for the whole benchmark"
    )
    ap.add_argument(
        "--untimed-cap",
        type=float,
        default=None,
        help="time limit standing in for 'untimed' for exact methods (default 60 s; --quick 2 s)",
    )
    ap.add_argument(
        "--hang-after",
        type=float,
        default=120.0,
        help="seconds after which a run that has not returned is killed",
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="smoke mode: small instances, limits 0.05 0.5, one repeat, fresh "
        "runs of each default method at 0.05 s only (under a minute)",
    )
    add_quiet(ap)
    ap.add_argument("--out", default=None, help="JSON file (default bench/out/budget-<time>.json)")
    args = ap.parse_args(argv)
    if args.worker:
        return worker_main()
    _PRINTER[0] = say
    if args.quick:
        args.sizes = args.sizes or ["small"]
        args.limits = args.limits or [0.05, 0.5]
        args.repeats = args.repeats or 1
        args.untimed_cap = args.untimed_cap or 2.0
        args.hang_after = min(args.hang_after, 20.0)
        if args.fresh_methods is None:
            args.fresh_methods = ["default"]
    args.sizes = args.sizes or ["small", "medium", "large"]
    args.limits = args.limits or list(DEFAULT_LIMITS)
    args.repeats = args.repeats or 3
    args.untimed_cap = args.untimed_cap or 60.0
    started = time.perf_counter()
    _say(f"load average {loadavg()} on {os.cpu_count()} CPUs; busy loops: {args.load}")
    _say(HEADER)
    record = run_benchmark(args)
    record["seconds"] = time.perf_counter() - started
    out = args.out
    if out is None:
        os.makedirs(os.path.join("bench", "out"), exist_ok=True)
        out = os.path.join("bench", "out", time.strftime("budget-%Y%m%d-%H%M%S.json"))
    with open(out, "w") as fh:
        json.dump(record, fh, indent=1, default=str)
    _say(
        f"{record['seconds']:.1f} s; load average {record['loadavg_start']} -> "
        f"{record['loadavg_end']}; written to {out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
