"""Cross-modal task vectors (Luo, Darrell & Bar 2024) for zoo: task vectors of a tiny digit VLM derived from text
exemplars, image exemplars or an instruction, cross-modal patching, exemplar + instruction ensembling, a logit-lens
phase read-out, and the ``task-vector-similarity`` analysis tool."""

__version__ = "0.1.0"
