"""zoo hooks for the activation catalogue: one ``act_<name>_mlp`` model per activation (specs only, no torch)."""
from __future__ import annotations

from zoo import ModelSpec, Paper, hookimpl

from .catalog import ENTRIES, SURVEY

PAPER = Paper(title=SURVEY[0], year=SURVEY[1], arxiv=SURVEY[2], catalog=82)
TASK = "digits_classify"
# A survey makes no claim: no ``zoo_claims`` hook. Its ranking (``zoo_activation_catalog.ranking``) is a
# measurement reported in the README; a pass criterion for it ("every activation beats chance") could not fail.


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
