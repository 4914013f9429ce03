"""zoo task distribution: graph_embed: node embeddings on real graphs (WordNet nouns, karate club...),
link prediction and reconstruction.

Torch-free on import: the task code lives in its modules, imported when a task runs.
"""

__version__ = "0.1.0"
