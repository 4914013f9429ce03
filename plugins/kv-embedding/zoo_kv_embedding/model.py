"""KV-Embedding (Tang & Yang, arXiv 2601.01046): training-free sentence embeddings from a frozen decoder LM.

The method (the paper's method section; read here from its abstract and public summaries of the full text): in a
causal LM every token sees only its past, so early tokens know nothing of the sequence. At each selected layer the
final token's key and value, which have attended over the whole sequence, are **re-routed as a prefix**: prepended
to the layer's keys and values so that every query (with an optional bias on the prefix logit) can attend to this
summary, all inside the one forward pass that also computes them. The embedding pools the last layer's hidden
states. The layers are chosen without labels: TwoNN intrinsic dimension of the last token's state at each layer's
input, on a sample of texts; the window of ``num_layers`` layers around its minimum is re-routed
(:mod:`.twonn`). Nothing of the LM is trained by the method.

No pretrained decoder LM is available offline, so the frozen LM here is a small word-level GPT (``zoo_nn.gpt``:
pre-norm, learned positions, GPT-2 initialisation) that ``fit`` trains on the task's corpus as an ordinary
next-word model (documents joined by ``<eos>``); every text is then embedded as ``its words + <eos>``. Real
Qwen/Mistral/Llama checkpoints go through :mod:`.hf`.

Deviations from the paper, and why:

- the LM is a 0.73M-parameter word-level GPT trained for one to two minutes on 9,033 Wikipedia leads, not a 7B LLM;
- no compression prompt ("...in one word") for the tiny LM: it has seen only encyclopaedic leads, so an
  instruction would be noise; texts end in ``<eos>`` (the token whose state summarises the text). :mod:`.hf`
  keeps a prompt for instruction-following LMs;
- pooling: ``"mean"`` by default (the CPU claim); ``preset="paper"`` uses ``"hybrid"`` (the mean of the mean-pooled
  and the last-token vectors), how public summaries describe the paper's pooling; the prefix bias defaults to 0;
- layer 0 is never re-routed: its keys are the bare token embeddings, and the last token (``<eos>``) would carry
  nothing about the text.
"""
from __future__ import annotations

import dataclasses
import logging
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from zoo_nn.gpt import GPT, Attention
from zoo_task_embedding_quality.data import tokenize

from .twonn import select_layers, two_nn

log = logging.getLogger(__name__)

__all__ = ["KVEmbedding", "kv_embedding", "kv_embedding_lm", "SPECIALS", "POOLINGS", "CPU", "PAPER", "PRESETS"]

SPECIALS = ("<pad>", "<unk>", "<eos>")
PAD, UNK, EOS = 0, 1, 2
POOLINGS = ("mean", "last", "hybrid")
# the frozen word-level GPT, and how it is trained (about a minute on one core) and re-routed
CPU: dict[str, Any] = {"vocab_size": 4096, "dim": 64, "depth": 4, "heads": 4, "block_size": 128, "num_layers": 2,
                       "bias": 0.0, "pooling": "mean", "steps": 250, "batch_size": 16, "lr": 3e-3, "id_samples": 500}
PAPER: dict[str, Any] = {**CPU, "pooling": "hybrid"}
PRESETS = ("cpu", "paper")
BATCH = 64  # texts per forward pass when embedding


