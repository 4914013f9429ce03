"""Pointer Networks (Vinyals, Fortunato and Jaitly 2015, arXiv:1506.03134): attention as a pointer over the inputs.

An LSTM encoder reads the points ``P_1..P_n`` (their coordinates, as in the paper); an LSTM decoder, started from the
encoder's final state, is fed at each step the coordinates of the point it chose before (a learned start vector at the
first step). Section 2.3, Eq. 3: the attention scores over the encoder states ARE the output distribution,

    u_j^i = v^T tanh(W1 e_j + W2 d_i),   p(C_i | C_1..C_{i-1}, P) = softmax(u^i),

so the output dictionary is the input itself and grows with n: a model trained on 5-10 points can name the 20th.
END is one more key: a learned vector ``end`` placed after the encoder states (index ``n``), scored like the rest.

The ``algorithmic_seq`` "points" contract: ``model(points (B, N, d), targets (B, M)) -> logprobs (B, M, N + 1)``
(teacher forcing; END = N) and ``decode(points, max_len) -> (B, max_len)`` (greedy; ``beam=K`` runs the beam search
the paper used for TSP, restricted to tours that visit each point at most once).

Paper defaults (``preset="paper"``): one LSTM layer of 512 units in encoder and decoder, every weight drawn uniformly
from [-0.08, 0.08] (Section 4.1). CPU default: 64 units, same initialisation.

Deviations: training is the task's (Adam, lr 1e-3, batches of 64, gradient clipping at 1) instead of the paper's SGD
(lr 1.0, batch 128, clipping at 2.0) for 1M examples; the END key is a learned vector where the paper's hull outputs
were delimited by special symbols; the beam search (width ``beam``) forbids repeats for every problem, where the paper
restricted it to valid tours for TSP only (``visit_all=True`` adds that restriction).
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["CPU", "PAPER", "PointerNet", "pointer_net"]

CPU: dict[str, Any] = {"hidden": 64, "init_scale": 0.08, "beam": 1, "visit_all": False}
PAPER: dict[str, Any] = {"hidden": 512, "init_scale": 0.08, "beam": 1, "visit_all": False}
PRESETS = {"cpu": CPU, "paper": PAPER}


class PointerNet(nn.Module):
    """LSTM encoder / LSTM decoder whose content attention over the inputs (plus END) is the output distribution.

    Args:
        in_dim: coordinates per point (2 for hull and TSP, 1 for sort).
        hidden: LSTM units (encoder and decoder) and attention width.
        init_scale: every parameter is drawn from U[-init_scale, init_scale] (the paper's 0.08).
        beam: ``decode``'s default beam width (1: greedy; the task calls ``decode(points, max_len)``).
        visit_all: the beam search ends a sequence only after every point (TSP's valid tours).

    >>> net = PointerNet(in_dim=2, hidden=16)
    >>> pts, tgt = torch.rand(3, 7, 2), torch.tensor([[0, 3, 5, 7]] * 3)
    >>> net(pts, tgt).shape, net.decode(torch.rand(3, 20, 2), 21).shape  # 20 points: never a problem
    (torch.Size([3, 4, 8]), torch.Size([3, 21]))
    """

    input_kind = "points"

    def __init__(self, in_dim: int = 2, hidden: int = CPU["hidden"], init_scale: float = CPU["init_scale"],
                 beam: int = CPU["beam"], visit_all: bool = CPU["visit_all"]) -> None:
        super().__init__()
        self.in_dim, self.hidden, self.init_scale, self.beam = in_dim, hidden, init_scale, beam
        self.visit_all = visit_all
        self.encoder = nn.LSTM(in_dim, hidden, batch_first=True)
        self.decoder = nn.LSTMCell(in_dim, hidden)
        self.w1 = nn.Linear(hidden, hidden, bias=False)  # W1 e_j
        self.w2 = nn.Linear(hidden, hidden, bias=False)  # W2 d_i
        self.v = nn.Linear(hidden, 1, bias=False)
        self.start = nn.Parameter(torch.empty(in_dim))  # the decoder's first input
        self.end = nn.Parameter(torch.empty(hidden))  # the END key, index n
        for p in self.parameters():
            nn.init.uniform_(p, -init_scale, init_scale)

    def encode(self, points: torch.Tensor) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """Keys ``W1 [e_1..e_n, end]`` (B, n + 1, H) and the decoder's initial state (the encoder's final one)."""
        enc, (h, c) = self.encoder(points)
        keys = torch.cat([enc, self.end.expand(enc.shape[0], 1, -1)], 1)
        return self.w1(keys), (h[-1], c[-1])

    def step(self, inp: torch.Tensor, state: tuple, keys: torch.Tensor) -> tuple[torch.Tensor, tuple]:
        """One decoder step: log p over the n points and END (Eq. 3), and the new state."""
        h, c = self.decoder(inp, state)
        u = self.v(torch.tanh(keys + self.w2(h)[:, None])).squeeze(-1)
        return F.log_softmax(u, -1), (h, c)

    def forward(self, points: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        b, n, _ = points.shape
        keys, state = self.encode(points)
        rows = torch.arange(b, device=points.device)
        inp, out = self.start.expand(b, -1), []
        for t in range(targets.shape[1]):
            logp, state = self.step(inp, state, keys)
            out.append(logp)
            inp = points[rows, targets[:, t].clamp(0, n - 1)]  # after END / padding nothing is scored
        return torch.stack(out, 1)

    @torch.no_grad()
    def decode(self, points: torch.Tensor, max_len: int, *, beam: int | None = None) -> torch.Tensor:
        """Greedy pointers ``(B, max_len)`` (END = n, then END repeated); ``beam > 1`` (default ``self.beam``) for beam
        search."""
        beam = self.beam if beam is None else beam
        if beam > 1:
            return torch.stack([self._beam(p, max_len, beam) for p in points])
        b, n, _ = points.shape
        keys, state = self.encode(points)
        rows = torch.arange(b, device=points.device)
        inp, out = self.start.expand(b, -1), []
        done = torch.zeros(b, dtype=torch.bool, device=points.device)
        for _ in range(max_len):
            logp, state = self.step(inp, state, keys)
            choice = logp.argmax(-1).masked_fill(done, n)
            done |= choice == n
            out.append(choice)
            inp = points[rows, choice.clamp(0, n - 1)]
        return torch.stack(out, 1)

    def _beam(self, points: torch.Tensor, max_len: int, width: int) -> torch.Tensor:
        """Beam search for one problem ``(n, d)``: the most probable sequence of distinct points ending in END."""
        n = points.shape[0]
        keys, (h, c) = self.encode(points[None])
        beams = [(0.0, [], (h, c), self.start[None])]  # (log p, pointers, state, next input)
        finished: list[tuple[float, list[int]]] = []
        for _ in range(max_len):
            grown = []
            for score, seq, state, inp in beams:
                logp, new = self.step(inp, state, keys)
                logp = logp[0].clone()
                if seq:
                    logp[seq] = float("-inf")  # each point at most once
                if self.visit_all and len(seq) < n:
                    logp[n] = float("-inf")  # END only once every point is in the tour
                for j in logp.topk(min(width, n + 1 - len(seq))).indices.tolist():
                    if logp[j].isfinite():
                        grown.append((score + float(logp[j]), seq + [j], new, points[None, min(j, n - 1)]))
            finished += [(s, q) for s, q, _, _ in grown if q[-1] == n]
            beams = sorted([g for g in grown if g[1][-1] != n], key=lambda g: -g[0])[:width]
            if not beams:
                break
        finished += [(s, q) for s, q, _, _ in beams]
        best = max(finished, key=lambda f: f[0])[1] if finished else []
        return torch.tensor((best + [n] * max_len)[:max_len], dtype=torch.long, device=points.device)

    def extra_repr(self) -> str:
        return f"in_dim={self.in_dim}, hidden={self.hidden}, init_scale={self.init_scale}, beam={self.beam}"


def pointer_net(*, preset: str = "cpu", in_dim: int = 2, **overrides: Any) -> PointerNet:
    """The Pointer Network at ``preset`` ("cpu": 64 units, "paper": 512), any field overridden by keyword.

    >>> pointer_net(preset="paper").hidden, pointer_net(hidden=32, in_dim=1).in_dim
    (512, 1)
    """
    if preset not in PRESETS:
        raise ValueError(f"pointer_net: unknown preset {preset!r}; choose from {sorted(PRESETS)}")
    unknown = set(overrides) - set(CPU)
    if unknown:
        raise ValueError(f"pointer_net: unknown option(s) {sorted(unknown)}; the options are {sorted(CPU)} and in_dim")
    return PointerNet(in_dim=in_dim, **{**PRESETS[preset], **overrides})
