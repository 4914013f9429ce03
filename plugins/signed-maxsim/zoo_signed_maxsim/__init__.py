"""MaxSim expressivity: exact sparse inner products by construction, and Signed MaxSim for negation."""

__version__ = "0.1.0"
