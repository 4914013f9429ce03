"""Decoder-only inversion of STL semantic embeddings (Candussio, Saveri, Sarti, Bortolussi 2025, "Bridging Logic and
Learning: Decoding Temporal Logic Embeddings via Transformers", ECML-PKDD, arXiv:2507.07808).

A causal Transformer reads the semantic embedding of a formula as a prefix and writes the formula's tokens from a
small vocabulary built from STL syntax (``zoo_task_stl_logic.syntax``: operators, variables, comparisons, thresholds
on a 0.1 grid, integer time bounds; prefix order). The embedding is the kernel embedding of the STL kernel papers:
``z(phi) = [k(phi, a_j)]_j`` against a fixed set of anchor formulae (here the ``stl_logic`` task's 128 anchors; the
model does not depend on the ``stl-kernel-embed`` encoder). It is projected by one linear layer to ``prefix``
vectors in front of ``<bos>``; training is teacher-forced next-token cross-entropy on (embedding, formula) pairs;
decoding is greedy and unconstrained (no grammar mask: syntactic validity is measured, not enforced, as in the paper).

What comes from where: the decoder-only architecture with the embedding as conditioning, the STL-syntax vocabulary,
training to reconstruct formulae from kernel embeddings and the evaluation (validity after 1 epoch, semantic
similarity after about 10, decoded length vs gold) are the paper's (abstract, catalog). Sizes, optimiser, prefix
length and the threshold grid are ours: the CPU default is 2 layers of width 64 on 2,000 training formulae
(the paper trains larger models on far more formulae); ``preset="paper"`` is a larger decoder (4 layers, width 256),
not a configuration the paper states.

>>> import torch
>>> model = stl_embed_inversion(embed_dim=8, d_model=32, layers=1)
>>> model(torch.zeros(2, 8), torch.ones(2, 5, dtype=torch.long)).shape
torch.Size([2, 5, 97])
>>> len(model.decode(torch.zeros(3, 8), max_len=6))
3
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from zoo_task_stl_logic import syntax as Y
from zoo_task_stl_logic.baselines import MAX_LEN

CPU: dict[str, Any] = {"embed_dim": 128, "d_model": 64, "layers": 2, "heads": 4, "mlp_ratio": 2.0, "prefix": 1,
                       "lr": 2e-3, "weight_decay": 0.01}
PAPER: dict[str, Any] = {**CPU, "d_model": 256, "layers": 4, "heads": 8, "mlp_ratio": 4.0, "prefix": 4, "lr": 5e-4}
PRESETS = {"cpu": CPU, "paper": PAPER}
INVALID = "<invalid>"


class EmbeddingPrefixDecoder(nn.Module):
    """Causal Transformer over ``[prefix(embedding), <bos>, tokens...]``; ``forward`` returns next-token logits."""

    input_kind = "embedding"

    def __init__(self, embed_dim: int = CPU["embed_dim"], d_model: int = CPU["d_model"], layers: int = CPU["layers"],
                 heads: int = CPU["heads"], mlp_ratio: float = CPU["mlp_ratio"], prefix: int = CPU["prefix"],
                 lr: float = CPU["lr"], weight_decay: float = CPU["weight_decay"], max_len: int = MAX_LEN) -> None:
        super().__init__()
        self.embed_dim, self.d_model, self.n_prefix, self.max_len = embed_dim, d_model, prefix, max_len
        self.lr, self.weight_decay = lr, weight_decay
        self.prefix = nn.Linear(embed_dim, prefix * d_model)
        self.tok = nn.Embedding(len(Y.VOCAB), d_model)
        self.pos = nn.Parameter(torch.randn(prefix + max_len, d_model) * 0.02)
        layer = nn.TransformerEncoderLayer(d_model, heads, int(mlp_ratio * d_model), dropout=0.0, batch_first=True,
                                           norm_first=True, activation="gelu")
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, len(Y.VOCAB))

    def forward(self, embedding: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, T, V)``: position t predicts token t + 1 of ``ids`` (which start with ``<bos>``)."""
        b, t = ids.shape
        if t > self.max_len:
            raise ValueError(f"{t} tokens exceed max_len={self.max_len}")
        x = torch.cat([self.prefix(embedding.float()).view(b, self.n_prefix, self.d_model), self.tok(ids.long())], 1)
        x = x + self.pos[:x.shape[1]]
        causal = nn.Transformer.generate_square_subsequent_mask(x.shape[1], device=x.device, dtype=x.dtype)
        h = self.blocks(x, mask=causal, is_causal=True)
        return self.head(self.norm(h[:, self.n_prefix:]))

    def loss(self, embedding: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        """Teacher-forced next-token cross-entropy, padding ignored."""
        logits = self(embedding, ids[:, :-1])
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1), ignore_index=Y.PAD)

    def fit(self, embeddings: torch.Tensor, ids: torch.Tensor, *, steps: int, seed: int = 0,
            batch_size: int = 32) -> dict[str, float]:
        """``steps`` AdamW steps on shuffled batches (epoch after epoch) of (embedding, formula) pairs."""
        dev = self.pos.device
        embeddings, ids = embeddings.to(dev), ids.to(dev)
        lengths = (ids != Y.PAD).sum(1)
        g = torch.Generator().manual_seed(seed)
        opt = torch.optim.AdamW(self.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        self.train()
        t0, losses, order = time.perf_counter(), [], torch.empty(0, dtype=torch.long)
        for _ in range(steps):
            if len(order) < batch_size:
                order = torch.randperm(len(ids), generator=g)
            idx, order = order[:batch_size].to(dev), order[batch_size:]
            loss = self.loss(embeddings[idx], ids[idx, :int(lengths[idx].max())])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        self.eval()
        tail = losses[-max(1, len(losses) // 10):] if losses else [float("nan")]
        return {"train_loss": float(np.mean(tail)), "fit_seconds": time.perf_counter() - t0}

    @torch.no_grad()
    def generate(self, embedding: torch.Tensor, max_len: int | None = None) -> torch.Tensor:
        """Greedy token ids ``(B, <= max_len)`` starting with ``<bos>``; rows stop at their ``<eos>``."""
        max_len = min(max_len or self.max_len, self.max_len)
        ids = torch.full((embedding.shape[0], 1), Y.BOS, dtype=torch.long, device=embedding.device)
        done = torch.zeros(embedding.shape[0], dtype=torch.bool, device=embedding.device)
        while ids.shape[1] < max_len and not bool(done.all()):
            nxt = self(embedding, ids)[:, -1].argmax(-1)
            nxt = torch.where(done, torch.full_like(nxt, Y.PAD), nxt)
            done = done | (nxt == Y.EOS)
            ids = torch.cat([ids, nxt[:, None]], 1)
        return ids

    def decode(self, embedding: torch.Tensor, max_len: int | None = None) -> list[str]:
        """Infix formulae (``syntax.to_string``) of greedy decodes; a decode that is not one formula comes back as
        ``"<invalid> "`` and its tokens (which no STL parser accepts)."""
        was = self.training
        self.eval()
        out = []
        for row in self.generate(embedding, max_len).cpu():
            toks = Y.decode_ids(row)
            try:
                out.append(Y.to_string(Y.from_tokens(toks)))
            except Y.STLSyntaxError:
                out.append(" ".join([INVALID, *toks]))
        self.train(was)
        return out


def stl_embed_inversion(preset: str = "cpu", **overrides: Any) -> EmbeddingPrefixDecoder:
    """The embedding-to-formula decoder; ``preset`` "cpu" (default) or "paper" (larger; see the module docstring)."""
    if preset not in PRESETS:
        raise ValueError(f"preset={preset!r}; choose from {sorted(PRESETS)}")
    return EmbeddingPrefixDecoder(**{**PRESETS[preset], **overrides})
