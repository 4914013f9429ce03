"""zoo hooks for the Mittag-Leffler gated activation (specs only, no torch)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Unification of popular artificial neural network activation functions", year=2023,
              arxiv="2302.11007", catalog=86)
TASK = "digits_classify"
CLAIM = ("One compact Mittag-Leffler gated form interpolates between common activations, mitigates vanishing "
         "gradients and is an affordable alternative to the built-ins (small scale: (a) special parameters give SiLU, "
         "the sigmoid-GELU, x/2 and ReLU (limit) to < 1e-4 (ReLU: < 0.01); (b) the learnable form in the reference "
         "DigitsMLP reaches a test accuracy no more than 0.01 below the best of ReLU/GELU/SiLU/tanh (5 seeds); (c) in a "
         "10-layer plain MLP at initialisation its first-to-last-layer gradient-norm ratio is closer to 1 (in log) "
         "than tanh's and sigmoid's; time per step vs ReLU is reported)")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [ModelSpec(
        name="mittag_leffler_mlp", builder="zoo_mittag_leffler_act.model:mittag_leffler_mlp", task=TASK, paper=PAPER,
        description="DigitsMLP (2 x 128, LayerNorm) with the Mittag-Leffler gated activation x / (1 + E_{a,b}(-c x)) "
                    "per hidden layer; learnable a in [0.3, 1], b >= a, c; init a = b = c = 1 (SiLU)")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="mittag-leffler-act", claim=CLAIM, reproduce="zoo_mittag_leffler_act.reproduce:REPRODUCTION",
                      task=TASK, paper=PAPER, budget_s=180.0)]
