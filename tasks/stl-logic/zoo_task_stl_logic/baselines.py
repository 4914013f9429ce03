"""The baselines of stl_logic: the exact kernel embedding (upper reference), bag-of-tokens, an untrained Transformer
encoder (the same network a distilled encoder trains), and nearest-neighbour retrieval for inversion."""
from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from . import semantics as S
from . import syntax as Y

MAX_LEN = S.MAX_TOKENS + 2  # <bos> prefix <eos>


def formulae_of_ids(ids: torch.Tensor | np.ndarray) -> list[Y.Formula]:
    """Formulae of a ``(B, T)`` batch of token ids (``STLSyntaxError`` when a row is not one formula)."""
    return [Y.from_tokens(Y.decode_ids(row)) for row in np.asarray(ids.cpu() if isinstance(ids, torch.Tensor) else ids)]


def numeric_values() -> torch.Tensor:
    """``(V, 2)``: per token its threshold value (column 0) or its time bound / MAX_TIME (column 1), else 0."""
    v = torch.zeros(len(Y.VOCAB), 2)
    for t in Y.THRESHOLDS:
        v[Y.INDEX[t], 0] = float(t)
    for t in Y.TIMES:
        v[Y.INDEX[t], 1] = 1.5 if t == "inf" else int(t) / Y.MAX_TIME
    return v


class BagOfTokens(nn.Module):
    """Token counts over the vocabulary (specials left out): a syntax-only embedding with no parameters."""

    input_kind = "formula"

    def __init__(self) -> None:
        super().__init__()
        self.dim = len(Y.VOCAB)

    def encode(self, ids: torch.Tensor) -> torch.Tensor:
        counts = torch.zeros(ids.shape[0], self.dim, device=ids.device)
        counts.scatter_add_(1, ids.long(), torch.ones_like(ids, dtype=torch.float32))
        counts[:, :len(Y.SPECIAL)] = 0
        return counts

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.encode(ids)


class TokenEncoder(nn.Module):
    """A pre-norm Transformer encoder over prefix tokens, mean-pooled over non-pad tokens and projected to ``dim``.

    Untrained it is the ``random_encoder`` baseline; a distillation method trains this same network. Besides its
    learned embedding, a threshold token adds ``c * u`` and a time-bound token ``(t / MAX_TIME) * v`` (``inf``: 1.5)
    for two learned vectors u, v (``numeric=True``): the token ids alone carry no order of the numbers, which the
    robustness depends on monotonically.
    """

    input_kind = "formula"

    def __init__(self, dim: int = 64, d_model: int = 64, layers: int = 2, heads: int = 4, mlp_ratio: float = 2.0,
                 max_len: int = MAX_LEN, dropout: float = 0.0, numeric: bool = True) -> None:
        super().__init__()
        self.dim, self.max_len = dim, max_len
        self.arch = {"dim": dim, "d_model": d_model, "layers": layers, "heads": heads, "mlp_ratio": mlp_ratio,
                     "numeric": numeric}
        self.tok = nn.Embedding(len(Y.VOCAB), d_model, padding_idx=Y.PAD)
        self.numeric = nn.Linear(2, d_model, bias=False) if numeric else None
        self.register_buffer("values", numeric_values(), persistent=False)
        self.pos = nn.Parameter(torch.randn(max_len, d_model) * 0.02)
        layer = nn.TransformerEncoderLayer(d_model, heads, int(mlp_ratio * d_model), dropout=dropout,
                                           batch_first=True, norm_first=True, activation="gelu")
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, dim)

    def encode(self, ids: torch.Tensor) -> torch.Tensor:
        ids = ids.long()
        if ids.shape[1] > self.max_len:
            raise ValueError(f"{ids.shape[1]} tokens exceed max_len={self.max_len}; build with a larger max_len")
        pad = ids == Y.PAD
        x = self.tok(ids) + self.pos[:ids.shape[1]]
        if self.numeric is not None:
            x = x + self.numeric(self.values[ids])
        h = self.blocks(x, src_key_padding_mask=pad)
        keep = (~pad).unsqueeze(-1).float()
        return self.head(self.norm((h * keep).sum(1) / keep.sum(1).clamp_min(1.0)))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.encode(ids)


class KernelEmbedding(nn.Module):
    """The exact kernel embedding: ``z(phi) = [k(phi, a_j)]_j`` against ``anchors``, the kernel estimated on its own
    sample of ``trajectories`` (stl2vec's anchor embedding). Encoding parses the tokens and computes robustness:
    its time is the symbolic cost a neural encoder avoids."""

    input_kind = "formula"

    def __init__(self, anchors: Sequence[Y.Formula], trajectories: np.ndarray) -> None:
        super().__init__()
        self.anchors, self.x = list(anchors), trajectories
        self.anchor_rho = S.robustness_matrix(self.anchors, trajectories)
        self.dim = len(self.anchors)

    def embed_formulae(self, formulae: Sequence[Y.Formula]) -> np.ndarray:
        return S.kernel(S.robustness_matrix(formulae, self.x), self.anchor_rho)

    def encode(self, ids: torch.Tensor) -> torch.Tensor:
        return torch.as_tensor(self.embed_formulae(formulae_of_ids(ids)), dtype=torch.float32)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.encode(ids)


class NearestNeighbour(nn.Module):
    """Inversion by retrieval: the training formula whose embedding has the highest cosine with the query."""

    input_kind = "embedding"

    def __init__(self) -> None:
        super().__init__()
        self.bank: torch.Tensor | None = None
        self.formulae: list[Y.Formula] = []

    def fit(self, embeddings: torch.Tensor, ids: torch.Tensor, **_: object) -> dict[str, float]:
        t0 = time.perf_counter()
        self.bank = nn.functional.normalize(embeddings.float(), dim=1)
        self.formulae = formulae_of_ids(ids)
        return {"fit_seconds": time.perf_counter() - t0}

    def decode(self, embeddings: torch.Tensor) -> list[str]:
        if self.bank is None:
            raise RuntimeError("NearestNeighbour.decode before fit(embeddings, ids)")
        best = (nn.functional.normalize(embeddings.float(), dim=1) @ self.bank.T).argmax(1)
        return [Y.to_string(self.formulae[int(i)]) for i in best]


def build_baseline(name: str, *, params: int | None = None, seed: int = 0, arch: dict | None = None,
                   anchors: Sequence[Y.Formula] | None = None, trajectories: np.ndarray | None = None) -> nn.Module:
    """``bag_of_tokens``, ``random_encoder`` (``arch`` = the model's shape, else sized to ``params``), ``kernel``
    (needs ``anchors`` and ``trajectories``) or ``nn_retrieval``; seeded."""
    torch.manual_seed(seed)
    if name == "bag_of_tokens":
        return BagOfTokens()
    if name == "nn_retrieval":
        return NearestNeighbour()
    if name == "kernel":
        if anchors is None or trajectories is None:
            raise ValueError("the kernel baseline needs anchors= and trajectories= (zoo_task_stl_logic.task builds them)")
        return KernelEmbedding(anchors, trajectories)
    if name == "random_encoder":
        if arch is None and params:
            from zoo.task import match_width
            width = match_width(lambda w: TokenEncoder(d_model=4 * w, heads=4), params, lo=2)
            arch = {"d_model": 4 * width}
        return TokenEncoder(**(arch or {}))  # PyTorch's default initialisation, seeded above
    raise ValueError(f"unknown baseline {name!r}; choose from {sorted(BASELINES)}")


BASELINES = {"kernel": "embed", "bag_of_tokens": "embed", "random_encoder": "embed", "nn_retrieval": "invert"}
