"""zoo hooks for Signed MaxSim: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Quantifying and Expanding the Theoretical Capacity of Late-Interaction Retrieval Models",
              year=2026, arxiv="2607.05803", catalog=74)

CLAIM = ("MaxSim exactly replicates inner products of non-negative k-sparse vectors with O(k) token vectors, "
         "Signed MaxSim those of any real k-sparse vectors; on negation queries a tiny late-interaction model "
         "scored by Signed MaxSim beats the same model scored by MaxSim, trained identically, in nDCG@10 on the "
         "vocabulary-shift and negation-only splits")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="signed_maxsim_colbert", builder="zoo_signed_maxsim.model:signed_colbert", task="retrieval",
                  paper=PAPER,
                  description="tiny ColBERT-style encoder (1 transformer layer, d=64, 32-d token vectors) whose "
                              "queries carry a positive and a negative vector set; score = MaxSim(Q+, D) - "
                              "MaxSim(Q-, D); trained on the task's negation corpus"),
        ModelSpec(name="maxsim_colbert", builder="zoo_signed_maxsim.model:maxsim_colbert", task="retrieval",
                  paper=PAPER,
                  description="the same tiny ColBERT-style encoder scored by plain MaxSim (the paper's baseline)"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="signed-maxsim", claim=CLAIM, reproduce="zoo_signed_maxsim.reproduce:REPRODUCTION",
                      task="retrieval", paper=PAPER)]
