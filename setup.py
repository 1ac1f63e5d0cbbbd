"""Build the compiled core of coalloc.

Only ``ext_modules`` lives here; every other piece of metadata is in pyproject.toml.
Compiled sources are organised by family: ``src/_core/<family>/*.pyx`` (Cython) and
``src/_core/<family>/*.cpp`` (C++ bound with pybind11) each become
``coalloc.<family>.<file stem>``, built into that family's subpackage. Headers live in
``src/_core/include/coalloc/common/`` (C++ every family may use) and
``src/_core/include/coalloc/<family>/``.

Set ``COALLOC_DEBUG=1`` to turn Cython's bounds/wraparound/initialisation checks back on
and build without optimisation (for debugging a crash in a kernel).
"""

import glob
import os

from Cython.Build import cythonize
from pybind11.setup_helpers import Pybind11Extension
from setuptools import Extension, setup

# COALLOC_SANITIZE=1: AddressSanitizer + UndefinedBehaviorSanitizer build with Cython's checks
# on (ci/sanitize.sh runs the kernel parity tests against it).
SANITIZE = os.environ.get("COALLOC_SANITIZE", "") == "1"
DEBUG = os.environ.get("COALLOC_DEBUG", "") == "1" or SANITIZE
SAN_FLAGS = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer",
             "-fno-sanitize-recover=undefined"] if SANITIZE else []  # fmt: skip
OPT = (["-O1", "-g"] if SANITIZE else ["-O0", "-g"] if DEBUG else ["-O3"]) + SAN_FLAGS
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


cython_ext = [
    Extension(
        f"coalloc.{family}.{_stem(path)}",
        [path],
        language="c++",
        include_dirs=INCLUDE + [f"src/_core/{family}"],
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


setup(
    cmdclass={"build_py": build_py_with_docs},
    ext_modules=cythonize(
        cython_ext,
        compiler_directives=directives,
        include_path=[f"src/_core/{family}" for family in FAMILIES],
        build_dir="build/cython",  # generated C++ stays out of the source tree
    )
    + cpp_ext
)
