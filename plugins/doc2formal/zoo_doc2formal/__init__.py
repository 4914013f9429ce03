"""doc2formal (Richardson & Kuhn 2017) for zoo: learned text-to-signature correspondences (Model 1 + a reranker)."""

__version__ = "0.1.0"
