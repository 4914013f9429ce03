"""ELMo (Peters et al. 2018) for zoo: a char-CNN biLSTM language model whose layers a task mixes by learned weights."""

__version__ = "0.1.0"
