"""MrBERT (Tamayo et al. 2026, arXiv 2602.21379): a ModernBERT encoder whose pooled embedding is Matryoshka.

    >>> import zoo
    >>> model = zoo.create("mrbert")                                      # doctest: +SKIP
    >>> model.fit(load_corpus("wiki", split="train"), steps=300)          # doctest: +SKIP
    >>> model.embed(["French painter", "Claude Monet was ..."], dim=16)   # doctest: +SKIP

The encoder is ModernBERT's (``encoder.py``: RoPE, GeGLU, bias-free pre-LayerNorm, local attention in two of
every three layers, final norm); the sentence embedding is the mean of the last hidden states over the
tokens; MRL (``mrl.py``, Kusupati et al. 2022 §3) makes every prefix ``z[:m]``, ``m`` in ``nesting``, an
embedding of its own by summing the in-batch contrastive loss over the prefixes. ``nesting=(dim,)`` is the
plain contrastive encoder (the claim's baseline).

What differs from the paper: MrBERT is pretrained with masked language modelling on 6.1T tokens of 35
languages with a 256k (or 50k) SentencePiece vocabulary, and MRL is applied when adapting it to retrieval;
here the CPU default is a 3-layer, 64-wide encoder over a word vocabulary (the task's tokenisation) trained
from scratch by the MRL contrastive loss only (no MLM stage) on (description, lead) pairs of the training
Wikipedia articles. ``preset="paper"`` gives the released 308M architecture (768 wide, 22 layers, 12 heads,
GeGLU 1152, local window 128, global every 3rd layer, dropout 0.1) and ``hub.py`` loads the released
checkpoints. The paper's own text was read through its abstract, catalog entry and model cards only:
its MRL sizes and fine-tuning recipe are not taken from it (the paper preset's nesting doubles from 64).
"""
from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from zoo_task_embedding_quality.data import load_wiki_articles, tokenize, wiki_split

from .encoder import ModernBertEncoder
from .mrl import check_nesting, doubling, mrl_infonce, truncate

log = logging.getLogger(__name__)

SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
PAD, UNK, CLS, SEP, MASK = range(len(SPECIALS))
ARCH = ("dim", "layers", "heads", "intermediate", "local_window", "global_every", "global_theta", "local_theta", "eps",
        "dropout")
CPU: dict[str, Any] = {"dim": 64, "layers": 3, "heads": 4, "intermediate": 96, "local_window": 16, "global_every": 3,
                       "max_len": 64, "nesting": doubling(64, 8), "pooling": "mean", "dropout": 0.0, "min_count": 2,
                       "steps": 300, "batch_size": 64, "lr": 2e-3, "temperature": 0.05}
# the released MrBERT (model card of BSC-LT/MrBERT): ModernBERT-base shape, dropout 0.1, AdamW(0.9, 0.98, 1e-6)
PAPER: dict[str, Any] = {"dim": 768, "layers": 22, "heads": 12, "intermediate": 1152, "local_window": 128,
                         "global_every": 3, "max_len": 8192, "nesting": doubling(768, 64), "pooling": "mean",
                         "dropout": 0.1, "min_count": 2, "steps": 1000, "batch_size": 512, "lr": 1e-4,
                         "temperature": 0.05}
PRESETS = ("cpu", "paper")


