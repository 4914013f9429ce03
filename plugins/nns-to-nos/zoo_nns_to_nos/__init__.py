"""NNs to NOs: neural networks converted to discretisation-agnostic neural operators, and the FNO."""

__version__ = "0.1.0"
