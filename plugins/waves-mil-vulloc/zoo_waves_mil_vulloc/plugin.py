"""zoo hooks for waves-mil-vulloc: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Weakly Supervised Vulnerability Localization via Multiple Instance Learning", year=2025,
              arxiv="2509.11312", catalog=1)
TASK = "code_text"

CLAIM = ("Trained on function labels only, WAVES (statement pseudo labels derived from the function label by the "
         "multiple-instance rule, training the statement scorer whose max/mean-pooled scores give the function's "
         "prediction) detects vulnerable functions comparably to attention MIL (function F1 no more than 0.05 below "
         "the task's attn_mil at matched parameters and equal steps) and localises the vulnerable statement better "
         "(higher top-1 and top-3 statement accuracy on the vulnerable test functions)")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="waves_mil", builder="zoo_waves_mil_vulloc.model:waves_mil", task=TASK, paper=PAPER,
                  description="WAVES: GRU statement encoder, statement scorer, function logit = 0.5 max + 0.5 mean "
                              "of statement logits; from step 100, statement pseudo labels (all statements of safe "
                              "functions 0, the top-scoring statement of vulnerable ones 1) train the scorer; no "
                              "statement labels; CPU default 32 units, preset='paper' 128 (the paper's rule details "
                              "beyond the abstract are ours: see the README)"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="waves-mil-vulloc", claim=CLAIM, reproduce="zoo_waves_mil_vulloc.reproduce:REPRODUCTION",
                      task=TASK, paper=PAPER)]