class MrBERT(nn.Module):
    """A ModernBERT encoder over ``vocab`` (words; ids 0-4 are ``SPECIALS``) with a Matryoshka sentence embedding.

    ``embed(texts, dim=m)`` gives the first ``m`` coordinates of the mean-pooled embedding. ``forward`` on a list
    of texts is ``embed``; on a LongTensor of ids (B, T), the hidden states (B, T, dim). ``vocab_size`` (with
    an empty ``vocab``) sizes the table for checkpoints whose ids come from an external tokenizer (``hub.py``).
    """

    embedding_mode = "sentence"

    def __init__(self, vocab: Sequence[str] = (), *, vocab_size: int | None = None, dim: int = 64, layers: int = 3,
                 heads: int = 4, intermediate: int = 96, local_window: int = 16, global_every: int = 3,
                 global_theta: float = 160_000.0, local_theta: float = 10_000.0, eps: float = 1e-5,
                 dropout: float = 0.0, pad_id: int = PAD, max_len: int = 64, nesting: Sequence[int] | None = None,
                 pooling: str = "mean", min_count: int = 2, steps: int = 300, batch_size: int = 64, lr: float = 2e-3,
                 temperature: float = 0.05, weight_decay: float = 1e-5) -> None:
        super().__init__()
        if pooling not in ("mean", "cls"):
            raise ValueError(f"pooling must be 'mean' or 'cls', got {pooling!r}")
        self.vocab = list(vocab)
        self.index = {w: i + len(SPECIALS) for i, w in enumerate(self.vocab)}
        self.arch = {"dim": dim, "layers": layers, "heads": heads, "intermediate": intermediate,
                     "local_window": local_window, "global_every": global_every, "global_theta": global_theta,
                     "local_theta": local_theta, "eps": eps, "dropout": dropout}
        self.dim, self.pad_id, self.max_len, self.pooling = dim, pad_id, max_len, pooling
        self.nesting = check_nesting(nesting if nesting is not None else doubling(dim, 8), dim)
        self.min_count, self.steps, self.batch_size, self.lr = min_count, steps, batch_size, lr
        self.temperature, self.weight_decay = temperature, weight_decay
        self.hf_tokenizer: Any = None  # a `tokenizers.Tokenizer` for hub checkpoints (hub.attach_tokenizer)
        size = vocab_size if vocab_size is not None else len(SPECIALS) + len(self.vocab)
        self.encoder = ModernBertEncoder(size, pad_id=pad_id, **self.arch)

    # ------------------------------------------------------------------ tokens
    def token_ids(self, text: str) -> list[int]:
        """``[CLS] words [SEP]`` (unknown words -> ``[UNK]``), at most ``max_len`` ids."""
        if self.hf_tokenizer is not None:
            return self.hf_tokenizer.encode(text).ids[: self.max_len]
        words = [self.index.get(w, UNK) for w in tokenize(text)][: self.max_len - 2]
        return [CLS, *words, SEP]

    def batch(self, id_lists: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        """Right-padded ids (B, T) and their keep mask."""
        t = max(len(x) for x in id_lists)
        ids = torch.full((len(id_lists), t), self.pad_id, dtype=torch.long)
        for i, x in enumerate(id_lists):
            ids[i, : len(x)] = torch.as_tensor(list(x), dtype=torch.long)
        keep = torch.zeros_like(ids, dtype=torch.bool)
        for i, x in enumerate(id_lists):
            keep[i, : len(x)] = True
        return ids, keep

    # ------------------------------------------------------------------ embeddings
    def pool(self, h: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """The sentence embedding: the mean of the kept tokens' states, or the first token's (``pooling="cls"``)."""
        if self.pooling == "cls":
            return h[:, 0]
        w = keep.to(h.dtype).unsqueeze(-1)
        return (h * w).sum(1) / w.sum(1).clamp_min(1.0)

    def encode(self, ids: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """(B, dim) embeddings of a padded batch."""
        return self.pool(self.encoder(ids, keep), keep)

    @torch.no_grad()
    def embed(self, texts: Sequence[str], dim: int | None = None, batch_size: int = 256) -> torch.Tensor:
        """(N, dim or ``dim``) float32 embeddings; ``dim`` truncates to the Matryoshka prefix of that size."""
        was = self.training
        self.eval()
        ids = [self.token_ids(t) for t in texts]
        order = np.argsort([len(x) for x in ids], kind="stable")  # similar lengths together: less padding
        out = torch.zeros(len(texts), self.dim)
        for s in range(0, len(texts), batch_size):
            pick = order[s: s + batch_size]
            out[torch.as_tensor(pick)] = self.encode(*self.batch([ids[i] for i in pick])).float()
        self.train(was)
        return truncate(out, dim)

    def forward(self, x: Sequence[str] | torch.Tensor) -> torch.Tensor:
        if isinstance(x, torch.Tensor):
            return self.encoder(x, x != self.pad_id)
        return self.embed(x)

    def loss(self, q: torch.Tensor, d: torch.Tensor) -> tuple[torch.Tensor, dict[int, torch.Tensor]]:
        """The MRL contrastive loss of query / passage embeddings (B, dim) over ``nesting`` (``mrl.mrl_infonce``)."""
        return mrl_infonce(q, d, self.nesting, self.temperature)

    # ------------------------------------------------------------------ training
    def fit(self, corpus: Any = None, *, steps: int | None = None, seed: int = 0,
            pairs: Sequence[tuple[str, str]] | None = None, progress: Any = None) -> dict[str, float]:
        """Build the word vocabulary of the training pairs and train from scratch with the MRL contrastive loss.

        ``pairs``: (query, passage) texts; by default ``training_pairs(corpus)``. ``steps`` batches of
        ``batch_size`` pairs (in-batch negatives), AdamW (0.9, 0.98, eps 1e-6) with a warmup-stable-decay
        rate (10% warmup, last 20% linear decay), seeded: the same seed gives the same model.
        """
        pairs = list(pairs) if pairs is not None else training_pairs(corpus)
        if len(pairs) < 2:
            raise ValueError(f"fit needs at least 2 (query, passage) pairs for in-batch negatives, got {len(pairs)}")
        t0, steps = time.perf_counter(), self.steps if steps is None else int(steps)
        counts: dict[str, int] = {}
        for a, b in pairs:
            for w in (*tokenize(a), *tokenize(b)):
                counts[w] = counts.get(w, 0) + 1
        vocab = [w for w, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if c >= self.min_count]
        self.vocab, self.index = vocab, {w: i + len(SPECIALS) for i, w in enumerate(vocab)}
        with torch.random.fork_rng():  # a fresh, seeded encoder over the new vocabulary
            torch.manual_seed(seed)
            self.encoder = ModernBertEncoder(len(SPECIALS) + len(vocab), pad_id=self.pad_id, **self.arch)
        q_ids = [self.token_ids(a) for a, _ in pairs]
        d_ids = [self.token_ids(b) for _, b in pairs]
        rng, b = np.random.default_rng(seed), min(self.batch_size, len(pairs))
        opt = torch.optim.AdamW(self.parameters(), lr=self.lr, betas=(0.9, 0.98), eps=1e-6,
                                weight_decay=self.weight_decay)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: wsd(s, steps))
        self.train()
        order, pos, losses = rng.permutation(len(pairs)), 0, []
        parts: dict[int, torch.Tensor] = {}
        t1 = time.perf_counter()
        for _ in range(steps):
            if pos + b > len(pairs):
                order, pos = rng.permutation(len(pairs)), 0
            pick, pos = order[pos: pos + b], pos + b
            q = self.encode(*self.batch([q_ids[i] for i in pick]))
            d = self.encode(*self.batch([d_ids[i] for i in pick]))
            loss, parts = self.loss(q, d)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            losses.append(loss.item())
        self.eval()
        prov = getattr(self, "zoo", None)
        if prov is not None:  # what save_pretrained writes: the fitted vocabulary rebuilds this model
            self.zoo = dataclasses.replace(prov, model_args={**prov.model_args, "vocab": list(vocab)})
        train_s = time.perf_counter() - t1
        log.info("mrbert: %d pairs, %d words, %d steps in %.1f s, final loss %.3f", len(pairs), len(vocab), steps,
                 train_s, losses[-1] if losses else float("nan"))
        tail = losses[-max(1, steps // 10):] if losses else [float("nan")]
        return {"pairs": float(len(pairs)), "vocabulary": float(len(vocab)), "steps": float(steps),
                "train_seconds": train_s, "prepare_seconds": t1 - t0, "final_train_loss": float(np.mean(tail)),
                **{f"final_loss_dim{m}": v.item() for m, v in parts.items()}}


def wsd(step: int, steps: int, warmup: float = 0.1, decay: float = 0.2) -> float:
    """Warmup-stable-decay multiplier of the learning rate (the schedule of MrBERT's model cards).

    >>> [round(wsd(s, 10), 2) for s in (0, 1, 5, 8, 9)]
    [1.0, 1.0, 1.0, 1.0, 0.5]
    """
    w, d = max(1, int(warmup * steps)), max(1, int(decay * steps))
    if step < w:
        return (step + 1) / w
    if step >= steps - d:
        return max(0.0, (steps - step) / d)
    return 1.0


def training_pairs(corpus: Any) -> list[tuple[str, str]]:
    """(query, passage) texts to train on: for the task's wiki corpora the (description, lead) of each article in
    it (``wiki-train`` holds only the training articles of sentence mode); for any other ``TextCorpus``, each
    sentence and the next sentence of its document."""
    name = getattr(corpus, "name", None)
    if name in ("wiki", "wiki-train"):
        arts = load_wiki_articles()
        ids = range(len(arts)) if name == "wiki" else wiki_split()[0]
        return [(arts[i]["description"], arts[i]["extract"]) for i in ids if arts[i].get("description")]
    if corpus is None or not hasattr(corpus, "texts"):
        raise TypeError("fit needs pairs= or a TextCorpus (load_corpus('wiki', split='train'))")
    t, doc = corpus.texts, corpus.doc_of
    return [(t[i], t[i + 1]) for i in range(len(t) - 1) if doc[i] == doc[i + 1]]


def mrbert(vocab: Sequence[str] = (), preset: str = "cpu", **overrides: Any) -> MrBERT:
    """MrBERT with the ``preset``'s settings, each overridable (``dim=``, ``nesting=``, ``steps=``...).

    ``preset="cpu"``: 64 wide, 3 layers (global, local, local), 4 heads, GeGLU 96, local window 16, 64 tokens,
    nesting (8, 16, 32, 64), 300 steps of 64 pairs. ``preset="paper"``: the released MrBERT's 768-wide, 22-layer
    ModernBERT with nesting (64, 128, 256, 512, 768). ``nesting=[dim]`` gives the plain contrastive encoder.

    >>> mrbert().nesting, mrbert(preset="paper").arch["layers"], mrbert(dim=32, nesting=[32]).nesting
    ((8, 16, 32, 64), 22, (32,))
    """
    if preset not in PRESETS:
        raise ValueError(f"mrbert preset must be one of {PRESETS}, got {preset!r}")
    args = {**(PAPER if preset == "paper" else CPU), **{k: v for k, v in overrides.items() if v is not None}}
    if "dim" in overrides and "nesting" not in overrides:
        args["nesting"] = doubling(args["dim"], 8 if preset == "cpu" else 64)
    return MrBERT(vocab, **args)
