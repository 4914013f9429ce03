"""zoo hooks for doc2formal: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Learning Semantic Correspondences in Technical Documentation", year=2017, arxiv="1705.04815",
              catalog=90)

CLAIM = ("Correspondences learned from the documentation's own (description, signature) pairs beat lexical-overlap "
         "ranking: on the code_text doc2sig split (stdlib docstring first sentences -> signatures, every test "
         "description ranking all test signatures) an IBM Model 1 lexical translation model estimated by EM plus a "
         "discriminative reranker has higher acc@1 and MRR than the task's BM25 and TF-IDF bag-of-words baselines")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [ModelSpec(
        name="doc2formal", builder="zoo_doc2formal.model:doc2formal", task="code_text", paper=PAPER,
        defaults={"preset": "cpu"},
        description="text -> signature ranker: IBM Model 1 word->identifier-token translation tables (EM, both "
                    "directions) and a log-linear reranker over alignment and overlap features trained with a "
                    "listwise softmax loss; fit(train_pairs, steps=, seed=) then rank(text, candidates)")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="doc2formal", claim=CLAIM, reproduce="zoo_doc2formal.reproduce:REPRODUCTION",
                      task="code_text", paper=PAPER, budget_s=20.0)]
