"""Declares the compiled extensions; metadata and settings live in pyproject.toml.

SuiteSparse (KLU) is found in the usual places, or where SUITESPARSE_INCLUDE_DIR and
SUITESPARSE_LIBRARY_DIR point (the same variables scikit-sparse reads)."""

import os
import sys

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup


def suitesparse_dirs():
    env = os.environ
    include = [env["SUITESPARSE_INCLUDE_DIR"]] if "SUITESPARSE_INCLUDE_DIR" in env else []
    lib = [env["SUITESPARSE_LIBRARY_DIR"]] if "SUITESPARSE_LIBRARY_DIR" in env else []
    for prefix in filter(None, (os.environ.get("CONDA_PREFIX"), sys.prefix, "/usr/local",
                                "/opt/homebrew", "/usr")):
        if os.path.exists(os.path.join(prefix, "include", "suitesparse", "klu.h")):
            include.append(os.path.join(prefix, "include", "suitesparse"))
            lib.append(os.path.join(prefix, "lib"))
    return include, lib


ss_include, ss_lib = suitesparse_dirs()

extensions = [
    Extension(
        "linkdyn._kernels",
        sources=["src/linkdyn/_kernels.pyx", "csrc/ld_kernels.c", "csrc/ld_angles.c",
                 "csrc/ld_cams.c",
                 "csrc/ld_forces.c",
                 "csrc/ld_forces3.c"],
        include_dirs=["csrc", "src/linkdyn", numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    ),
    Extension(
        "linkdyn._bdf",
        sources=["src/linkdyn/_bdf.pyx", "csrc/ld_run.c", "csrc/ld_bdf.c", "csrc/ld_rk.c",
                 "csrc/ld_sens.c", "csrc/ld_schur.c", "csrc/ld_schur_gen.c", "csrc/ld_linear.c",
                 "csrc/ld_control.c"],
        include_dirs=["csrc", "src/linkdyn", numpy.get_include()] + ss_include,
        library_dirs=ss_lib,
        libraries=["klu", "ldl", "amd"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    ),
    Extension(
        "linkdyn._lcp",
        sources=["src/linkdyn/_lcp.pyx", "csrc/ld_lcp.c"],
        include_dirs=["csrc", numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    ),
    Extension(
        "linkdyn._kinematics",
        sources=["src/linkdyn/_kinematics.pyx"],
        include_dirs=["csrc", "src/linkdyn", numpy.get_include()] + ss_include,
        library_dirs=ss_lib,
        libraries=["klu"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    ),
]

setup(ext_modules=cythonize(extensions, language_level=3))
