"""zoo hooks for layer-update-geometry: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, Paper, ToolSpec, hookimpl

PAPER = Paper(title="On the Geometric Structure of Layer Updates in Deep Language Models", year=2026,
              arxiv="2604.02459", url="https://arxiv.org/abs/2604.02459", catalog=106)

CLAIM = ("A layer's update h_(l+1) - h_l is almost perfectly aligned with its tokenwise component f(h_l) (a function "
         "of each token alone), while the residual r = dh - f(h_l) is geometrically distinct (weaker alignment, larger "
         "angle, lower projection on the dominant tokenwise subspace); the per-token approximation error tracks the "
         "output perturbation (Spearman, often above 0.7 in the paper): a tiny GPT and a tiny S4D char-LM trained in "
         "code (ssm-vs-transformer-propagation's models)")


@hookimpl
def zoo_tools() -> list[ToolSpec]:
    return [ToolSpec(name="layer-update-geometry", function="zoo_layer_update_geometry.tool:geometry_tool", paper=PAPER,
                     inputs="two or more layers of the same width in depth order, each (N >= 2, T, D) or (N, D); "
                            "fit= 'linear' | 'mlp', k= (dominant tokenwise subspace, min(4, D)), test_frac= (0.25), seed=",
                     outputs="pairs: {'a->b': {align_full, align_resid, angle_full, angle_resid, proj_tokenwise, "
                             "proj_resid, resid_energy, update_norm, ...}}, mean over pairs; a PNG with out_dir",
                     description="split each layer update into a tokenwise part f(h_l) fitted on training sequences "
                                 "and a residual; alignment (cosine), angles and subspace projections on held-out "
                                 "sequences")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="layer-update-geometry", claim=CLAIM, reproduce="zoo_layer_update_geometry.reproduce:REPRODUCTION",
                      task=None, paper=PAPER)]
