"""Single-token (decode) timing of R-Sparse linear layers against the dense ones, on CPU.

The sparse path does what a kernel would: gather the rows of ``W^T`` for the exact channels
(``x[S] @ W^T[S]``) and add the rank-r part ``((x * (1 - m)) @ V_r S_r) @ U_r^T``. Both paths run
on the same recorded token inputs, interleaved (dense, sparse, sparse, dense, ...) in one process,
so machine load affects both alike; the result is a ratio. At the small sizes of the char_lm GPT
(128-512 wide) gather and call overheads dominate, so no speed-up is expected there; the paper's
43% end-to-end gain comes from custom GPU kernels on 7B models.
"""
from __future__ import annotations

import time

import torch
from torch.nn import functional as F

from .model import RSparseLinear

__all__ = ["sparse_matvec", "mac_fraction", "time_decode"]


def sparse_matvec(layer: RSparseLinear, x: torch.Tensor, weight_t: torch.Tensor) -> torch.Tensor:
    """R-Sparse output for one token ``x`` (in,), with ``weight_t`` = ``layer.weight.T`` contiguous."""
    m = layer.mask(x)
    idx = m.nonzero().squeeze(1)
    y = x[idx] @ weight_t[idx]
    if layer.rank:
        y = y + (x.masked_fill(m, 0.0) @ layer.lr_in) @ layer.lr_out
    return y if layer.bias is None else y + layer.bias


def mac_fraction(layer: RSparseLinear, x: torch.Tensor) -> float:
    """Multiply-adds of the R-Sparse path over the dense layer's, for tokens ``x`` (N, in)."""
    exact = float(layer.mask(x).float().sum(-1).mean())
    return (exact * layer.out_features + layer.rank * (layer.in_features + layer.out_features)) / (
        layer.in_features * layer.out_features)


@torch.no_grad()
def time_decode(layers: list[RSparseLinear], inputs: list[torch.Tensor], rounds: int = 5) -> dict[str, float]:
    """Seconds per token through all ``layers`` (dense vs R-Sparse), each on its recorded inputs (N, in).

    Returns ``dense_ms``, ``sparse_ms`` (per token, summed over layers) and ``speedup`` = dense / sparse.
    """
    wts = [layer.weight.detach().T.contiguous() for layer in layers]
    dense = sparse = 0.0
    n_tok = min(len(x) for x in inputs)

    def run_dense() -> float:
        t0 = time.perf_counter()
        for layer, x in zip(layers, inputs, strict=True):
            for j in range(n_tok):
                F.linear(x[j], layer.weight, layer.bias)
        return time.perf_counter() - t0

    def run_sparse() -> float:
        t0 = time.perf_counter()
        for layer, wt, x in zip(layers, wts, inputs, strict=True):
            for j in range(n_tok):
                sparse_matvec(layer, x[j], wt)
        return time.perf_counter() - t0

    run_dense(), run_sparse()  # warm-up, untimed
    for r in range(rounds):
        if r % 2:
            sparse += run_sparse()
            dense += run_dense()
        else:
            dense += run_dense()
            sparse += run_sparse()
    per = 1000.0 / (rounds * n_tok)
    return {"dense_ms": dense * per, "sparse_ms": sparse * per, "speedup": dense / max(sparse, 1e-12)}
