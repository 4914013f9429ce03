"""MUVERA's Fixed Dimensional Encodings (FDEs) and FDE retrieval.

Dhulipala, Hadian, Jayaram, Lee, Mirrokni, "MUVERA: Multi-Vector Retrieval via Fixed Dimensional
Encodings", NeurIPS 2024 (arXiv 2405.19504), Section 2 (the FDE construction) and Section 3
(retrieval: MIPS over document FDEs, then exact Chamfer rerank).

Section 2, per repetition r = 1..R_reps: k_sim Gaussian hyperplanes split space into B = 2^k_sim
SimHash partitions, phi(x) = the sign bits of <g_i, x>. An inner random projection
psi(x) = S x / sqrt(d_proj), S with i.i.d. +-1 entries, maps each vector to d_proj dims. Block k of
the query FDE is the SUM of psi(q) over the query vectors q in partition k; block k of the document
FDE is the AVERAGE (centroid) of psi(p) over the document vectors p in partition k, and an empty
document partition is filled with psi(p) of the document vector p whose SimHash bits are nearest in
Hamming distance to k. The R_reps blocks are concatenated (d_FDE = R_reps * B * d_proj) and an
optional final projection of the same +-1 / sqrt form maps the FDE to d_final dims. The
asymmetry makes <FDE_q(Q), FDE_d(P)> approximate Chamfer(Q, P) = sum_q max_p <q, p>.
Defaults are the paper's main setting: R_reps=20, k_sim=5, d_proj=16 (d_FDE = 10240).
"""
from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from zoo_task_retrieval.task import SearchResult, VectorSets, rerank_maxsim

__all__ = ["Muvera", "muvera"]


def _pm1(shape: tuple[int, ...], scale: float, g: torch.Generator) -> torch.Tensor:
    """i.i.d. uniform +-1 entries times ``scale``."""
    return (torch.randint(0, 2, shape, generator=g).float() * 2 - 1) * scale


