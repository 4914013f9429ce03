"""zoo hooks for the activation catalogue: one ``act_<name>_mlp`` model per activation (specs only, no torch)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

from .catalog import ENTRIES, SURVEY

PAPER = Paper(title=SURVEY[0], year=SURVEY[1], arxiv=SURVEY[2], catalog=82)
TASK = "digits_classify"
CLAIM = ("The catalogue's activations train in the reference MLP; report ranking (digits_classify, DigitsMLP with "
         "LayerNorm, fixed steps, 3 seeds, next to the ReLU and GELU baselines; one check per activation: test "
         "accuracy >= 0.15, more than 3 binomial standard errors above chance, 0.10, on 450 images)")


def model_name(activation: str) -> str:
    """``act_<activation>_mlp``, the registered model of one activation."""
    return f"act_{activation}_mlp"


@hookimpl
def zoo_models() -> list[ModelSpec]:
    specs = []
    for name, e in ENTRIES.items():
        learn = f"; learnable: {e.learnable}" if e.learnable else ""
        specs.append(ModelSpec(
            name=model_name(name), builder="zoo_activation_catalog.model:act_mlp", task=TASK, paper=PAPER,
            defaults={"activation": name},
            description=f"DigitsMLP (LayerNorm) with {e.cls}: {e.formula}{learn}. Reference: {e.cite}"))
    return specs


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="activation-catalog", claim=CLAIM, reproduce="zoo_activation_catalog.reproduce:REPRODUCTION",
                      task=TASK, paper=PAPER, budget_s=180.0)]