def _attend(attn: Attention, x: torch.Tensor, lengths: torch.Tensor, prefix: bool, bias: float) -> torch.Tensor:
    """``attn`` on ``x`` (right-padded to ``lengths``), with the last real token's key/value prepended when ``prefix``.

    The prefix is the state of token ``lengths - 1`` at this layer, computed in this same pass: every query may
    attend to it (its logit shifted by ``bias``) besides its causal past; padded keys are never attended.
    """
    b, t, d = x.shape
    h = attn.heads
    split = lambda y: y.view(b, t, h, d // h).transpose(1, 2)  # noqa: E731
    q, k, v = attn.q_norm(split(attn.q(x))), attn.k_norm(split(attn.k(x))), split(attn.v(x))
    pos = torch.arange(t)
    allowed = (pos[None, :] <= pos[:, None])[None, None] & (pos[None, :] < lengths[:, None])[:, None, None, :]
    logit_shift = torch.zeros(b, 1, t, t)
    if prefix:
        last = (lengths - 1).clamp(min=0)
        rows = torch.arange(b)
        k = torch.cat([k[rows, :, last][:, :, None], k], dim=2)
        v = torch.cat([v[rows, :, last][:, :, None], v], dim=2)
        allowed = torch.cat([torch.ones(b, 1, t, 1, dtype=torch.bool), allowed.expand(b, 1, t, t)], dim=-1)
        logit_shift = torch.cat([torch.full((b, 1, t, 1), float(bias)), logit_shift], dim=-1)
    mask = logit_shift.masked_fill(~allowed, float("-inf"))
    y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    return attn.out(y.transpose(1, 2).reshape(b, t, d))


class KVEmbedding(nn.Module):
    """A frozen word-level GPT (``lm``) embedding texts by KV re-routing (``reroute=True``) or plain pooling.

    ``embed(texts)`` -> (N, dim): each text is tokenised as the task does, cut to ``block_size - 1`` words, closed
    with ``<eos>``; the last layer's normalised hidden states are pooled (``pooling``: "mean" over the tokens,
    "last": the ``<eos>`` state, "hybrid": the mean of the two). With ``reroute``, blocks in ``layers`` attend to
    the last token's key/value as a prefix (``bias`` added to its logit); ``layers=None`` picks them by TwoNN at
    the end of ``fit`` (the middle blocks until then). ``fit(corpus, steps=, seed=)`` builds the vocabulary (the
    ``vocab_size - 3`` most frequent words) and trains the LM on next-word prediction, then freezes it.

    >>> m = KVEmbedding(vocab_size=16, dim=16, depth=2, heads=2, block_size=8)
    >>> m.embed(["a cat", "a dog sat"]).shape
    torch.Size([2, 16])
    """

    embedding_mode = "sentence"

    def __init__(self, vocab: Sequence[str] = (), vocab_size: int = 4096, dim: int = 64, depth: int = 4, heads: int = 4,
                 block_size: int = 128, reroute: bool = True, layers: Sequence[int] | None = None, num_layers: int = 2,
                 bias: float = 0.0, pooling: str = "mean", steps: int = 250, batch_size: int = 16, lr: float = 3e-3,
                 id_samples: int = 500) -> None:
        super().__init__()
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
        vocab = list(vocab) or list(SPECIALS)
        if tuple(vocab[:3]) != SPECIALS or len(vocab) > vocab_size:
            raise ValueError(f"vocab must start with {SPECIALS} and hold at most vocab_size={vocab_size} entries")
        if layers is not None and any(not 0 <= i < depth for i in layers):
            raise ValueError(f"layers must be block indices in [0, {depth}), got {list(layers)}")
        self.vocab, self.index = vocab, {w: i for i, w in enumerate(vocab)}
        self.vocab_size, self.block_size, self.depth = vocab_size, block_size, depth
        self.reroute, self.bias, self.pooling, self.num_layers = reroute, bias, pooling, num_layers
        self.auto_layers = layers is None
        self.layers = list(layers) if layers is not None else self._middle_layers()
        self.steps, self.batch_size, self.lr, self.id_samples = steps, batch_size, lr, id_samples
        self.lm = GPT(vocab_size=vocab_size, dim=dim, depth=depth, heads=heads, block_size=block_size)
        self.layer_ids: list[float] = []  # TwoNN intrinsic dimension of each block's input (after fit)

    @property
    def dim(self) -> int:
        return self.lm.tok.embedding_dim

    def _middle_layers(self) -> list[int]:
        return select_layers([abs(i - self.depth / 2) for i in range(self.depth)], self.num_layers, range(1, self.depth))

    # ------------------------------------------------------------------ encoding

    def ids(self, text: str) -> list[int]:
        """The token ids of ``text``: its words (unknown ones as ``<unk>``), at most ``block_size - 1``, then ``<eos>``."""
        return [self.index.get(w, UNK) for w in tokenize(text)][: self.block_size - 1] + [EOS]

    def hidden_states(self, ids: torch.Tensor, lengths: torch.Tensor, *, reroute: bool | None = None,
                      layers: Sequence[int] | None = None, bias: float | None = None) -> list[torch.Tensor]:
        """Every block's input, then the final normalised states: ``depth + 1`` tensors of (B, T, dim).

        ``ids`` (B, T) right-padded to ``lengths``; re-routing as configured unless overridden.
        """
        reroute = self.reroute if reroute is None else reroute
        routed = set(self.layers if layers is None else layers) if reroute else set()
        bias = self.bias if bias is None else bias
        lm = self.lm
        x = lm.tok(ids) + lm.pos(torch.arange(ids.shape[1]))
        states = []
        for i, block in enumerate(lm.blocks):
            states.append(x)
            x = x + _attend(block.attn, block.norm1(x), lengths, i in routed, bias)
            x = x + block.mlp(block.norm2(x))
        states.append(lm.norm(x))
        return states

    def _batches(self, texts: Sequence[str]):
        seqs = [self.ids(t) for t in texts]
        order = np.argsort([len(s) for s in seqs], kind="stable")
        for at in range(0, len(order), BATCH):
            pick = order[at:at + BATCH]
            lengths = torch.tensor([len(seqs[i]) for i in pick])
            ids = torch.full((len(pick), int(lengths.max())), PAD, dtype=torch.long)
            for row, i in enumerate(pick):
                ids[row, : len(seqs[i])] = torch.tensor(seqs[i])
            yield pick, ids, lengths

    @torch.no_grad()
    def pooled(self, texts: Sequence[str], *, reroute: bool | None = None, layers: Sequence[int] | None = None,
               bias: float | None = None) -> dict[str, torch.Tensor]:
        """Every pooling of the last layer at once: ``{"mean", "last", "hybrid"}`` -> (N, dim) float32."""
        out = {p: torch.zeros(len(texts), self.dim) for p in POOLINGS}
        for pick, ids, lengths in self._batches(texts):
            h = self.hidden_states(ids, lengths, reroute=reroute, layers=layers, bias=bias)[-1]
            valid = (torch.arange(ids.shape[1])[None, :] < lengths[:, None]).unsqueeze(-1)
            mean = (h * valid).sum(1) / lengths[:, None]
            last = h[torch.arange(len(pick)), lengths - 1]
            rows = torch.as_tensor(pick)
            out["mean"][rows], out["last"][rows], out["hybrid"][rows] = mean, last, (mean + last) / 2
        return out

    def embed(self, texts: Sequence[str]) -> torch.Tensor:
        """(N, dim) float32, one row per text (see the class docstring)."""
        return self.pooled(list(texts))[self.pooling]

    def forward(self, texts: Sequence[str]) -> torch.Tensor:
        return self.embed(texts)

    # ------------------------------------------------------------------ the layer selection

    @torch.no_grad()
    def select_layers(self, texts: Sequence[str]) -> list[int]:
        """Set ``layers`` to the ``num_layers`` blocks around the TwoNN minimum of the last token's state.

        The state is each block's input at the ``<eos>`` token, without re-routing, over ``texts``; block 0 is not
        a candidate (its input is the bare token embedding). Returns the chosen blocks.
        """
        last: list[list[torch.Tensor]] = [[] for _ in range(self.depth)]
        for pick, ids, lengths in self._batches(texts):
            states = self.hidden_states(ids, lengths, reroute=False)
            for i in range(self.depth):
                last[i].append(states[i][torch.arange(len(pick)), lengths - 1])
        self.layer_ids = [two_nn(torch.cat(s).double().numpy()) for s in last]
        self.layers = select_layers(self.layer_ids, self.num_layers, range(1, self.depth))
        if self.reroute:  # kv_embedding_lm has no layers to record
            self._record(layers=list(self.layers))
        return self.layers

    def _record(self, **args: Any) -> None:
        prov = getattr(self, "zoo", None)
        if prov is not None:  # what save_pretrained writes: the fitted vocabulary and layers rebuild this model
            self.zoo = dataclasses.replace(prov, model_args={**prov.model_args, **args})

    # ------------------------------------------------------------------ training the frozen LM

    def fit(self, corpus: Any, *, steps: int | None = None, seed: int = 0, progress: Any = None) -> dict[str, float]:
        """Train the LM on ``corpus`` (a ``TextCorpus``) by next-word prediction, freeze it, then pick the layers.

        The vocabulary is rebuilt from the corpus; the LM is re-initialised from ``seed``; windows of
        ``block_size + 1`` tokens are drawn uniformly from the documents joined by ``<eos>``. AdamW
        (betas 0.9/0.95, weight decay 0.1), linear warm-up over 10% of the steps then cosine decay to lr/10.
        """
        t0 = time.perf_counter()
        steps = self.steps if steps is None else int(steps)
        docs = corpus.documents()
        counts: dict[str, int] = {}
        for d in docs:
            for w in d:
                counts[w] = counts.get(w, 0) + 1
        words = [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))][: self.vocab_size - len(SPECIALS)]
        self.vocab = list(SPECIALS) + words
        self.index = {w: i for i, w in enumerate(self.vocab)}
        stream = np.fromiter((i for d in docs for i in [*(self.index.get(w, UNK) for w in d), EOS]), dtype=np.int64)
        torch.manual_seed(seed)
        a = self.lm.arch
        self.lm = GPT(vocab_size=self.vocab_size, dim=a["dim"], depth=a["depth"], heads=a["heads"],
                      block_size=a["block_size"])
        rng = np.random.default_rng(seed)
        span = self.block_size + 1
        if len(stream) <= span:
            raise ValueError(f"corpus of {len(stream)} tokens is shorter than one training window ({span})")
        opt = torch.optim.AdamW(self.lm.optim_groups(0.1), lr=self.lr, betas=(0.9, 0.95))
        warm = max(1, steps // 10)
        self.lm.train()
        losses = []
        for step in range(steps):
            decay = 0.1 + 0.45 * (1 + math.cos(math.pi * (step - warm) / max(1, steps - warm)))
            frac = (step + 1) / warm if step < warm else decay
            for g in opt.param_groups:
                g["lr"] = self.lr * frac
            starts = rng.integers(0, len(stream) - span, self.batch_size)
            batch = torch.from_numpy(np.stack([stream[s:s + span] for s in starts]))
            logits = self.lm(batch[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, self.vocab_size), batch[:, 1:].reshape(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.lm.parameters(), 1.0)
            opt.step()
            losses.append(loss.item())
        self.lm.eval().requires_grad_(False)  # frozen from here on: the method itself trains nothing
        train_s = time.perf_counter() - t0
        self._record(vocab=list(self.vocab))
        if self.auto_layers and self.reroute:
            pick = rng.choice(len(docs), min(self.id_samples, len(docs)), replace=False)
            self.select_layers([" ".join(docs[i]) for i in np.sort(pick)])
        tail = losses[-max(1, steps // 10):]
        log.info("kv_embedding LM: %d steps, loss %.3f, %.1f s; layers %s (TwoNN %s)", steps, np.mean(tail), train_s,
                 self.layers, [round(v, 1) for v in self.layer_ids])
        return {"lm_steps": float(steps), "lm_train_tokens": float(steps * self.batch_size * self.block_size),
                "lm_final_loss": float(np.mean(tail)), "lm_train_seconds": train_s,
                "vocabulary": float(len(self.vocab)), "corpus_tokens": float(len(stream)),
                **{f"twonn_layer{i}": v for i, v in enumerate(self.layer_ids)},
                **{f"rerouted_layer{j}": float(i) for j, i in enumerate(self.layers)}}


def _build(preset: str, reroute: bool, given: dict[str, Any]) -> KVEmbedding:
    if preset not in PRESETS:
        raise ValueError(f"kv_embedding preset must be one of {PRESETS}, got {preset!r}")
    args = {**(PAPER if preset == "paper" else CPU), **{k: v for k, v in given.items() if v is not None}}
    return KVEmbedding(reroute=reroute, **args)


def kv_embedding(vocab: Sequence[str] = (), preset: str = "cpu", layers: Sequence[int] | None = None,
                 num_layers: int | None = None, bias: float | None = None, pooling: str | None = None,
                 vocab_size: int | None = None, dim: int | None = None, depth: int | None = None,
                 heads: int | None = None, block_size: int | None = None, steps: int | None = None,
                 batch_size: int | None = None, lr: float | None = None, id_samples: int | None = None) -> KVEmbedding:
    """KV-Embedding on the word-level GPT. ``preset="cpu"``: 4,096 words, d=64, 4 blocks, mean pooling, 2 re-routed
    blocks picked by TwoNN, LM trained 250 steps; ``preset="paper"``: the same with hybrid (mean + last) pooling.

    >>> kv_embedding(dim=32, heads=2).reroute, kv_embedding(preset="paper").pooling
    (True, 'hybrid')
    """
    return _build(preset, True, dict(vocab=vocab or None, layers=layers, num_layers=num_layers, bias=bias,
                                     pooling=pooling, vocab_size=vocab_size, dim=dim, depth=depth, heads=heads,
                                     block_size=block_size, steps=steps, batch_size=batch_size, lr=lr,
                                     id_samples=id_samples))


def kv_embedding_lm(vocab: Sequence[str] = (), preset: str = "cpu", pooling: str | None = None,
                    vocab_size: int | None = None, dim: int | None = None, depth: int | None = None,
                    heads: int | None = None, block_size: int | None = None, steps: int | None = None,
                    batch_size: int | None = None, lr: float | None = None) -> KVEmbedding:
    """The same frozen word-level GPT without re-routing: the paper's training-free baselines, mean pooling
    (``pooling="mean"``) or last-token pooling (``pooling="last"``).

    >>> kv_embedding_lm(pooling="last").reroute
    False
    """
    return _build(preset, False, dict(vocab=vocab or None, pooling=pooling, vocab_size=vocab_size, dim=dim, depth=depth,
                                      heads=heads, block_size=block_size, steps=steps, batch_size=batch_size, lr=lr))
