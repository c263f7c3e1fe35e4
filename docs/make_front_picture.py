"""Draw docs/_static/jansen.png, the picture on the README and the documentation's front
page: the Jansen linkage driven through a turn, with its foot's path.

Run from a checkout after changing how mechanisms are drawn:
``.venv/bin/python docs/make_front_picture.py``.
"""

from pathlib import Path

import numpy as np

import linkdyn

kin = linkdyn.kinematics("jansen_driven", np.linspace(0.0, 1.0, 361))
fig = kin.snapshot(1.0, markers=["foot"], dpi=80, size=(6.0, 4.0),
                   title="The Jansen linkage and its foot's path")
fig.savefig(Path(__file__).parent / "_static" / "jansen.png")
