"""ELMo (Peters et al. 2018): a character-CNN biLSTM language model and the task's scalar mix of its layers.

§3.1: a forward LM (p(t_k | t_1..t_{k-1})) and a backward LM (p(t_k | t_{k+1}..t_N)) share the context-independent
token representation x_k (a character CNN: 16-d character embeddings, filters of widths 1..7 max-pooled over the
characters, two highway layers, a linear projection) and the softmax; each direction has its own 2-layer LSTM with
projections and a residual connection between the layers. Training maximises the joint log likelihood of both
directions. §3.2, eq. (1): a downstream task sees ELMo_k = gamma * sum_j softmax(s)_j h_{k,j} over the L+1 = 3 layers
(h_0 = [x_k; x_k], h_j = [forward_j; backward_j]) with s and gamma learned on that task (:meth:`ELMo.fit_mix`).

What differs from the paper, and why:

* the softmax is the full one over the fitted vocabulary (the paper's code samples 8,192 negatives: its 800k-word
  vocabulary makes a full softmax too slow; here vocabularies are small, so the exact loss is affordable);
* Adam (lr 3e-3 on CPU, 2e-3 in the paper preset) instead of the official code's Adagrad (lr 0.2): on a CPU
  budget of seconds Adam reaches a lower loss in the same steps; gradients are clipped at norm 10 as there; no LSTM
  cell clipping;
* the CPU default is tiny (92 filters, 64 LSTM cells with 32-d projections, 16 characters per token) and trains
  for 1 epoch (batches of 64 sentences) on the mode's corpus; ``preset="paper"`` gives the paper's sizes (2,048
  filters, 4,096 cells with 512-d projections, 50 characters, the 1B Word Benchmark's 10 epochs), far beyond one core;
* the downstream model that learns s and gamma here is a nearest-centroid probe (the ``embedding_quality`` polysemy
  scorer made differentiable), not the paper's task networks; gamma is its inverse temperature (the scorer compares
  cosines, which gamma does not change) and each layer is rescaled to unit mean norm before mixing (the paper's
  optional layer normalisation, §3.2) so that s weighs directions, not scales.
"""
from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from zoo_task_embedding_quality.data import tokenize

log = logging.getLogger(__name__)

BOS, EOS, UNK = "<S>", "</S>", "<UNK>"
# character ids: 0 pads, 1..256 are UTF-8 bytes + 1, then begin/end of word and the sentence-boundary tokens' characters
PAD_CHAR, BOW_CHAR, EOW_CHAR, BOS_CHAR, EOS_CHAR = 0, 257, 258, 259, 260
N_CHARS = 261

CPU: dict[str, Any] = {"char_dim": 16, "filters": ((1, 4), (2, 8), (3, 16), (4, 16), (5, 16), (6, 16), (7, 16)),
                       "highway": 2, "proj_dim": 32, "lstm_dim": 64, "max_chars": 16, "dropout": 0.1,
                       "epochs": 1, "batch_size": 64, "lr": 3e-3, "min_count": 1}
# §3.1 / appendix: 2048 char-n-gram filters, 2 highway layers, 4096 LSTM cells with 512-d projections, dropout 0.1
PAPER: dict[str, Any] = {"char_dim": 16, "filters": ((1, 32), (2, 32), (3, 64), (4, 128), (5, 256), (6, 512), (7, 1024)),
                         "highway": 2, "proj_dim": 512, "lstm_dim": 4096, "max_chars": 50, "dropout": 0.1,
                         "epochs": 10, "batch_size": 128, "lr": 2e-3, "min_count": 3}
PRESETS = ("cpu", "paper")
LAYERS = 3  # token layer + 2 LSTM layers


