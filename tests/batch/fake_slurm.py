"""A stand-in for ``sbatch`` and ``squeue`` that runs a job array's elements at once, in
turn, on this machine: the array path's plumbing (chunk files, records, order, resume) is
tested where no Slurm is installed. ``install(folder)`` writes the two programs into
``folder``; put it first on ``PATH``. Every ``sbatch`` call is appended, as a JSON list of
its arguments, to ``folder/sbatch.log``."""

from __future__ import annotations

import os
import sys

SBATCH = r'''#!{python}
import json, os, re, subprocess, sys
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "sbatch.log"), "a") as fh:
    fh.write(json.dumps(sys.argv[1:]) + "\n")
opts = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
m = re.fullmatch(r"0-(\d+)(?:%(\d+))?", opts["array"])
job = str(4000 + sum(1 for _ in open(os.path.join(here, "sbatch.log"))))
for k in range(int(m.group(1)) + 1):
    err = opts["error"].replace("%A", job).replace("%a", str(k))
    out = opts["output"].replace("%A", job).replace("%a", str(k))
    env = dict(os.environ, SLURM_ARRAY_TASK_ID=str(k), SLURM_ARRAY_JOB_ID=job)
    with open(out, "w") as o, open(err, "w") as e:
        subprocess.run(["/bin/sh", "-c", opts["wrap"]], stdout=o, stderr=e, env=env,
                       cwd=opts.get("chdir"), timeout=300)
print(job)
'''

SQUEUE = "#!/bin/sh\nexit 0\n"


def install(folder: str) -> str:
    """Write ``sbatch`` and ``squeue`` into ``folder``; return the folder."""
    for name, text in (("sbatch", SBATCH.replace("{python}", sys.executable)),
                       ("squeue", SQUEUE)):  # fmt: skip
        path = os.path.join(folder, name)
        with open(path, "w") as fh:
            fh.write(text)
        os.chmod(path, 0o755)
    return folder
