"""WAVES (Gu et al. 2025, arXiv:2509.11312): weakly supervised statement-level vulnerability localisation by MIL.

A function is a bag of statements. Multiple-instance learning's assumption, which the paper builds on: a function is
vulnerable iff at least one of its statements is; a safe function has no vulnerable statement. WAVES turns the
function label into pseudo labels for the statements and trains a statement classifier on them, so one model both
detects (function) and localises (statement) with no statement label in training.

What comes from where. The abstract gives: function labels converted into statement pseudo labels, which train the
classifiers; detection and localisation from one model; no statement labels. Secondary summaries of the paper's text
(the full text could not be read here) give: statements scored by a classifier whose scores are pooled into the
function's prediction by a max channel and a mean channel with a weighted fusion. Not available, so stated here as our
rule: the pseudo labels are

* every statement of a NON-vulnerable function: 0 (MIL: a safe bag has only safe instances);
* in a vulnerable function, the ``top_k`` statements the current model scores highest: 1; its other statements carry
  no pseudo label (they are not trusted to be safe or vulnerable);

used from step ``pseudo_from`` on (a first phase on the function loss alone lets the scorer rank statements before
its own ranking is turned into labels). The architecture here (``WAVES``):

    h_s = GRU(embed(tokens of statement s))                  statement encoder, last hidden state
    z_s = scorer(h_s)                                        statement logit (the localisation score)
    function_logit = fusion * max_s z_s + (1 - fusion) * mean_s z_s   weighted max/mean MIL pooling
    loss = BCE(function_logit, y) + pseudo_weight * (BCE over pseudo 1s + BCE over pseudo 0s) / 2

Deviations: a GRU over our toy grammar's tokens instead of the paper's pre-trained code transformer over BPE tokens
(CodeBERT-scale models do not fit the CPU budget, and the task's ``attn_mil`` baseline uses the same GRU, so the
comparison isolates the MIL rule); the pseudo-labelling rule and the fusion weight are ours (above); no ``paper``
preset can name the paper's sizes, so ``preset="paper"`` is a wider (128-unit) encoder with the same rule.
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from zoo_task_code_text.data import VUL_VOCAB

__all__ = ["CPU", "PAPER", "WAVES", "pseudo_labels", "waves_mil"]

CPU: dict[str, Any] = {"dim": 32, "fusion": 0.5, "top_k": 1, "pseudo_from": 100, "pseudo_weight": 1.0}
PAPER: dict[str, Any] = {**CPU, "dim": 128}
PRESETS = {"cpu": CPU, "paper": PAPER}
IGNORE = -1.0  # a statement without a pseudo label


def pseudo_labels(scores: torch.Tensor, mask: torch.Tensor, labels: torch.Tensor, top_k: int = 1) -> torch.Tensor:
    """Statement pseudo labels ``(B, S)`` from FUNCTION labels ``(B,)`` and the model's statement scores.

    Safe function: 1.0 -> 0 for all its statements; vulnerable function: its ``top_k`` highest-scoring statements 1,
    the rest ``IGNORE`` (-1); padding ``IGNORE``. Nothing but the function label and the scores is read.

    >>> pseudo_labels(torch.tensor([[0.1, 2.0, -1.0], [3.0, 0.0, 0.0]]), torch.tensor([[True] * 3, [True, True, False]]),
    ...               torch.tensor([1.0, 0.0]))
    tensor([[-1.,  1., -1.],
            [ 0.,  0., -1.]])
    """
    s = scores.detach().masked_fill(~mask, float("-inf"))
    out = torch.full_like(s, IGNORE)
    out = torch.where(mask & (labels[:, None] == 0), torch.zeros_like(s), out)
    k = min(top_k, s.shape[1])
    top = s.topk(k, dim=1).indices
    hit = torch.zeros_like(mask).scatter(1, top, True) & mask & (labels[:, None] == 1)
    return torch.where(hit, torch.ones_like(s), out)


class WAVES(nn.Module):
    """GRU statement encoder -> statement scorer -> max/mean fused MIL pooling; pseudo-label loss (see the module).

    ``forward(tokens (B, S, T), mask (B, S)) -> {"function_logit": (B,), "statement_scores": (B, S), "mask": (B, S)}``
    (padding statements score -inf); ``loss(output, labels)`` takes function labels only.

    >>> net = WAVES(dim=8)
    >>> out = net(torch.randint(1, 30, (2, 5, 6)), torch.ones(2, 5, dtype=torch.bool))
    >>> out["function_logit"].shape, out["statement_scores"].shape
    (torch.Size([2]), torch.Size([2, 5]))
    """

    input_kind = "bags"

    def __init__(self, dim: int = CPU["dim"], fusion: float = CPU["fusion"], top_k: int = CPU["top_k"],
                 pseudo_from: int = CPU["pseudo_from"], pseudo_weight: float = CPU["pseudo_weight"],
                 vocab_size: int = len(VUL_VOCAB)) -> None:
        super().__init__()
        if not 0.0 <= fusion <= 1.0:
            raise ValueError(f"WAVES: fusion is the weight of the max channel, in [0, 1]; got {fusion}")
        self.dim, self.fusion, self.top_k = dim, fusion, top_k
        self.pseudo_from, self.pseudo_weight = pseudo_from, pseudo_weight
        self.emb = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.gru = nn.GRU(dim, dim, batch_first=True)
        self.scorer = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, 1))
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))  # loss calls so far (the phase clock)

    def encode(self, tokens: torch.Tensor) -> torch.Tensor:
        """Statement vectors ``(B, S, dim)``: the GRU's last hidden state over each statement's tokens."""
        b, s, t = tokens.shape
        _, h = self.gru(self.emb(tokens.reshape(b * s, t)))
        return h[-1].reshape(b, s, -1)

    def pool(self, scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The function logit: ``fusion * max + (1 - fusion) * mean`` of the real statements' logits."""
        top = scores.masked_fill(~mask, float("-inf")).max(1).values
        mean = scores.masked_fill(~mask, 0.0).sum(1) / mask.sum(1).clamp_min(1)
        return self.fusion * top + (1.0 - self.fusion) * mean

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor) -> dict[str, torch.Tensor]:
        z = self.scorer(self.encode(tokens)).squeeze(-1)
        return {"function_logit": self.pool(z, mask), "statement_scores": z.masked_fill(~mask, float("-inf")),
                "mask": mask}

    def loss(self, output: dict[str, torch.Tensor], labels: torch.Tensor) -> torch.Tensor:
        """Function BCE, plus (from step ``pseudo_from``) BCE of the statement logits on their pseudo labels."""
        y = labels.float()
        loss = F.binary_cross_entropy_with_logits(output["function_logit"], y)
        if self.training:
            self.steps += 1
        if int(self.steps) > self.pseudo_from and self.pseudo_weight > 0:
            mask, z = output["mask"], output["statement_scores"]
            target = pseudo_labels(z, mask, y, self.top_k)
            # safe functions give ~S negatives for every pseudo positive: balance the two classes, or the negatives
            # push every statement (and with them the pooled function logit) below 0
            for cls in (0.0, 1.0):
                pick = target == cls
                if pick.any():
                    loss = loss + 0.5 * self.pseudo_weight * F.binary_cross_entropy_with_logits(z[pick], target[pick])
        return loss

    def extra_repr(self) -> str:
        return (f"dim={self.dim}, fusion={self.fusion}, top_k={self.top_k}, pseudo_from={self.pseudo_from}, "
                f"pseudo_weight={self.pseudo_weight}")


def waves_mil(*, preset: str = "cpu", **overrides: Any) -> WAVES:
    """WAVES at ``preset`` ("cpu": 32 units; "paper": 128, same rule), any field overridden by keyword.

    >>> waves_mil().dim, waves_mil(preset="paper", top_k=2).top_k
    (32, 2)
    """
    if preset not in PRESETS:
        raise ValueError(f"waves_mil: unknown preset {preset!r}; choose from {sorted(PRESETS)}")
    unknown = set(overrides) - set(CPU)
    if unknown:
        raise ValueError(f"waves_mil: unknown option(s) {sorted(unknown)}; the options are {sorted(CPU)}")
    return WAVES(**{**PRESETS[preset], **overrides})
