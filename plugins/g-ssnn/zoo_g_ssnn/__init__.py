"""G-SSNN (Whitehouse 2023, "Symbolic Synthesis of Neural Networks") for zoo: the exact G-SSNN module over a given
program-built graph. The program synthesis that chooses the graphs, and so the paper's claim, is not included."""

__version__ = "0.1.0"
