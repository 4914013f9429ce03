"""MINO (Mesh-Informed Neural Operator) for zoo: a GNO/attention velocity for functional flow matching on any points."""

__version__ = "0.1.0"