class Highway(nn.Module):
    """y = g * relu(W x) + (1 - g) * x, g = sigmoid(W_g x) (Srivastava et al. 2015), gate bias -2 to carry at first."""

    def __init__(self, dim: int, layers: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(dim, 2 * dim) for _ in range(layers))
        for lin in self.layers:
            nn.init.constant_(lin.bias[dim:], -2.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for lin in self.layers:
            h, g = lin(x).chunk(2, dim=-1)
            g = torch.sigmoid(g)
            x = g * F.relu(h) + (1 - g) * x
        return x


class CharCNN(nn.Module):
    """x_k from the characters of token k: embeddings, convolutions max-pooled over characters, highway, projection."""

    def __init__(self, char_dim: int, filters: Sequence[tuple[int, int]], highway: int, proj_dim: int) -> None:
        super().__init__()
        self.emb = nn.Embedding(N_CHARS, char_dim, padding_idx=PAD_CHAR)
        self.convs = nn.ModuleList(nn.Conv1d(char_dim, n, w) for w, n in filters)
        width = sum(n for _, n in filters)
        self.highway = Highway(width, highway)
        self.proj = nn.Linear(width, proj_dim)

    def forward(self, chars: torch.Tensor) -> torch.Tensor:  # (..., C) -> (..., proj_dim)
        e = self.emb(chars.reshape(-1, chars.shape[-1])).transpose(1, 2)  # (N, char_dim, C)
        h = torch.cat([F.relu(conv(e)).max(dim=2).values for conv in self.convs], dim=1)
        return self.proj(self.highway(h)).reshape(*chars.shape[:-1], -1)


class DirectionalLM(nn.Module):
    """One direction's 2-layer LSTM with projections; the second layer's output adds its input (residual)."""

    def __init__(self, proj_dim: int, lstm_dim: int, dropout: float) -> None:
        super().__init__()
        self.lstm1 = nn.LSTM(proj_dim, lstm_dim, proj_size=proj_dim, batch_first=True)
        self.lstm2 = nn.LSTM(proj_dim, lstm_dim, proj_size=proj_dim, batch_first=True)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h1 = self.lstm1(self.drop(x))[0]
        h2 = self.lstm2(self.drop(h1))[0] + h1
        return h1, h2


def _reverse(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Each sequence of ``x`` (B, T, ...) reversed within its length; padding stays at the end."""
    t = torch.arange(x.shape[1])
    idx = torch.where(t[None] < lengths[:, None], lengths[:, None] - 1 - t[None], t[None])
    return x.gather(1, idx.reshape(*idx.shape, *([1] * (x.dim() - 2))).expand_as(x))


class ELMo(nn.Module):
    """The biLM (char-CNN, forward and backward LSTM LMs, tied softmax) and a scalar mix (s, gamma).

    ``fit(corpus)`` trains the biLM; ``fit_mix(texts, positions, labels, groups)`` learns s and gamma on a
    downstream labelling. ``layers(texts)`` gives each text's (3, T, 2*proj_dim) layers, ``embed_tokens(texts)``
    the mixed token vectors (T, 2*proj_dim), ``embed(texts)`` their mean per text. ``forward`` on a list of texts
    is ``embed``; on char ids (B, T, max_chars) of framed sentences (see :meth:`char_ids`), the mixed (B, T, D).
    """

    embedding_mode = "polysemy"

    def __init__(self, vocab: Sequence[str] = (), char_dim: int = 16, filters: Sequence[Sequence[int]] = CPU["filters"],
                 highway: int = 2, proj_dim: int = 32, lstm_dim: int = 64, max_chars: int = 16, dropout: float = 0.1,
                 epochs: int = 2, batch_size: int = 32, lr: float = 2e-3, min_count: int = 1) -> None:
        super().__init__()
        self.vocab = [BOS, EOS, UNK, *[w for w in vocab if w not in (BOS, EOS, UNK)]]
        self.index = {w: i for i, w in enumerate(self.vocab)}
        self.filters = [tuple(int(v) for v in f) for f in filters]
        self.proj_dim, self.max_chars, self.epochs, self.batch_size = proj_dim, max_chars, epochs, batch_size
        self.lr, self.min_count = lr, min_count
        self.chars = CharCNN(char_dim, self.filters, highway, proj_dim)
        self.fwd, self.bwd = DirectionalLM(proj_dim, lstm_dim, dropout), DirectionalLM(proj_dim, lstm_dim, dropout)
        self.softmax = nn.Linear(proj_dim, len(self.vocab))  # tied across the two directions (§3.1)
        self.drop = nn.Dropout(dropout)
        # eq. (1): ELMo = gamma * sum_j softmax(s)_j h_j; s = 0 (equal weights) and gamma = 1 until fit_mix
        self.mix_s = nn.Parameter(torch.zeros(LAYERS))
        self.mix_gamma = nn.Parameter(torch.ones(()))
        self.register_buffer("layer_scale", torch.ones(LAYERS))
        self._chars_of: dict[str, torch.Tensor] = {}

    @property
    def dim(self) -> int:
        return 2 * self.proj_dim

    # ------------------------------------------------------------------ inputs
    def _word_chars(self, w: str) -> list[int]:
        if w == BOS:
            body = [BOS_CHAR]
        elif w == EOS:
            body = [EOS_CHAR]
        else:
            body = [b + 1 for b in w.encode("utf-8")[: self.max_chars - 2]]
        return [BOW_CHAR, *body, EOW_CHAR]

    def char_ids(self, sentences: Sequence[Sequence[str]]) -> tuple[torch.Tensor, torch.Tensor]:
        """Char ids (B, T+2, max_chars) of the token lists framed by <S> ... </S>, and their lengths T+2."""
        words, idx, lengths = self._unique(sentences)
        return words[idx], lengths

    def _unique(self, sentences: Sequence[Sequence[str]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The batch's distinct words as char ids (U, max_chars), each position's word (B, T+2), the lengths.

        The char CNN runs once per distinct word of a batch (row 0 is padding), not once per position."""
        framed = [[BOS, *s, EOS] for s in sentences]
        lengths = torch.tensor([len(s) for s in framed])
        seen: dict[str, int] = {"": 0}
        idx = torch.zeros(len(framed), int(lengths.max()), dtype=torch.long)
        for b, s in enumerate(framed):
            idx[b, : len(s)] = torch.tensor([seen.setdefault(w, len(seen)) for w in s])
        words = torch.zeros(len(seen), self.max_chars, dtype=torch.long)
        for w, k in seen.items():
            if k:
                c = self._chars_of.get(w)
                if c is None:
                    c = self._chars_of[w] = torch.tensor(self._word_chars(w))
                words[k, : len(c)] = c
        return words, idx, lengths

    # ------------------------------------------------------------------ the biLM
    def bilm(self, chars: torch.Tensor, lengths: torch.Tensor, idx: torch.Tensor | None = None) -> torch.Tensor:
        """All layers (3, B, T, 2*proj_dim) of framed sentences: [x; x], [f1; b1], [f2; b2]. ``chars`` (B, T, C),
        or the distinct words (U, C) with ``idx`` (B, T) their positions (:meth:`_unique`)."""
        x = self.chars(chars) if idx is None else self.chars(chars)[idx]
        f1, f2 = self.fwd(x)
        b1, b2 = (_reverse(h, lengths) for h in self.bwd(_reverse(x, lengths)))
        return torch.stack([torch.cat([x, x], -1), torch.cat([f1, b1], -1), torch.cat([f2, b2], -1)])

    def lm_loss(self, chars: torch.Tensor, lengths: torch.Tensor, targets: torch.Tensor,
                idx: torch.Tensor | None = None) -> torch.Tensor:
        """Mean negative log likelihood of the forward and the backward LM (§3.1's joint objective), per token."""
        x = self.chars(chars) if idx is None else self.chars(chars)[idx]
        f2 = self.fwd(x)[1]
        b2 = _reverse(self.bwd(_reverse(x, lengths))[1], lengths)
        t = torch.arange(x.shape[1])
        # forward: position k predicts k+1 (k = 0 .. n-2); backward: position k predicts k-1 (k = 1 .. n-1)
        valid = t[None, :-1] < (lengths[:, None] - 1)
        lf = F.cross_entropy(self.softmax(self.drop(f2[:, :-1][valid])), targets[:, 1:][valid])
        lb = F.cross_entropy(self.softmax(self.drop(b2[:, 1:][valid])), targets[:, :-1][valid])
        return (lf + lb) / 2

    # ------------------------------------------------------------------ the scalar mix
    def mix(self, layers: torch.Tensor, weights: torch.Tensor | None = None) -> torch.Tensor:
        """eq. (1) over the first axis of ``layers`` (3, ...): gamma * sum_j w_j h_j / scale_j, w = softmax(s)."""
        w = torch.softmax(self.mix_s, 0) if weights is None else weights
        scaled = layers / self.layer_scale.reshape(-1, *([1] * (layers.dim() - 1)))
        return self.mix_gamma * torch.einsum("j,j...->...", w, scaled)

    def mix_weights(self) -> list[float]:
        return torch.softmax(self.mix_s.detach(), 0).tolist()

    # ------------------------------------------------------------------ texts
    @torch.no_grad()
    def layers(self, texts: Sequence[str], *, batch_size: int = 256) -> list[torch.Tensor]:
        """Per text its (3, T, 2*proj_dim) layers (T tokens as the task tokenises them; framing dropped)."""
        was = self.training
        self.eval()
        toks = [tokenize(t) for t in texts]
        out: list[torch.Tensor] = []
        for i in range(0, len(toks), batch_size):
            chunk = toks[i:i + batch_size]
            words, idx, lengths = self._unique(chunk)
            h = self.bilm(words, lengths, idx)
            out += [h[:, b, 1:1 + len(s)] for b, s in enumerate(chunk)]
        self.train(was)
        return out

    @torch.no_grad()
    def embed_tokens(self, texts: Sequence[str], *, layer: int | None = None) -> list[torch.Tensor]:
        """Per text its (T, 2*proj_dim) token vectors: the learned mix, or one ``layer`` (0 token, 1, 2 LSTM)."""
        w = None if layer is None else F.one_hot(torch.tensor(layer), LAYERS).float()
        return [self.mix(h, w) for h in self.layers(texts)]

    @torch.no_grad()
    def embed(self, texts: Sequence[str], *, layer: int | None = None) -> torch.Tensor:
        """(N, 2*proj_dim): the mean of each text's mixed token vectors (zeros for a text without tokens)."""
        out = torch.zeros(len(texts), self.dim)
        for n, v in enumerate(self.embed_tokens(texts, layer=layer)):
            if len(v):
                out[n] = v.mean(0)
        return out

    def forward(self, x: list[str] | torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        if isinstance(x, torch.Tensor):
            lengths = lengths if lengths is not None else torch.full((x.shape[0],), x.shape[1])
            return self.mix(self.bilm(x, lengths))
        return self.embed(x)

    # ------------------------------------------------------------------ training
    def fit(self, corpus: Any, *, epochs: int | None = None, seed: int = 0, progress: Any = None,
            budget_s: float | None = None, max_steps: int | None = None) -> dict[str, float]:
        """Train the biLM on ``corpus`` (a ``TextCorpus`` or token lists): vocabulary of words seen ``min_count``
        times (the softmax's; inputs are characters, so every word has a representation), ``epochs`` passes of
        Adam over shuffled sentence batches, stopped early after ``max_steps`` steps or ``budget_s`` seconds.
        Returns the final training loss (nats per token) and timings."""
        t0 = time.perf_counter()
        torch.manual_seed(seed)
        rng = np.random.default_rng(seed)
        # a new biLM from this seed: the weights drawn at construction depend on what the process drew before
        for m in self.modules():
            if m is not self and hasattr(m, "reset_parameters"):
                m.reset_parameters()
        for lin in self.chars.highway.layers:
            nn.init.constant_(lin.bias[lin.out_features // 2:], -2.0)
        sentences = [list(s) for s in (corpus.sentences if hasattr(corpus, "sentences") else corpus) if len(s)]
        counts: dict[str, int] = {}
        for s in sentences:
            for w in s:
                counts[w] = counts.get(w, 0) + 1
        vocab = [w for w, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if c >= self.min_count]
        self.vocab = [BOS, EOS, UNK, *vocab]
        self.index = {w: i for i, w in enumerate(self.vocab)}
        self.softmax = nn.Linear(self.proj_dim, len(self.vocab))
        opt = torch.optim.Adam(self.parameters(), lr=self.lr)
        unk = self.index[UNK]
        targets = [torch.tensor([self.index.get(w, unk) for w in (BOS, *s, EOS)]) for s in sentences]
        self.train()
        losses, steps, tokens = [], 0, 0
        n_epochs = self.epochs if epochs is None else epochs
        for _ in range(n_epochs):
            order = rng.permutation(len(sentences))
            for i in range(0, len(order), self.batch_size):
                batch = order[i:i + self.batch_size]
                words, idx, lengths = self._unique([sentences[b] for b in batch])
                tgt = nn.utils.rnn.pad_sequence([targets[b] for b in batch], batch_first=True)
                loss = self.lm_loss(words, lengths, tgt, idx)
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.parameters(), 10.0)
                opt.step()
                losses.append(loss.item())
                steps += 1
                tokens += int((lengths - 1).sum())
                if (budget_s is not None and time.perf_counter() - t0 > budget_s) or steps == max_steps:
                    break
            if steps == max_steps:
                break
        self.eval()
        prov = getattr(self, "zoo", None)
        if prov is not None:  # what save_pretrained writes: the fitted vocabulary rebuilds the softmax
            self.zoo = dataclasses.replace(prov, model_args={**prov.model_args, "vocab": list(vocab)})
        tail = losses[-max(1, len(losses) // 10):]
        secs = time.perf_counter() - t0
        log.info("elmo: %d steps, %d-word vocabulary, loss %.3f, %.1f s", steps, len(vocab), np.mean(tail), secs)
        return {"vocabulary": float(len(vocab)), "train_steps": float(steps), "final_train_loss": float(np.mean(tail)),
                "train_seconds": secs, "tokens_per_second": tokens / max(secs, 1e-9)}

    def fit_mix(self, texts: Sequence[str], positions: Sequence[int], labels: Sequence[int], groups: Sequence[Any], *,
                steps: int = 200, lr: float = 0.05) -> dict[str, float]:
        """Learn s and gamma (eq. 1) on a downstream labelling, the biLM frozen.

        Each item is token ``positions[i]`` of ``texts[i]`` with class ``labels[i]`` inside ``groups[i]`` (e.g. the
        ambiguous word). The downstream model is a nearest-centroid probe made soft: logits = gamma * cos(mixed
        vector, centroid of each class of its group), centroids from the other items (leave-one-out), cross entropy,
        Adam for ``steps`` full-batch steps. Returns the learned softmax(s), gamma and the final loss."""
        h = torch.stack([v[:, p] for v, p in zip(self.layers(texts), positions, strict=True)], 1)  # (3, N, D)
        self.layer_scale.copy_(h.norm(dim=-1).mean(1).clamp_min(1e-8))
        y = torch.as_tensor(np.asarray(labels), dtype=torch.long)
        gid = {g: k for k, g in enumerate(dict.fromkeys(groups))}
        g = torch.tensor([gid[x] for x in groups])
        classes = int(y.max()) + 1
        onehot = F.one_hot(g * classes + y, len(gid) * classes).float()  # (N, groups*classes)
        own = F.one_hot(g, len(gid)).float().repeat_interleave(classes, 1)  # the columns of each item's group
        opt = torch.optim.Adam([self.mix_s, self.mix_gamma], lr=lr)
        loss = torch.zeros(())
        for _ in range(steps):
            m = self.mix(h) / self.mix_gamma
            u = F.normalize(m, dim=-1)
            sums = onehot.T @ u  # per (group, class) sum of unit vectors
            cnt = onehot.sum(0)
            loo = (sums[None] - onehot[:, :, None] * u[:, None]) / (cnt[None] - onehot).clamp_min(1)[:, :, None]
            cos = (u[:, None] * F.normalize(loo, dim=-1)).sum(-1)  # (N, groups*classes)
            logits = (self.mix_gamma * cos).masked_fill(own == 0, float("-inf"))
            loss = F.cross_entropy(logits, g * classes + y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        return {"mix_loss": loss.item(), "gamma": self.mix_gamma.item(),
                **{f"mix_w{j}": w for j, w in enumerate(self.mix_weights())}}


def elmo(vocab: Sequence[str] = (), preset: str = "cpu", **overrides: Any) -> ELMo:
    """ELMo's biLM. ``preset="cpu"``: 92 char filters, 32-d projections, 64 LSTM cells, 2 epochs; ``preset="paper"``:
    2,048 filters, 512-d projections, 4,096 cells (§3.1 / appendix). Arguments given override the preset.

    >>> elmo(preset="paper", lstm_dim=16, proj_dim=8, filters=((1, 4),)).max_chars, elmo(lstm_dim=48).proj_dim
    (50, 32)
    """
    if preset not in PRESETS:
        raise ValueError(f"elmo preset must be one of {PRESETS}, got {preset!r}")
    args = {**(PAPER if preset == "paper" else CPU), **{k: v for k, v in overrides.items() if v is not None}}
    return ELMo(vocab, **args)
