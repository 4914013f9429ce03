"""AdaFNN (Yao, Mueller and Wang 2021) for zoo: a functional network with a learned Basis Layer."""

__version__ = "0.1.0"
