"""word2vec (Mikolov et al. 2013) for zoo: CBOW and skip-gram with negative sampling, trained on real text."""

__version__ = "0.1.0"
