"""node2vec (Grover & Leskovec, KDD 2016) for zoo: biased second-order walks + skip-gram."""

__version__ = "0.1.0"
