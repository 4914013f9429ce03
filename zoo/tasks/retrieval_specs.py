"""Specs of the retrieval family's tasks (torch-free; each task's code is its own module in zoo/tasks/)."""
from ..specs import TaskSpec

TASKS = [
    TaskSpec(
        name="retrieval",
        contract="model(x: (B, L, d=64) token vectors, mask: (B, L) bool) -> document encoding: (B, D) "
                 "| {'vectors': (B, L', d'), 'mask': (B, L')}; retrieval via build_index(docs)/search(index, "
                 "queries, k) or encode_docs/encode_queries[/score] (see zoo.tasks.retrieval)",
        evaluate="zoo.tasks.retrieval:evaluate",
        example_input="zoo.tasks.retrieval:example_input",
        check_output="zoo.tasks.retrieval:check_output",
        baselines=("exact-dense", "exact-maxsim", "token-knn-union"),
        description="single- and multi-vector retrieval on synthetic corpora (planted relevance, negation "
                    "queries) and ~10k Wikipedia leads encoded by all-MiniLM-L6-v2; recall@k, nDCG@10, MRR, "
                    "candidates, latency, QPS, index bytes",
    ),
]
