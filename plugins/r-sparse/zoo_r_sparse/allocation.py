"""Per-layer sparse-rank ratio (alpha) for R-Sparse.

The paper searches the layer-wise allocation of the budget between exact channels and singular
components with an evolutionary search on the model's loss (Zhang et al. 2025, Sec. 3). Here a
cheaper, deterministic stand-in picks, for each linear layer on its own, the alpha in ``grid``
that minimises the relative output error ``||y_rsparse - y|| / ||y||`` on calibration inputs
taken from the dense model (the layer's sparsity, and hence the model-level sparsity, stay fixed).
"""
from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from .model import RSparseLinear, block_linears, layer_inputs

__all__ = ["search_sparse_ratios"]

GRID = (0.0, 0.25, 0.5, 0.75, 1.0)


@torch.no_grad()
def search_sparse_ratios(model: nn.Module, ids: torch.Tensor, sparsity: float = 0.5,
                         grid: Sequence[float] = GRID) -> tuple[list[float], list[dict[float, float]]]:
    """Per layer, the alpha of ``grid`` with the least relative output error at ``sparsity``.

    ``model`` is the dense GPT (unchanged). Returns the chosen alphas (``rsparsify`` order) and,
    per layer, the error of every alpha tried. Inputs are split in halves: calibrate on the first,
    score on the second.
    """
    chosen, errors = [], []
    targets = block_linears(model)
    inputs = layer_inputs(model, [lin for _p, _n, lin in targets], ids)
    for (_p, _n, lin), x in zip(targets, inputs, strict=True):
        half = len(x) // 2
        fit, test = x[:half], x[half:]
        y = lin(test)
        errs = {}
        for a in grid:
            layer = RSparseLinear.from_linear(lin, sparsity, float(a))
            layer.calibrate(fit)
            errs[float(a)] = float((layer(test) - y).norm() / y.norm().clamp_min(1e-12))
        chosen.append(min(errs, key=errs.get))
        errors.append(errs)
    return chosen, errors
