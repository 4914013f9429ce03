"""Ideal words (Trager et al. 2023) for zoo: centred-mean decompositions u0 + u_a + u_o of attribute x object
embedding tables, and their uses for unseen-pair classification, debiasing and retrieval."""

__version__ = "0.1.0"