class Muvera(nn.Module):
    """Asymmetric FDEs of token sets, and retrieval by MIPS on FDEs + exact MaxSim rerank.

    Args:
        dim: the largest token dimension accepted. The random matrices are drawn for ``dim`` rows;
            inputs of dimension d <= dim use the first d rows (still i.i.d. Gaussian / +-1), so one
            model serves 64-d synthetic tokens and 384-d MiniLM tokens.
        reps: R_reps, independent repetitions.
        k_sim: SimHash hyperplanes per repetition (B = 2^k_sim partitions).
        d_proj: inner projection dimension; None keeps the vectors as they are (identity, d_proj = d).
        d_final: final projection dimension; None for none.
        fill_empty: fill empty document partitions with the Hamming-nearest vector (Section 2).
        n_candidates: documents retrieved by MIPS on FDEs, then reranked by exact MaxSim.
        rerank: rerank the candidates exactly (False returns the FDE inner-product ranking).
        seed: seed of the random matrices (so they are the same for every build and after save/load).

    >>> m = Muvera(dim=8, reps=2, k_sim=2, d_proj=4)
    >>> m(torch.randn(3, 5, 8), torch.ones(3, 5, dtype=torch.bool)).shape
    torch.Size([3, 32])
    """

    kind = "multi"

    def __init__(self, dim: int = 384, reps: int = 20, k_sim: int = 5, d_proj: int | None = 16,
                 d_final: int | None = None, fill_empty: bool = True, n_candidates: int = 100,
                 rerank: bool = True, seed: int = 0) -> None:
        super().__init__()
        if not 0 <= k_sim <= 16:
            raise ValueError(f"k_sim={k_sim} must be in [0, 16] (2^k_sim partitions per repetition)")
        self.dim, self.reps, self.k_sim, self.d_proj, self.d_final = dim, reps, k_sim, d_proj, d_final
        self.fill_empty, self.n_candidates, self.rerank = fill_empty, n_candidates, rerank
        g = torch.Generator().manual_seed(seed)
        self.register_buffer("simhash", torch.randn(reps, dim, k_sim, generator=g))
        if d_proj is not None:
            self.register_buffer("proj", _pm1((reps, dim, d_proj), 1 / math.sqrt(d_proj), g))
        if d_final is not None:
            if d_proj is None:
                raise ValueError("d_final needs a fixed FDE size: set d_proj too")
            self.register_buffer("final", _pm1((reps * 2 ** k_sim * d_proj, d_final), 1 / math.sqrt(d_final), g))
        bits = (torch.arange(2 ** k_sim)[:, None] >> torch.arange(k_sim)) & 1
        self.register_buffer("popcount", bits.sum(1), persistent=False)  # set bits of each k_sim-bit code

    @property
    def n_partitions(self) -> int:
        return 2 ** self.k_sim

    def fde_dim(self, d: int | None = None) -> int:
        """Output size: d_final, or R_reps * B * d_proj (d_proj = d for the identity)."""
        return self.d_final or self.reps * self.n_partitions * (self.d_proj or d or self.dim)

    def fde(self, x: torch.Tensor, mask: torch.Tensor, query: bool) -> torch.Tensor:
        """FDEs of a padded batch ``x`` (B, L, d), ``mask`` (B, L): query (sum) or document (average) form."""
        b, length, d = x.shape
        if d > self.dim:
            raise ValueError(f"token dimension {d} exceeds dim={self.dim}; create the model with dim={d}")
        x = x.float() * mask.unsqueeze(-1)
        bits = torch.einsum("bld,rdk->brlk", x, self.simhash[:, :d]) > 0  # phi: SimHash sign bits
        weights = 2 ** torch.arange(self.k_sim - 1, -1, -1, device=x.device)
        part = (bits.long() * weights).sum(-1)  # (B, R, L) partition of each vector
        xp = torch.einsum("bld,rdp->brlp", x, self.proj[:, :d]) if self.d_proj is not None \
            else x[:, None].expand(b, self.reps, length, d)  # psi
        p = xp.shape[-1]
        valid = mask[:, None, :].expand(b, self.reps, length).to(xp.dtype)
        sums = xp.new_zeros(b, self.reps, self.n_partitions, p)
        sums.scatter_add_(2, part[..., None].expand(-1, -1, -1, p), xp * valid[..., None])
        if query:
            out = sums
        else:
            counts = xp.new_zeros(b, self.reps, self.n_partitions).scatter_add_(2, part, valid)
            out = sums / counts.clamp_min(1)[..., None]
            if self.fill_empty and self.k_sim > 0:
                # Hamming distance from each partition's bit pattern to each vector's SimHash bits:
                # popcount(partition XOR vector's partition), (B, R, B_part, L)
                xor = part[:, :, None, :] ^ torch.arange(self.n_partitions, device=x.device)[None, None, :, None]
                ham = self.popcount[xor]
                ham = ham.masked_fill(~mask[:, None, None, :], self.k_sim + 1)
                nearest = ham.argmin(-1)  # the first nearest vector on ties
                fill = torch.gather(xp, 2, nearest[..., None].expand(-1, -1, -1, p))
                empty = (counts == 0) & mask.any(1)[:, None, None]
                out = torch.where(empty[..., None], fill, out)
        out = out.reshape(b, -1)
        return out @ self.final if self.d_final is not None else out

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The task's forward contract: document FDEs (B, d_FDE) of a padded token-set batch."""
        return self.fde(x, mask, query=False)

    def _encode(self, sets: VectorSets, query: bool, max_tokens: int = 4096) -> torch.Tensor:
        out = torch.empty(len(sets), self.fde_dim(sets.dim))
        for ids in sets.chunks(max_tokens):
            x, mask = sets.padded(ids, dtype=torch.float32)
            out[ids] = self.fde(x, mask, query)
        return out

    def encode_queries(self, queries: VectorSets) -> torch.Tensor:
        """Query FDEs (Q, d_FDE): partition sums."""
        return self._encode(queries, query=True)

    def encode_docs(self, docs: VectorSets) -> torch.Tensor:
        """Document FDEs (N, d_FDE): partition centroids, empty partitions filled."""
        return self._encode(docs, query=False)

    @torch.no_grad()
    def build_index(self, docs: VectorSets) -> dict[str, Any]:
        """A faiss IndexFlatIP over the document FDEs, plus the token vectors the rerank needs."""
        import faiss

        fdes = self.encode_docs(docs)
        index = faiss.IndexFlatIP(fdes.shape[1])
        index.add(fdes.contiguous().numpy())
        return {"fde": index, "tokens": docs.to(torch.float32)}

    @torch.no_grad()
    def candidates(self, index: dict[str, Any], queries: VectorSets, n: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """MIPS over FDEs: (scores, ids) of the top ``n`` (default ``n_candidates``) docs per query."""
        n = min(n or self.n_candidates, index["fde"].ntotal)
        scores, ids = index["fde"].search(self.encode_queries(queries).contiguous().numpy(), n)
        return torch.from_numpy(scores), torch.from_numpy(ids).long()

    @torch.no_grad()
    def search(self, index: dict[str, Any], queries: VectorSets, k: int) -> SearchResult:
        """Top ``k`` docs: FDE MIPS for ``n_candidates`` candidates, then exact MaxSim rerank."""
        scores, ids = self.candidates(index, queries)
        if not self.rerank:
            s, i = scores[:, :k], ids[:, :k]
            if s.shape[1] < k:
                pad = k - s.shape[1]
                s = torch.cat([s, s.new_full((len(s), pad), -math.inf)], 1)
                i = torch.cat([i, i.new_full((len(i), pad), -1)], 1)
            return SearchResult(i, s, torch.full((len(queries),), ids.shape[1]))
        return rerank_maxsim(index["tokens"], queries, [row[row >= 0] for row in ids], k)


def muvera(dim: int = 384, reps: int = 20, k_sim: int = 5, d_proj: int | None = 16, d_final: int | None = None,
           fill_empty: bool = True, n_candidates: int = 100, rerank: bool = True, seed: int = 0) -> Muvera:
    """Builder of ``muvera_fde`` with the paper's defaults (R_reps=20, k_sim=5, d_proj=16)."""
    return Muvera(dim=dim, reps=reps, k_sim=k_sim, d_proj=d_proj, d_final=d_final, fill_empty=fill_empty,
                  n_candidates=n_candidates, rerank=rerank, seed=seed)
