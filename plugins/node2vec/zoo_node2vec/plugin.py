"""zoo hooks for node2vec: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="node2vec: Scalable Feature Learning for Networks", year=2016, arxiv="1607.00653",
              code="https://github.com/aditya-grover/node2vec", catalog=30)

CLAIM = ("node2vec with (p, q) chosen on validation edges predicts held-out links (Hadamard features + "
         "logistic regression, ROC-AUC) better than DeepWalk (p = q = 1), a spectral embedding and the "
         "common-neighbours / Jaccard / Adamic-Adar / preferential-attachment heuristics "
         "(graph_embed link protocol on the 500-word Wikipedia co-occurrence network of node2vec's §4, "
         "50% of edges held out; Les Miserables reported only)")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="node2vec", builder="zoo_node2vec.model:node2vec", task="graph_embed", paper=PAPER,
                  description="node2vec: alias-sampled second-order walks (return p, in-out q) + skip-gram "
                              "with negative sampling; d=128, r=10, l=80, k=10"),
        ModelSpec(name="deepwalk", builder="zoo_node2vec.model:node2vec", task="graph_embed", paper=PAPER,
                  defaults={"p": 1.0, "q": 1.0},
                  description="DeepWalk as node2vec's special case p = q = 1 (uniform walks), same skip-gram"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="node2vec", claim=CLAIM, reproduce="zoo_node2vec.reproduce:REPRODUCTION",
                      task="graph_embed", paper=PAPER)]
