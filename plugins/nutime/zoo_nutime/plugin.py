"""zoo hooks for nutime: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="NuTime: Numerically Multi-Scaled Embedding for Large-Scale Time-Series Pretraining", year=2024,
              arxiv="2310.07402", code="https://github.com/chenguolin/NuTime", catalog=118)
TASK = "ssl_probe"

CLAIM = ("Embedding each window's mean and standard deviation with the numerically multi-scaled embedding (NME) lets "
         "a window-token transformer pretrained by BYOL take raw series of any numerical scale: on series whose "
         "amplitudes and offsets span 1e-3 to 1e3, its linear-probe accuracy beats the same model with a plain "
         "linear scalar embedding at equal steps")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="nutime", builder="zoo_nutime.model:nutime", task=TASK, paper=PAPER,
                  description="NuTime: windows of 16 -> (normalised shape, mean, std) tokens, NME of mean and std "
                              "(sum over scales 10^k of alpha_k(x) LN(x w_k + 10^k b_k)), class token transformer, "
                              "BYOL pretraining; scalar_embed='linear' for the plain embedding; CPU default d 64, "
                              "2 layers, 9 scales; preset='paper' for d 128, 6 layers, 5 scales"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="nutime", claim=CLAIM, reproduce="zoo_nutime.reproduce:REPRODUCTION",
                      task=TASK, paper=PAPER)]
