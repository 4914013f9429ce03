"""ViKANformer: Vision Transformers whose feed-forward layers are KANs (B-spline, efficient, RBF, sine, Fourier)."""

__version__ = "0.1.0"
