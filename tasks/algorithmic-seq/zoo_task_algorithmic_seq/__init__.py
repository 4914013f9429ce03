"""zoo task algorithmic_seq: associative recall, sorting, convex hull, TSP and SUBLEQ programs."""

__version__ = "0.1.0"
