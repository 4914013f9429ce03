"""zoo task distribution: embedding_quality: word and sentence embeddings on real text (Wikipedia leads,
gensim's Lee corpus and word benchmarks) and on planted corpora (morphology, analogy, polysemy, SVO).

Torch-free on import: the task code lives in its modules, imported when a task runs.
"""

__version__ = "0.1.0"
