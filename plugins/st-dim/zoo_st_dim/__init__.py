"""ST-DIM, Spatiotemporal Deep InfoMax (Anand et al. 2019) for zoo: InfoNCE between consecutive frames' global and
local features, probed per state variable on ssl_probe's Pong mode."""

__version__ = "0.1.0"
