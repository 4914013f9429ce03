"""zoo hooks for stl-kernel-embed: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Distilling Formal Logic into Neural Spaces: A Kernel Alignment Approach for Signal Temporal Logic",
              year=2026, arxiv="2603.05198", catalog=95)

CLAIM = ("A Transformer encoder distilled from the STL robustness kernel keeps the kernel's semantic similarity "
         "(Spearman with the kernel on held-out formulae) and predicts robustness (R^2) and satisfaction (accuracy) "
         "on held-out trajectories by a linear readout better than a bag-of-tokens embedding and the same "
         "Transformer untrained, while encoding a formula faster than the symbolic kernel embedding it mimics")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [ModelSpec(name="stl_kernel_embed", builder="zoo_stl_kernel_embed.model:stl_kernel_embed", task="stl_logic",
                      paper=PAPER,
                      description="Transformer encoder over prefix STL tokens, trained teacher-student to match the "
                                  "normalised STL robustness kernel with a kernel-weighted geometric alignment loss; "
                                  "CPU default 2 layers, width 64, D=64; preset='paper' for a larger encoder")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="stl-kernel-embed", claim=CLAIM, reproduce="zoo_stl_kernel_embed.reproduce:REPRODUCTION",
                      task="stl_logic", paper=PAPER)]
