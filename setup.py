"""Build the compiled core of coalloc.

Only ``ext_modules`` lives here; every other piece of metadata is in pyproject.toml.
Compiled sources are organised by family: ``src/_core/<family>/*.pyx`` (Cython) and
``src/_core/<family>/*.cpp`` (C++ bound with pybind11) each become
``coalloc.<family>.<file stem>``, built into that family's subpackage. Headers live in
``src/_core/include/coalloc/common/`` (C++ every family may use) and
``src/_core/include/coalloc/<family>/``.

Set ``COALLOC_DEBUG=1`` to turn Cython's bounds/wraparound/initialisation checks back on
and build without optimisation (for debugging a crash in a kernel).

The default build is ``-O3`` for the baseline of the target (x86-64: SSE2), so a wheel runs on
any machine of its tag; the AVX paths of the step-1 kernels carry ``target`` attributes and are
chosen at run time. ``COALLOC_NATIVE=1`` adds ``-march=native`` (a build for this CPU only,
never for a wheel). The extension modules are compiled in parallel, one per CPU the process may
use (``COALLOC_BUILD_JOBS=N`` or ``build_ext -j N`` to change), the largest first; an unchanged
module is not recompiled when ``build/`` is kept (an in-tree ``pip install .`` keeps it).
"""

import glob
import os

from Cython.Build import cythonize
from pybind11.setup_helpers import Pybind11Extension
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# COALLOC_SANITIZE=1: AddressSanitizer + UndefinedBehaviorSanitizer build with Cython's checks
# on (ci/sanitize.sh runs the kernel parity tests against it).
SANITIZE = os.environ.get("COALLOC_SANITIZE", "") == "1"
DEBUG = os.environ.get("COALLOC_DEBUG", "") == "1" or SANITIZE
SAN_FLAGS = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer",
             "-fno-sanitize-recover=undefined"] if SANITIZE else []  # fmt: skip
NATIVE = os.environ.get("COALLOC_NATIVE", "") == "1"  # -march=native: this CPU only, no wheel
OPT = (["-O1", "-g"] if SANITIZE else ["-O0", "-g"] if DEBUG else ["-O3"]) + SAN_FLAGS
OPT += ["-march=native"] if NATIVE else []
INCLUDE = ["src/_core/include"]
FAMILIES = sorted(
    os.path.basename(d) for d in glob.glob("src/_core/*") if os.path.isdir(d) and d[-7:] != "include"
)

directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": not DEBUG,
    "embedsignature": True,
}


def _stem(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


# Developer convenience: COALLOC_BUILD_ONLY=_bmatching,_violations builds just those modules.
_ONLY = {s for s in os.environ.get("COALLOC_BUILD_ONLY", "").split(",") if s}


def _sources(family: str, ext: str) -> list:
    pattern = f"src/_core/{family}/*.{ext}"
    return [p for p in sorted(glob.glob(pattern)) if not _ONLY or _stem(p) in _ONLY]


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class ParallelBuildExt(build_ext):
    """``build_ext`` that compiles the modules concurrently, the largest source first."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:  # neither -j nor --parallel given
            jobs = os.environ.get("COALLOC_BUILD_JOBS", "")
            self.parallel = int(jobs) if jobs.isdigit() and int(jobs) > 0 else _cpus()
        if self.parallel == 1:
            self.parallel = None  # setuptools' serial path

    def build_extensions(self):
        def size(ext):
            return sum(os.path.getsize(s) for s in ext.sources if os.path.exists(s))

        self.extensions.sort(key=size, reverse=True)  # the longest compiles start first
        super().build_extensions()


# Every module is rebuilt when any header, or a shared Cython declaration beside it (the
# interrupt poll, the generator: include/coalloc/common/*.pxd), changes.
HEADERS = sorted(glob.glob("src/_core/include/**/*.h*", recursive=True)
                 + glob.glob("src/_core/include/**/*.pxd", recursive=True))  # fmt: skip


cython_ext = [
    Extension(
        f"coalloc.{family}.{_stem(path)}",
        [path],
        language="c++",
        include_dirs=INCLUDE + [f"src/_core/{family}"],
        depends=HEADERS + sorted(glob.glob(f"src/_core/{family}/*.pxd")),
        extra_compile_args=OPT + ["-std=c++17"],
        extra_link_args=SAN_FLAGS,
    )
    for family in FAMILIES
    for path in _sources(family, "pyx")
]

cpp_ext = [
    Pybind11Extension(
        f"coalloc.{family}.{_stem(path)}",
        [path],
        include_dirs=INCLUDE,
        depends=HEADERS,
        extra_compile_args=OPT,
        extra_link_args=SAN_FLAGS,
        cxx_std=17,
    )
    for family in FAMILIES
    for path in _sources(family, "cpp")
]

from setuptools.command.build_py import build_py  # noqa: E402


class build_py_with_docs(build_py):
    """Also copy the guides docs/*.md into coalloc/_docs/, for ``coalloc docs TOPIC``."""

    def run(self):
        super().run()
        guides = sorted(glob.glob("docs/*.md"))
        if not guides:
            raise RuntimeError("docs/*.md not found: the package would ship without its guides")
        target = os.path.join(self.build_lib, "coalloc", "_docs")
        self.mkpath(target)
        for path in guides:
            self.copy_file(path, os.path.join(target, os.path.basename(path)))


# Generated C++ per build mode: a debug or sanitizer build never reuses the optimised C++.
CYTHON_DIR = "build/cython-debug" if DEBUG else "build/cython"


def _translated(ext) -> bool:
    """The C++ that Cython made of this module is there and newer than the module's own
    sources (``.pyx``, the family's ``.pxd``, the headers), by this Cython version.

    Cython's own check also compares with its bundled ``.pxd`` files, which a fresh build
    environment installs anew each time, so every ``pip install`` translated and compiled the
    Cython modules again; the generated file is reused instead when nothing of ours changed.
    """
    import Cython

    cpp = os.path.join(CYTHON_DIR, os.path.splitext(ext.sources[0])[0] + ".cpp")
    if not os.path.exists(cpp):
        return False
    with open(cpp) as f:
        if f"Generated by Cython {Cython.__version__} " not in f.readline():
            return False
    newest = max(os.path.getmtime(p) for p in ext.sources + ext.depends)
    return os.path.getmtime(cpp) >= newest


def _reuse(ext):
    cpp = os.path.join(CYTHON_DIR, os.path.splitext(ext.sources[0])[0] + ".cpp")
    ext.sources = [cpp]
    return ext


_done = [_reuse(e) for e in cython_ext if _translated(e)]
_todo = [e for e in cython_ext if e not in _done]

setup(
    cmdclass={"build_ext": ParallelBuildExt, "build_py": build_py_with_docs},
    ext_modules=_done
    + cythonize(
        _todo,
        compiler_directives=directives,
        # src/_core/include: `from coalloc.common.interrupt cimport Poll` finds the shared .pxd
        include_path=INCLUDE + [f"src/_core/{family}" for family in FAMILIES],
        build_dir=CYTHON_DIR,  # generated C++ stays out of the source tree
        nthreads=_cpus() if len(_todo) > 1 else 0,
    )
    + cpp_ext
)
