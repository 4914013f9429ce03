"""zoo hooks for deltanet-fwp: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Linear Transformers Are Secretly Fast Weight Programmers", year=2021, arxiv="2102.11174",
              url="https://arxiv.org/abs/2102.11174", code="https://github.com/IDSIA/lmtool-fwp", catalog=62)

CLAIM = ("The delta-rule fast-weight update overcomes the capacity limit of the purely additive update of linear "
         "attention on associative recall: with 16 DPFP features per head, a delta-rule recall model answers more "
         "queries than the same model with the additive update once the number of stored pairs exceeds the feature "
         "dimension (24 and 32 pairs; softmax attention reported at the same parameter count)")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="fwp_delta_lm", builder="zoo_deltanet_fwp.model:fwp_delta_lm", task="algorithmic_seq",
                  paper=PAPER,
                  description="delta-rule fast weight programmer (W += beta (v - W phi(k)) phi(k)^T, beta = "
                              "sigmoid(w x)) with sum-normalised DPFP features, as a recall LM with a causal token "
                              "shift; CPU default dim 64, 1 head, DPFP-2 on 4-d keys (16 features); preset='paper' "
                              "for dim 128, 8 heads, DPFP-3"),
        ModelSpec(name="fwp_additive_lm", builder="zoo_deltanet_fwp.model:fwp_additive_lm", task="algorithmic_seq",
                  paper=PAPER,
                  description="the paper's baseline: the same model with the additive update W += v phi(k)^T "
                              "(causal linear attention with DPFP features, sum-normalised, no denominator)"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="deltanet-fwp", claim=CLAIM, reproduce="zoo_deltanet_fwp.reproduce:REPRODUCTION",
                      task="algorithmic_seq", paper=PAPER)]
