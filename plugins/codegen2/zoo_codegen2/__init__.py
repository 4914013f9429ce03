"""CodeGen2 (Nijkamp et al. 2023) for zoo: a parallel-block causal decoder trained with causal LM + span corruption."""

__version__ = "0.1.0"
