"""zoo hooks for kernel-analysis: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, Paper, ToolSpec, hookimpl

PAPER = Paper(title="Kernel Analysis of Deep Networks", year=2011,
              url="https://jmlr.org/papers/v12/montavon11a.html", catalog=58)

CLAIM = ("Better representations give lower kernel-analysis curves: on held-out digits, a trained CNN's features "
         "need fewer leading RBF kernel principal components for a linear classifier (a smaller area under the "
         "leave-one-out error vs d curve) than the raw pixels and than the same CNN untrained")


@hookimpl
def zoo_tools() -> list[ToolSpec]:
    return [ToolSpec(name="kernel_analysis", function="zoo_kernel_analysis.tool:kernel_analysis", paper=PAPER,
                     inputs="labels (N,) with >= 2 classes and the layers to analyse (N, D) (all by default, layers= "
                            "to choose); N >= 10, d_max <= N/2",
                     outputs="per layer: curve (leave-one-out error, or squared loss with loss='squared') at d = "
                             "1..d_max, the kernel width chosen per d, area (mean over log d); best layer; a PNG "
                             "with out_dir",
                     description="kernel analysis (Montavon et al. 2011): RBF kernel PCA, a linear classifier on the "
                                 "top-d components, the loss-vs-d curve and its area")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="kernel-analysis", claim=CLAIM, reproduce="zoo_kernel_analysis.reproduce:REPRODUCTION",
                      task="digits_classify", paper=PAPER)]
