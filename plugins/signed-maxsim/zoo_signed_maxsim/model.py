"""Signed MaxSim and a tiny ColBERT-style late-interaction model to compare it with MaxSim.

Killingback, Ingale, Zamani, Musco, "Quantifying and Expanding the Theoretical Capacity of
Late-Interaction Retrieval Models" (arXiv 2607.05803). MaxSim(Q, D) = sum_{q in Q} max_{d in D} <q, d>
is monotone in D (adding a document vector never lowers it), so it cannot penalise what a document
contains. Signed MaxSim gives the query two vector sets and subtracts:

    SignedMaxSim(Q+, Q-, D) = MaxSim(Q+, D) - MaxSim(Q-, D)

The paper's full text could not be read here; this two-set form is our reading of the abstract
("replicate any real-valued inner product"), and ``zoo_signed_maxsim.sparse`` checks that it does.

The learned model (the paper's empirical comparison, at small scale): one shared transformer
layer over the input token vectors (positions and a query/document marker added, as ColBERT's
[Q]/[D] markers), a linear head to 32-d token vectors; documents are L2-normalised (ColBERT), query
vectors are left unnormalised in both variants so that a token may opt out of a set (a zero
vector adds max_d <0, d> = 0). ``signed=True`` adds the negative query head.

Initialisation (issue 14): the identity map (``zoo_task_retrieval.encoder``): input projection and head
are identity matrices, positions and markers zero, the transformer layer's residual branches zero, and
the negative head zero. So both untrained models score exactly as MaxSim on the raw input vectors, and a
claim can show what training adds before it compares the two scores.
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from zoo_task_retrieval.encoder import identity_, identity_init_
from zoo_task_retrieval.task import VectorSets, maxsim, maxsim_all

__all__ = ["signed_maxsim", "LateInteraction", "signed_colbert", "maxsim_colbert"]


def signed_maxsim(q_pos: torch.Tensor, q_neg: torch.Tensor, qmask: torch.Tensor, d: torch.Tensor,
                  dmask: torch.Tensor) -> torch.Tensor:
    """SignedMaxSim of every query (Q+ and Q-, (Bq, L, e) each) against every doc (Bd, Ld, e): (Bq, Bd).

    >>> q = torch.tensor([[[1.0, 0.0]]]); n = torch.tensor([[[0.0, 1.0]]]); m = torch.ones(1, 1, dtype=torch.bool)
    >>> signed_maxsim(q, n, m, torch.tensor([[[1.0, 0.0], [0.0, 1.0]]]), torch.ones(1, 2, dtype=torch.bool)).item()
    0.0
    """
    return maxsim(q_pos, qmask, d, dmask) - maxsim(q_neg, qmask, d, dmask)


class LateInteraction(nn.Module):
    """Tiny ColBERT-style encoder, scored by MaxSim or (``signed=True``) Signed MaxSim.

    Args:
        in_dim: input token-vector size (the negation corpus's word vectors: 64).
        d_model, n_heads, n_layers, ff: the transformer layer(s).
        out_dim: late-interaction vector size (ColBERT: 128; here 64 = in_dim, so the identity init is exact).
        max_len: longest input set (learned positions).
        signed: add the negative query head (Signed MaxSim).
    """

    kind = "multi"
    default_corpus = "negation"

    def __init__(self, in_dim: int = 64, d_model: int = 64, n_heads: int = 4, n_layers: int = 1, ff: int = 128,
                 out_dim: int = 64, max_len: int = 16, signed: bool = True) -> None:
        super().__init__()
        self.signed, self.out_dim = signed, out_dim
        # identity init: the untrained model is MaxSim on the raw vectors (the negative head starts at zero)
        self.embed = identity_(nn.Linear(in_dim, d_model))
        self.pos = nn.Parameter(torch.zeros(max_len, d_model))
        self.marker = nn.Parameter(torch.zeros(2, d_model))  # [Q], [D]
        layer = nn.TransformerEncoderLayer(d_model, n_heads, ff, dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = identity_init_(nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False))
        self.head = identity_(nn.Linear(d_model, out_dim))
        # created last, so that a seeded MaxSim model and Signed MaxSim model share every other initial weight
        self.neg_head = nn.Linear(d_model, out_dim) if signed else None
        if self.neg_head is not None:
            nn.init.zeros_(self.neg_head.weight)
            nn.init.zeros_(self.neg_head.bias)

    def _hidden(self, x: torch.Tensor, mask: torch.Tensor, role: int) -> torch.Tensor:
        h = self.embed(x) + self.pos[: x.shape[1]] + self.marker[role]
        return self.encoder(h, src_key_padding_mask=~mask)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> dict[str, torch.Tensor]:
        """The task's forward contract: normalised document token vectors (B, L, out_dim) and the mask."""
        return {"vectors": F.normalize(self.head(self._hidden(x, mask, 1)), dim=-1) * mask.unsqueeze(-1), "mask": mask}

    def encode_docs(self, docs: VectorSets) -> VectorSets:
        x, mask = docs.padded(dtype=torch.float32)
        return VectorSets.from_padded(self(x, mask)["vectors"], mask)

    def encode_queries(self, queries: VectorSets) -> VectorSets:
        """Query token vectors; with ``signed`` each row is [q+, q-] (2 * out_dim)."""
        x, mask = queries.padded(dtype=torch.float32)
        h = self._hidden(x, mask, 0)
        q = self.head(h) if self.neg_head is None else torch.cat([self.head(h), self.neg_head(h)], -1)
        return VectorSets.from_padded(q, mask)

    def score(self, q: VectorSets, d: VectorSets) -> torch.Tensor:
        """(Q, N) scores: MaxSim, or Signed MaxSim with the query's two halves."""
        e = self.out_dim
        if not torch.is_grad_enabled():  # search over a corpus: exact, chunked
            pos = maxsim_all(q.map(lambda v: v[:, :e]), d)
            return pos - maxsim_all(q.map(lambda v: v[:, e:]), d) if self.signed else pos
        qx, qm = q.padded()
        dx, dm = d.padded()
        if not self.signed:
            return maxsim(qx, qm, dx, dm)
        return signed_maxsim(qx[..., :e], qx[..., e:], qm, dx, dm)


def signed_colbert(in_dim: int = 64, d_model: int = 64, n_heads: int = 4, n_layers: int = 1, ff: int = 128,
                   out_dim: int = 64, max_len: int = 16) -> LateInteraction:
    """Builder of ``signed_maxsim_colbert``: the tiny late-interaction model scored by Signed MaxSim."""
    return LateInteraction(in_dim, d_model, n_heads, n_layers, ff, out_dim, max_len, signed=True)


def maxsim_colbert(in_dim: int = 64, d_model: int = 64, n_heads: int = 4, n_layers: int = 1, ff: int = 128,
                   out_dim: int = 64, max_len: int = 16) -> LateInteraction:
    """Builder of ``maxsim_colbert``: the same model scored by plain MaxSim."""
    return LateInteraction(in_dim, d_model, n_heads, n_layers, ff, out_dim, max_len, signed=False)
