"""Declares the compiled extensions; metadata and settings live in pyproject.toml."""

import os

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
CSRC = os.path.join("csrc")

extensions = [
    Extension(
        "linkdyn._kernels",
        sources=["src/linkdyn/_kernels.pyx"],
        include_dirs=[CSRC, numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    ),
]

setup(ext_modules=cythonize(extensions, language_level=3))
