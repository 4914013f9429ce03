"""The baselines that live with ``algorithmic_seq``, each sized to the model it is compared with.

* recall: ``transformer`` (the reference GPT of ``zoo_nn.gpt``: softmax attention, learned positions) and ``lstm``;
* pointer problems: ``seq2seq`` (Vinyals et al. 2015's baseline: an LSTM encoder-decoder with content attention over
  the encoder states whose output is a softmax over a FIXED set of position classes, the longest training size plus
  END). It is fed the previous target point as the pointer network is, so the only difference is the output layer:
  positions beyond its training size are unreachable, which is the paper's argument for pointing.
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from zoo_nn.gpt import GPT


class RecallLSTM(nn.Module):
    """Token embedding -> LSTM -> linear head: ``ids (B, T) -> logits (B, T, vocab)``."""

    input_kind = "tokens"

    def __init__(self, vocab_size: int, dim: int = 64, layers: int = 1) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab_size, dim)
        self.lstm = nn.LSTM(dim, dim, num_layers=layers, batch_first=True)
        self.head = nn.Linear(dim, vocab_size)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.lstm(self.emb(ids))[0])


class RecallTransformer(GPT):
    """The reference GPT as a recall model (causal softmax attention, learned positions up to ``block_size``)."""

    input_kind = "tokens"


class Seq2SeqAttention(nn.Module):
    """LSTM encoder-decoder with content attention; outputs over ``positions`` fixed classes plus END.

    Contract of the pointer problems: ``forward(points (B, N, d), targets (B, M)) -> logprobs (B, M, N + 1)``
    (teacher forcing; END is index N) and ``decode(points, max_len) -> (B, max_len)``. Classes this model cannot name
    (positions >= ``positions`` when N is larger) get log-probability -inf.
    """

    input_kind = "points"

    def __init__(self, in_dim: int = 2, hidden: int = 64, positions: int = 10) -> None:
        super().__init__()
        self.positions = positions
        self.embed = nn.Linear(in_dim, hidden)
        self.encoder = nn.LSTM(hidden, hidden, batch_first=True)
        self.decoder = nn.LSTMCell(hidden, hidden)
        self.start = nn.Parameter(torch.zeros(hidden))
        self.attn_w = nn.Linear(hidden, hidden, bias=False)
        self.out = nn.Linear(2 * hidden, positions + 1)  # positions 0..P-1 and END

    def _classes_to_pointer(self, logits: torch.Tensor, n: int) -> torch.Tensor:
        """(B, P + 1) class log-probs -> (B, n + 1) pointer log-probs (END last; unreachable positions -inf)."""
        logp = F.log_softmax(logits, dim=-1)
        out = logp.new_full((logp.shape[0], n + 1), float("-inf"))
        k = min(n, self.positions)
        out[:, :k] = logp[:, :k]
        out[:, n] = logp[:, self.positions]
        return out

    def _step(self, inp: torch.Tensor, state: tuple, enc: torch.Tensor) -> tuple[torch.Tensor, tuple]:
        h, c = self.decoder(inp, state)
        scores = torch.einsum("bnh,bh->bn", enc, self.attn_w(h))
        ctx = torch.einsum("bn,bnh->bh", scores.softmax(-1), enc)
        return self.out(torch.cat([h, ctx], -1)), (h, c)

    def forward(self, points: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        b, n, _ = points.shape
        e = self.embed(points)
        enc, (h, c) = self.encoder(e)
        state, inp, out = (h[-1], c[-1]), self.start.expand(b, -1), []
        for t in range(targets.shape[1]):
            logits, state = self._step(inp, state, enc)
            out.append(self._classes_to_pointer(logits, n))
            prev = targets[:, t].clamp(0, n - 1)  # END / padding feed any point: nothing after them is scored
            inp = e[torch.arange(b), prev]
        return torch.stack(out, 1)

    @torch.no_grad()
    def decode(self, points: torch.Tensor, max_len: int) -> torch.Tensor:
        b, n, _ = points.shape
        e = self.embed(points)
        enc, (h, c) = self.encoder(e)
        state, inp, out = (h[-1], c[-1]), self.start.expand(b, -1), []
        for _ in range(max_len):
            logits, state = self._step(inp, state, enc)
            choice = self._classes_to_pointer(logits, n).argmax(-1)
            out.append(choice)
            inp = e[torch.arange(b), choice.clamp(0, n - 1)]
        return torch.stack(out, 1)
