"""zoo hooks for ViKANformer: one TinyViT per KAN expansion, and the claim (specs only, no torch)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="ViKANformer: Embedding Kolmogorov Arnold Networks in Vision Transformers for Pattern-Based "
                    "Learning", year=2025, arxiv="2503.01124", catalog=92)

TASK = "digits_classify"
CLAIM = ("SineKAN, Fast-KAN and vanilla (B-spline) KAN feed-forward layers reach over 97% accuracy, at extra "
         "training cost. Measured on digits_classify (TinyViT, 2 blocks of D=64, 400 steps, 3 seeds): the sine, "
         "fast and vanilla ViKANformers each reach test accuracy >= 0.97 and each takes more time per training "
         "step than the same ViT with its MLP (interleaved timing)")

_ABOUT = {
    "vanilla": "B-spline KAN (Liu et al. 2024: w_b silu + w_s spline, G=5, k=3, w_s=1, w_b Xavier)",
    "efficient": "efficient-kan's B-spline KAN (same edge function, Kaiming-uniform w_b and w_s)",
    "fast": "FastKAN (LayerNorm, 8 Gaussian RBFs on [-2, 2], plus Linear(silu(x)))",
    "sine": "SineKAN (8 learnable frequencies, fixed scaled phases, amplitudes per edge)",
    "fourier": "FourierKAN (cos/sin of k x, k = 1..5, per edge)",
}


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name=f"vikanformer_{variant}", builder="zoo_vikanformer.model:vikanformer", task=TASK, paper=PAPER,
                  defaults={"variant": variant},
                  description=f"TinyViT (patch 2, D=64, 4 blocks) whose MLPs are [64, h, 64] {about}; h matched so "
                              "the model has the parameter count of the MLP ViT baseline")
        for variant, about in _ABOUT.items()
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="vikanformer", claim=CLAIM, reproduce="zoo_vikanformer.reproduce:REPRODUCTION", task=TASK,
                      paper=PAPER, budget_s=180.0)]
