"""zoo hooks for F-INR: CP, Tucker and TT F-INRs and the claim (specs only, no torch)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="F-INR: Functional Tensor Decomposition for Implicit Neural Representations", year=2026,
              arxiv="2503.21507", url="https://f-inr.github.io", catalog=9)
TASK = "image_fit"
CLAIM = ("On the 3-axis signal (16-frame 32x32 video), F-INR trains faster per step than a monolithic SIREN and "
         "ReLU+Fourier-features MLP of equal parameter count and reaches each one's PSNR in less wall time "
         "(equal or higher PSNR at equal wall-clock)")
_AXIS = "one SIREN per axis (3 layers of 64, first-layer w0 = pi n / 16 for n samples per axis, then 30)"
_BUILDER = "zoo_f_inr.model:f_inr"


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="finr_cp", builder=_BUILDER, task=TASK, paper=PAPER, defaults={"decomposition": "cp"},
                  description=f"F-INR, CP decomposition of rank 32: {_AXIS}, outputs summed over rank of products"),
        ModelSpec(name="finr_tucker", builder=_BUILDER, task=TASK, paper=PAPER,
                  defaults={"decomposition": "tucker", "rank": 16},
                  description=f"F-INR, Tucker decomposition with a learned 16^d core per channel: {_AXIS}"),
        ModelSpec(name="finr_tt", builder=_BUILDER, task=TASK, paper=PAPER,
                  defaults={"decomposition": "tt", "rank": 16, "hidden": 32},
                  description="F-INR, tensor-train decomposition of rank 16: one SIREN per axis (3 layers of 32) "
                              "giving the 1 x r, r x r, ..., r x 1 cores",
                  weights={"video": WeightsSpec(
                      repo="zoo-models/finr-tt-video",
                      snapshot="zoo_f_inr:weights/finr_tt.video",
                      files={"config.json": "87325a54e49ccff737b1ca35c567520e4d2fdd659f0c2a356bdc2430aa39a022",
                             "model.safetensors": "a22e3419c3c8ba0f49b1db48259f32c82d78597deb0913d58280de04cddd4594"},
                      recipe="zoo_f_inr.train:video",
                      description="finr_tt (in_features=3, out_features=3) fitted to the 16-frame 32x32 astronaut "
                                  "video (image_fit.make_video_signal, resolution (16, 32, 32), grid mode, Adam 1e-3 "
                                  "decaying to 1e-4, 3000 steps, lowest-loss parameters kept, seed 0)")}),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="f-inr", claim=CLAIM, reproduce="zoo_f_inr.reproduce:REPRODUCTION", task=TASK,
                      paper=PAPER, budget_s=180.0)]
