"""Sphinx configuration of linkdyn's documentation (built by ``bash ci/docs.sh``)."""

import os

import linkdyn

project = "linkdyn"
author = "The linkdyn developers"
copyright = "2026, the linkdyn developers"
version = release = linkdyn.__version__

extensions = [
    "myst_parser",              # pages in Markdown
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",   # the API reference, one page per public name
    "sphinx.ext.doctest",       # every Python block of the pages runs in `ci/docs.sh`
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "numpydoc",                 # the docstrings are in numpydoc's format
    "sphinx_gallery.gen_gallery",
]

myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.md5", "auto_examples/*.json"]

autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
autodoc_typehints = "none"          # numpydoc's parameter sections say the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

intersphinx_mapping = {
    "python": ("https://docs.python.org/3", None),
    "numpy": ("https://numpy.org/doc/stable", None),
    "scipy": ("https://docs.scipy.org/doc/scipy", None),
}
# The docs build offline (CI has no network but the package registries): intersphinx is
# used only when LINKDYN_DOCS_INTERSPHINX=1.
if os.environ.get("LINKDYN_DOCS_INTERSPHINX") != "1":
    intersphinx_mapping = {}

doctest_global_setup = """
import numpy as np
import linkdyn
from linkdyn import ModelBuilder, SpatialModelBuilder
"""

sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    "remove_config_comments": True,
    "matplotlib_animations": True,
    "download_all_examples": False,
    "show_memory": False,
}

# The gallery's interactive figures (linkdyn.html.figure) are plotly figures: the
# sphinx_gallery renderer writes each as a div, and plotly.js is served from _static (copied
# from the installed plotly package, so that the pages work offline).
try:
    import shutil

    import plotly
    import plotly.io

    plotly.io.renderers.default = "sphinx_gallery"
    _plotly_js = os.path.join(os.path.dirname(plotly.__file__), "package_data", "plotly.min.js")
    os.makedirs(os.path.join(os.path.dirname(__file__), "_static", "js"), exist_ok=True)
    shutil.copyfile(_plotly_js, os.path.join(os.path.dirname(__file__), "_static", "js",
                                             "plotly.min.js"))
    html_js_files = ["js/plotly.min.js"]
except ImportError:         # plotly is in the docs extra; without it the gallery says so
    pass

html_theme = "pydata_sphinx_theme"
html_title = f"linkdyn {release}"
html_static_path = ["_static"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
