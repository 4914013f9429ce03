"""Looped Transformers as Programmable Computers (Giannou et al. 2023) for zoo: a looped transformer encoder whose
weights are constructed, not trained, executing one SUBLEQ instruction per pass over a punchcard of scratchpad and
memory columns, checked against the algorithmic_seq task's SUBLEQ interpreter."""

__version__ = "0.1.0"
