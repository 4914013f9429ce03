"""fastText (Bojanowski et al. 2017) for zoo: skip-gram over words written as bags of character n-grams."""

__version__ = "0.1.0"
