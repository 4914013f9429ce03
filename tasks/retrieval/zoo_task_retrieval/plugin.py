"""zoo plugin of the task distribution: the specs of retrieval (torch-free; the code is in this package)."""
from __future__ import annotations

from zoo.hookspecs import hookimpl
from zoo.specs import TaskSpec

TASKS = [
    TaskSpec(
        name="retrieval",
        contract="model(x: (B, L, d=64) token vectors, mask: (B, L) bool) -> document encoding: (B, D) "
                 "| {'vectors': (B, L', d'), 'mask': (B, L')}; retrieval via build_index(docs)/search(index, "
                 "queries, k) or encode_docs/encode_queries[/score] (see zoo_task_retrieval.task)",
        evaluate="zoo_task_retrieval.task:evaluate",
        example_input="zoo_task_retrieval.task:example_input",
        check_output="zoo_task_retrieval.task:check_output",
        describe="zoo_task_retrieval.task:describe",
        baselines=("exact-dense", "exact-maxsim", "token-knn-union", "bm25"),
        description="single- and multi-vector retrieval on synthetic corpora (planted relevance, negation "
                    "queries) and ~10k Wikipedia leads encoded by all-MiniLM-L6-v2; recall@k, nDCG@10, MRR, "
                    "candidates, latency, QPS, index bytes; BM25 (bm25s) over the texts where there are texts",
    ),
]


@hookimpl
def zoo_tasks() -> list[TaskSpec]:
    return list(TASKS)
