"""A single-node Slurm on localhost for the tests: :class:`LocalSlurm`.

It writes a minimal ``slurm.conf`` into a folder of its own, starts ``munged``,
``slurmctld`` and ``slurmd`` in the foreground as children of this process (free ports, a
munge socket and key of its own, so that it never meets a Slurm or munge of the machine),
waits until ``sinfo`` shows the node idle, and on :meth:`LocalSlurm.stop` cancels every
job, stops the daemons (SIGTERM, then SIGKILL) and removes the folder. Every wait has a
timeout: a daemon that does not come up is an error with the tail of its log, never a hang.

Needs Debian's ``slurm-wlm`` and ``munge`` (``apt-get install -y slurm-wlm munge``) and
root (slurmd starts jobs as their user): :func:`missing` says what is missing, for a skip.
The clients (``sbatch``, ``squeue``, dask-jobqueue's calls) find this cluster through
``SLURM_CONF``, which :meth:`LocalSlurm.env` holds and :meth:`LocalSlurm.start` exports.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from typing import Dict, List, Optional

#: The programs a local cluster needs.
PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scancel")

#: Seconds a daemon may take to come up, and ``sinfo`` to show the node idle.
START_TIMEOUT = 60.0


def missing() -> Optional[str]:
    """Why a local Slurm cannot start here (None: it can)."""
    absent = [p for p in PROGRAMS if shutil.which(p) is None]
    if absent:
        return (f"a local Slurm needs {', '.join(absent)}: "
                "apt-get install -y slurm-wlm munge")  # fmt: skip
    if os.geteuid() != 0:
        return "a local Slurm needs root (slurmd runs the jobs as their user)"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _node() -> Dict[str, int]:
    """``CPUs`` and ``RealMemory`` (MB) as slurmd sees them (``slurmd -C``), else the
    affinity count and 1024 MB."""
    found = {"CPUs": len(os.sched_getaffinity(0)), "RealMemory": 1024}
    try:
        out = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return found
    for word in out.split():
        key, _, value = word.partition("=")
        if key in found and value.isdigit():
            found[key] = int(value)
    return found


class LocalSlurm:
    """A one-node Slurm cluster on localhost, started by :meth:`start`, stopped by
    :meth:`stop` (also a context manager).

    Parameters
    ----------
    cpus : int, optional
        The node's CPUs (default: what ``slurmd -C`` reports). More than the machine has is
        allowed (slurmd then oversubscribes), fewer caps the jobs that run at once.
    """

    def __init__(self, cpus: Optional[int] = None) -> None:
        node = _node()
        self.cpus = cpus or node["CPUs"]
        self.memory = node["RealMemory"]
        self.root = tempfile.mkdtemp(prefix="coalloc_slurm_")
        self.conf = os.path.join(self.root, "slurm.conf")
        self.procs: List[subprocess.Popen] = []
        self.env: Dict[str, str] = {**os.environ, "SLURM_CONF": self.conf}
        self._old_conf = os.environ.get("SLURM_CONF")

    # ----------------------------------------------------------------------- set-up
    def _path(self, *parts: str) -> str:
        return os.path.join(self.root, *parts)

    def _write_files(self) -> None:
        for sub in ("state", "spool", "log", "munge", "jobs"):
            os.makedirs(self._path(sub), mode=0o700, exist_ok=True)
        os.chmod(self.root, 0o755)  # munged refuses a socket folder others may write
        key = self._path("munge", "munge.key")
        with open(key, "wb") as fh:
            fh.write(os.urandom(1024))
        os.chmod(key, 0o400)
        self.socket = self._path("munge", "munge.socket")
        conf = f"""\
