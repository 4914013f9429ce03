"""zoo plugin: SimSiam (Chen & He 2021), simple Siamese self-supervised learning with a stop-gradient, on the
``ssl_probe`` task. Torch-free on import: the method lives in ``model.py``."""

__version__ = "0.1.0"
