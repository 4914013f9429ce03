"""KANbeFair: a parameter- and FLOP-matched comparison of KAN, MLP and the B-spline MLP."""

__version__ = "0.1.0"