ClusterName=coalloctest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
AuthType=auth/munge
AuthInfo=socket={self.socket}
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={self._path("state")}
SlurmdSpoolDir={self._path("spool")}
SlurmctldPidFile={self._path("slurmctld.pid")}
SlurmdPidFile={self._path("slurmd.pid")}
SlurmctldLogFile={self._path("log", "slurmctld.log")}
SlurmdLogFile={self._path("log", "slurmd.log")}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=300
MaxArraySize=100001
SchedulerParameters=sched_min_interval=0,batch_sched_delay=0
NodeName=localhost NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory={self.memory} State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
"""
        with open(self.conf, "w") as fh:
            fh.write(conf)

    def _spawn(self, name: str, argv: List[str]) -> subprocess.Popen:
        log = open(self._path("log", f"{name}.out"), "wb")
        try:
            proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                    stdin=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
        finally:
            log.close()
        self.procs.append(proc)
        return proc

    def _log_tail(self) -> str:
        text = []
        for name in sorted(os.listdir(self._path("log"))):
            try:
                with open(self._path("log", name), errors="replace") as fh:
                    lines = fh.read().splitlines()[-8:]
            except OSError:
                continue
            text.append(f"--- {name}\n" + "\n".join(lines))
        return "\n".join(text)

    def _wait(self, what: str, ready, timeout: float = START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for proc in self.procs:
                if proc.poll() is not None:
                    raise RuntimeError(f"local Slurm: {proc.args[0]} exited with "
                                       f"{proc.returncode} while waiting for {what}\n"
                                       f"{self._log_tail()}")  # fmt: skip
            if ready():
                return
            time.sleep(0.2)
        raise RuntimeError(f"local Slurm: no {what} after {timeout:.0f} s\n{self._log_tail()}")

    def run(self, *argv: str, timeout: float = 30.0) -> subprocess.CompletedProcess:
        """A Slurm client command against this cluster (``sinfo``, ``squeue``, ...)."""
        return subprocess.run(list(argv), capture_output=True, text=True, env=self.env,
                              timeout=timeout)  # fmt: skip

    def _node_idle(self) -> bool:
        try:
            out = self.run("sinfo", "-h", "-N", "-o", "%T", timeout=10).stdout
        except subprocess.TimeoutExpired:
            return False
        return out.strip().rstrip("*") == "idle"

    def start(self) -> LocalSlurm:
        """Start munged, slurmctld and slurmd; return once the node is idle."""
        try:
            self._write_files()
            self._spawn("munged", [
                "munged", "-F", "--force", f"--socket={self.socket}",
                f"--key-file={self._path('munge', 'munge.key')}",
                f"--pid-file={self._path('munge', 'munged.pid')}",
                f"--log-file={self._path('log', 'munged.log')}",
                f"--seed-file={self._path('munge', 'munged.seed')}",
            ])  # fmt: skip
            self._wait("munge socket", lambda: os.path.exists(self.socket))
            self._spawn("slurmctld", ["slurmctld", "-D", "-c", "-i", "-f", self.conf])
            self._spawn("slurmd", ["slurmd", "-D", "-N", "localhost", "-f", self.conf])
            self._wait("idle node in sinfo", self._node_idle)
        except BaseException:
            self.stop()
            raise
        os.environ["SLURM_CONF"] = self.conf
        return self

    # ----------------------------------------------------------------------- tear-down
    def cancel_all(self, timeout: float = 30.0) -> None:
        """Cancel every job and wait (at most ``timeout`` s) until the queue is empty."""
        try:
            self.run("scancel", "--full", "--user=root", timeout=10)
        except (OSError, subprocess.SubprocessError):
            return
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                out = self.run("squeue", "-h", "-o", "%i", timeout=10)
            except subprocess.SubprocessError:
                return
            if out.returncode != 0 or not out.stdout.strip():
                return
            time.sleep(0.3)

    def stop(self) -> None:
        """Cancel the jobs, stop the daemons (SIGTERM, SIGKILL after 10 s), remove the folder."""
        if any(p.poll() is None for p in self.procs):
            self.cancel_all()
        for proc in reversed(self.procs):  # slurmd, slurmctld, then munged
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for proc in reversed(self.procs):
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait(timeout=10)
        self.procs.clear()
        if os.environ.get("SLURM_CONF") == self.conf:
            if self._old_conf is None:
                os.environ.pop("SLURM_CONF", None)
            else:
                os.environ["SLURM_CONF"] = self._old_conf
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> LocalSlurm:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
