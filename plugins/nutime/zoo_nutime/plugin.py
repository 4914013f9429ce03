"""zoo hooks for nutime: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

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
                              "2 layers, 9 scales; preset='paper' for d 128, 6 layers, 5 scales",
                  weights={"multiscale": WeightsSpec(
                      repo="zoo-models/nutime-multiscale",
                      snapshot="zoo_nutime:weights/nutime.multiscale",
                      files={"config.json": "87bc787c5682f6bf6f7347221653ced7562be61bd3a72c860c73032b2ab1b807",
                             "model.safetensors": "def24c9e64a844729491f8404f373264f9b6968217f8ee2e89b900930f5e1ebf"},
                      recipe="zoo_nutime.train:multiscale",
                      description="nutime pretrained by BYOL on ssl_probe's multi-scale raw series (amplitudes and "
                                  "offsets 1e-3..1e3), seed 0 (zoo_nutime.train:multiscale, 300 steps)")}),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="nutime", claim=CLAIM, reproduce="zoo_nutime.reproduce:REPRODUCTION",
                      task=TASK, paper=PAPER)]
