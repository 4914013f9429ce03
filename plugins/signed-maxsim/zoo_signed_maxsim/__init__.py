"""MaxSim expressivity: exact sparse inner products by construction, and Signed MaxSim for negation."""
