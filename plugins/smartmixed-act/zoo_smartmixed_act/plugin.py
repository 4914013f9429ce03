"""zoo hooks for SmartMixed (specs only, no torch)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="SmartMixed: A Two-Phase Training Strategy for Adaptive Activation Function Learning in Neural "
                    "Networks", year=2025, arxiv="2510.22450", code="https://github.com/omidvaramin/SmartMixed",
              catalog=91)
TASK = "digits_classify"
CLAIM = ("Neurons in different layers prefer different activation functions, and the frozen network stays "
         "efficient (small scale: DigitsMLP of depth 2, 3 and 4 on digits_classify, 3 seeds, selection for half the "
         "steps then frozen: (a) per depth, a chi-square test rejects equal per-layer choice distributions at "
         "p <= 0.01 (each seed's choices); (b) at depth 4 the frozen network's inference takes at most 1.5x the time of "
         "a single-activation MLP with the function its neurons chose most; accuracy vs a ReLU-only MLP of the same "
         "depth is reported)")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [ModelSpec(
        name="smartmixed_mlp", builder="zoo_smartmixed_act.model:smartmixed_mlp", task=TASK, paper=PAPER,
        description="DigitsMLP (128 units, LayerNorm) whose hidden neurons each select an activation from {ReLU, "
                    "Sigmoid, Tanh, LeakyReLU, ELU, SELU} by straight-through Gumbel-softmax (temperature 0.5); "
                    "zoo_smartmixed_act.model.freeze(model) fixes the choices (phase 2), which are saved with the "
                    "weights")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="smartmixed-act", claim=CLAIM, reproduce="zoo_smartmixed_act.reproduce:REPRODUCTION",
                      task=TASK, paper=PAPER, budget_s=180.0)]
