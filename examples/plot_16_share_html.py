"""
Sharing a result as one HTML file
=================================

``result.to_html(path)`` writes one self-contained HTML file, plotly's JavaScript included:
the mechanism animated frame by frame with a time slider and a play button, the markers'
paths, and the plotted series with a cursor at the frame's time. It opens in any browser,
without Python or a network, so it can be sent to someone who has neither. The same
figure is :func:`linkdyn.html.figure`, shown here; drag the slider or press play.
"""

import linkdyn

walker = linkdyn.simulate("walker_gait3", 2.0, rtol=1e-8, atol=1e-8, dt_out=0.01)
path = walker.to_html("walker_gait3.html", fps=25, markers=["hip"],
                      series={"hip height [m]": walker.marker("hip")[:, 1],
                              "leg angle [rad]": walker.body_angle("leg1")})
print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)")

# %%
# A still of the same run for a printed report (``result.snapshot``): the frame at
# t = 1 s with the hip's path up to it.

walker.snapshot(1.0, markers=["hip"])

# %%
# The same page's figure, embedded in this documentation.

fig = linkdyn.html.figure(walker, fps=25, markers=["hip"],
                          series={"hip height [m]": walker.marker("hip")[:, 1],
                                  "leg angle [rad]": walker.body_angle("leg1")})
fig

# %%
# From the command line, ``linkdyn animate walker_gait3 --html walker.html`` does the same
# (add ``--output walker.gif`` for an animation as well). A spatial model is drawn in a 3D
# scene that can be turned with the mouse:

top = linkdyn.simulate("heavy_top", 1.0, rtol=1e-9, atol=1e-9, dt_out=0.01)
linkdyn.html.figure(top, series={"energy [J]": top.energy - top.energy[0]})
