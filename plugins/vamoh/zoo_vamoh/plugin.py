"""zoo hooks for VaMoH: the model, its pretrained tag and its claim (specs only, no torch)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="Variational Mixture of HyperGenerators for Learning Distributions Over Functions", year=2023,
              arxiv="2302.06223", code="https://github.com/bkoyuncu/vamoh", catalog=21)
TASK = "signal_set_fit"
CLAIM = ("VaMoH does in-painting and conditional super-resolution as well as or better than prior approaches while "
         "being less computationally demanding: on held-out 8x8 digits with 50% of the pixels observed, its MSE on "
         "the missing pixels is <= 1.05 x the best of implicit GON and masked-trained autoencoders (same steps) at "
         "no more inference CPU than GON; x2 super-resolution measured next to bilinear upsampling")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [ModelSpec(
        name="vamoh_ff", builder="zoo_vamoh.model:vamoh_ff", task=TASK, paper=PAPER,
        description="VaMoH: PointConv set encoder q(z|D), planar-flow prior p(z), K=4 hypernetworks generating "
                    "Fourier-feature LeakyReLU INRs, per-coordinate categorical mixture pi(x, z); trained on the "
                    "ELBO with random pixel subsets; latent 16",
        weights={"digits": WeightsSpec(
            repo="zoo-models/vamoh-ff-digits",
            snapshot="zoo_vamoh:weights/vamoh_ff.digits",
            files={"config.json": "58f35bceaa2be92cc1a9e333a6c52ae477e1a5a719d813fb8d66c2993ab6bfdb",
                   "model.safetensors": "9829b1ad666bebeba1280d9d99dea2d559df290cc23be70e46d770afa75ab8c5"},
            recipe="zoo_vamoh.train:digits",
            description="vamoh_ff trained on 1024 8x8 digits (signal_set_fit, ELBO, 2000 Adam steps, seed 0)")})]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="vamoh", claim=CLAIM, reproduce="zoo_vamoh.reproduce:REPRODUCTION", task=TASK, paper=PAPER,
                      budget_s=180.0)]
