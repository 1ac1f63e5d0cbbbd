"""Build the compiled core of coalloc.

Only ``ext_modules`` lives here; every other piece of metadata is in pyproject.toml.
Cython kernels come from ``src/_core/cython/*.pyx`` and C++ kernels bound with pybind11
from ``src/_core/cpp/*.cpp``; each becomes ``coalloc.<file stem>`` inside the package.

Set ``COALLOC_DEBUG=1`` to turn Cython's bounds/wraparound/initialisation checks back on
and build without optimisation (for debugging a crash in a kernel).
"""

import glob
import os

from Cython.Build import cythonize
from pybind11.setup_helpers import Pybind11Extension
from setuptools import Extension, setup

DEBUG = os.environ.get("COALLOC_DEBUG", "") == "1"
OPT = ["-O0", "-g"] if DEBUG else ["-O3"]
INCLUDE = ["src/_core/include"]

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


def _sources(pattern: str) -> list:
    return [p for p in sorted(glob.glob(pattern)) if not _ONLY or _stem(p) in _ONLY]


cython_ext = [
    Extension(
        f"coalloc.{_stem(path)}",
        [path],
        language="c++",
        include_dirs=INCLUDE,
        extra_compile_args=OPT + ["-std=c++17"],
    )
    for path in _sources("src/_core/cython/*.pyx")
]

cpp_ext = [
    Pybind11Extension(
        f"coalloc.{_stem(path)}",
        [path],
        include_dirs=INCLUDE,
        extra_compile_args=OPT,
        cxx_std=17,
    )
    for path in _sources("src/_core/cpp/*.cpp")
]

setup(
    ext_modules=cythonize(
        cython_ext, compiler_directives=directives, include_path=["src/_core/cython"]
    )
    + cpp_ext
)
