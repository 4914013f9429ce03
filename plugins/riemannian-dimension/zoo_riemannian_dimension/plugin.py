"""zoo hooks for riemannian-dimension: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, Paper, ToolSpec, hookimpl

PAPER = Paper(title="Pointwise Generalization in Deep Neural Networks", year=2026, arxiv="2605.18598",
              url="https://arxiv.org/abs/2605.18598", catalog=40)

CLAIM = ("The pointwise Riemannian Dimension (from the eigenvalues of the learned features across layers) shows "
         "feature compression, decreases with over-parameterization and reflects the optimizer's implicit bias, and "
         "its bound is orders of magnitude tighter than size- and norm-based ones. Measured (3 seeds) on fully "
         "connected ReLU nets 64-w-w-10 trained on digits, w = 32..512, SGD and Adam: d_R at w = 512 <= d_R at "
         "w = 64 (both optimizers), and at w = 512 (SGD) the d_R bound is >= 10x tighter than the Frobenius-product "
         "norm bound and than the parameter-count bound")


@hookimpl
def zoo_tools() -> list[ToolSpec]:
    return [ToolSpec(name="riemannian-dimension", function="zoo_riemannian_dimension.tool:riemannian_tool",
                     paper=PAPER,
                     inputs="two or more layers in forward order, each (N >= 3, D_l) on the same N (training) inputs, "
                            "the network input first; layers= chooses and orders them; eps= the resolution relative "
                            "to the trace (1/N), form= ridge|hard, delta= (0.05); weights= (list of (out, in)), "
                            "biases= and margin= add the norm-based bound",
                     outputs="{n, eps, dim (d_R), params, dim_bound, size_bound, log10_size_over_dim, layers: {name: "
                             "{width, rank, compression, spectrum}}, layer_dims, [norm_bound, log10_norm_over_dim]}; "
                             "a spectra PNG with out_dir",
                     description="pointwise Riemannian Dimension d_R = sum_l (r_{l-1}+1) r_l from the layers' feature "
                                 "spectra (r_l: spectral effective dimension) and its generalization bound, beside "
                                 "the parameter-count and Frobenius-product norm bounds (a reconstruction: see "
                                 "zoo_riemannian_dimension.dimension)")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="riemannian-dimension", claim=CLAIM,
                      reproduce="zoo_riemannian_dimension.reproduce:REPRODUCTION", task=None, paper=PAPER)]
