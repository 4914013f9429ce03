"""zoo hooks for NNs-to-NOs: the OPERATOR family's FNOs, the converted U-Nets and the claim (specs only, no torch)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="Principled Approaches for Extending Neural Architectures to Function Spaces for Operator Learning",
              year=2025, arxiv="2506.10973", code="https://github.com/neuraloperator/NNs-to-NOs", catalog=67)
FNO_PAPER = Paper(title="Fourier Neural Operator for Parametric Partial Differential Equations", year=2021,
                  arxiv="2010.08895", code="https://github.com/neuraloperator/neuraloperator")

TASK = "operator_learn"
CLAIM = ("Architectures converted to neural operators with minimal changes are consistent across discretisations: "
         "on operator_learn Burgers (64 -> 128) and Darcy (32 -> 64), the FNO's and the recipe-converted U-Net's "
         "relative L2 error at 2x resolution is within a margin of their error at the training resolution, while the "
         "original U-Net's 2x error grows by more than that margin; the converted U-Net is within a stated margin of "
         "the original at the training resolution (same parameters)")


# shipped Hub-format snapshots (zoo_nns_to_nos/weights/NAME.TAG): sha256 of config.json and model.safetensors
SNAPSHOTS: dict[str, dict[str, str]] = {
    "fno_1d.burgers": {"config.json": "7784403d5db1a0fd3333a93cbbd6e8ead8c5bd12183fa28dd85344dfb379cab3",
                       "model.safetensors": "8d116f70c084d087b3f238e9b2bb6ca187fcd93f2e7d87664c9f06d94ec7c301"},
    "fno_2d.darcy": {"config.json": "50e2f001d5683a59f6ec587700693d76bdb86f3e68f2f380b1e73888d1266760",
                     "model.safetensors": "9adf2d5f31a01dad304acff03599c2159a9a70cfc6d5e866b78fa28fbf4bc7cb"},
}


def _weights(name: str, tag: str, problem: str, what: str) -> dict[str, WeightsSpec]:
    files = SNAPSHOTS.get(f"{name}.{tag}", {})
    return {tag: WeightsSpec(
        repo=f"zoo-models/{name.replace('_', '-')}-{tag}", recipe=f"zoo_nns_to_nos.train:{tag}", files=files,
        snapshot=f"zoo_nns_to_nos:weights/{name}.{tag}" if files else None,
        description=f"{name} ({what}) trained by zoo_nns_to_nos.train:{tag} (seed 0) on operator_learn {problem}'s "
                    "training split at its training resolution (task.evaluate's protocol and default steps); stored "
                    "in float16; inputs standardised by the card's input_mean / input_std")}


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="fno_1d", builder="zoo_nns_to_nos.model:fno_1d", task=TASK, paper=FNO_PAPER,
                  weights=_weights("fno_1d", "burgers", "burgers", "preset='paper': modes 16, width 64, 4 layers"),
                  description="1D Fourier neural operator (zoo_nn.operators.FNO1d): lifting, 4 Fourier layers "
                              "(spectral conv + pointwise W, GELU), projection; CPU default modes 16 / width 32, "
                              "preset='paper' modes 16 / width 64"),
        ModelSpec(name="fno_2d", builder="zoo_nns_to_nos.model:fno_2d", task=TASK, paper=FNO_PAPER,
                  weights=_weights("fno_2d", "darcy", "darcy", "CPU preset: modes 8, width 24, 4 layers"),
                  description="2D Fourier neural operator (zoo_nn.operators.FNO2d); CPU default modes 8 / width 24, "
                              "preset='paper' modes 12 / width 32"),
        ModelSpec(name="unet_operator_1d", builder="zoo_nns_to_nos.model:unet_operator_1d", task=TASK, paper=PAPER,
                  description="the task's 1D U-Net converted by the NNs-to-NOs recipe: convolution kernels fixed in "
                              "physical space (interpolated, quadrature-weighted on other grids), pooling and "
                              "upsampling replaced by Fourier resampling; same parameters as the U-Net"),
        ModelSpec(name="unet_operator_2d", builder="zoo_nns_to_nos.model:unet_operator_2d", task=TASK, paper=PAPER,
                  description="the task's 2D U-Net converted by the NNs-to-NOs recipe (see unet_operator_1d)"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="nns-to-nos", claim=CLAIM, reproduce="zoo_nns_to_nos.reproduce:REPRODUCTION", task=TASK,
                      paper=PAPER, budget_s=360.0)]
