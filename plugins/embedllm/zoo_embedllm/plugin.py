"""zoo hooks for embedllm: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="EmbedLLM: Learning Compact Representations of Large Language Models", year=2024,
              arxiv="2410.02223", catalog=115)

CLAIM = ("Learned model embeddings route better than prior methods and encode model traits (e.g. coding "
         "specialisation) without being trained on them; small-scale adaptation on tabular_ctr's matrix mode: routing "
         "accuracy above the best single model by at least 0.02 and above the kNN router by at least 0.01, and a "
         "linear probe reads the planted coding-specialist attribute from the embeddings at least 0.2 above chance")

_TASK = "tabular_ctr"


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="embedllm", builder="zoo_embedllm.model:embedllm", task=_TASK, paper=PAPER,
                  description="model-embedding table + noisy linear question encoder + linear decoder on their "
                              "product, trained by cross-entropy on correctness; route = argmax predicted logit"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="embedllm", claim=CLAIM, reproduce="zoo_embedllm.reproduce:REPRODUCTION", task=_TASK,
                      paper=PAPER)]
