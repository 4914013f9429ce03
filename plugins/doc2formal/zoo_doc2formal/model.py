"""doc2formal: learned semantic correspondences between documentation text and formal signatures.

Richardson & Kuhn 2017, "Learning Semantic Correspondences in Technical Documentation" (ACL; arXiv:1705.04815).
From the abstract: text descriptions are translated into grounded formal representations (function signatures)
by "a simple semantic parsing model" trained on (text, representation) pairs mined from the documentation itself,
and models are evaluated by ranking the candidate representations. The model below is that paper's pipeline as
we understand it from the abstract and the catalog (the paper's text was not read here; the choices are stated):

1. **Lexical translation model** (``alignment``): IBM Model 1, word -> signature-token translation probabilities
   t(z | x) estimated by EM on the training pairs, with a NULL word; its log-likelihood log p(z | x) scores a
   candidate. A reverse model t(x | z) is estimated the same way.
2. **Discriminative reranker**: a log-linear model over features of (text, candidate), ``FEATURES``: the forward
   and reverse Model 1 scores (per token and in total), the forward score of the function-name tokens alone, the
   lexical overlap of the candidate's and the name's tokens with the text, and the candidate's length. It is
   trained with the listwise softmax loss (the gold signature against every other candidate) by Adam for
   ``steps`` minibatch steps. The reranker's training features come from Model 1 tables estimated on the *other*
   folds (``folds``-fold jackknife), so they look like test features: the test signatures are unseen in training.

Tokens are the task's ``code_tokens`` (lower-cased, identifiers split at ``_``, dots and camelCase) on both sides,
as the bm25/bow baselines use. The seed draws the folds, the reranker's initial weights and the minibatch order.
Deviations (by assumption, not from the paper's text): the reranker ranks all candidates instead of the
translation model's top-k list, and the feature set is ours; the paper's datasets (16 languages' documentation)
are replaced by the task's stdlib pairs.
"""
from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from scipy import sparse
from torch import nn

from zoo_task_code_text.data import Pair, code_tokens

from . import alignment as A

log = logging.getLogger(__name__)

FEATURES = ("fwd_mean", "fwd_sum", "name_fwd_mean", "rev_mean", "overlap", "name_overlap", "log_len")
CPU = {"em_iters": 10, "folds": 2, "lr": 0.05, "batch_size": 32, "l2": 1e-3, "rerank": True}
PRESETS = {"cpu": CPU, "paper": CPU}  # no larger setting: the method has no size to scale


def name_of(signature: str) -> str:
    """The function or method name of ``module.Class.name(params)``.

    >>> name_of("os.path.join(a, *p)")
    'join'
    """
    return signature.split("(", 1)[0].rsplit(".", 1)[-1]


def _counts(docs: Sequence[Sequence[str]], index: dict[str, int], n: int) -> sparse.csr_matrix:
    """(len(docs), n + 1) token counts; the last column counts tokens outside ``index``."""
    rows, cols = [], []
    for i, d in enumerate(docs):
        for tok in d:
            rows.append(i)
            cols.append(index.get(tok, n))
    return sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(docs), n + 1))


def _binary(docs: Sequence[Sequence[str]], index: dict[str, int]) -> sparse.csr_matrix:
    rows, cols = [], []
    for i, d in enumerate(docs):
        for tok in set(d):
            rows.append(i)
            cols.append(index[tok])
    return sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(docs), len(index)))


@dataclasses.dataclass(frozen=True)
class Sig:
    """A candidate signature's code tokens and its name's tokens."""

    tokens: list[str]
    name: list[str]

    @classmethod
    def of(cls, signature: str) -> Sig:
        return cls(code_tokens(signature), code_tokens(name_of(signature)))


class Doc2Formal(nn.Module):
    """Model 1 translation tables + a log-linear reranker; ``rank(text, candidates)`` / ``score_matrix``.

    >>> m = Doc2Formal()
    >>> pairs = [Pair("Remove the file at path.", "os.remove(path)", "os"),
    ...          Pair("Join two path parts.", "os.path.join(a, b)", "os")] * 4
    >>> fig = m.fit(pairs, steps=20, seed=0)
    >>> int(m.rank("remove it", ["os.path.join(a, b)", "os.remove(path)"]).argmax())
    1
    """

    input_kind = "ranker"

    def __init__(self, words: Sequence[str] = (), tokens: Sequence[str] = (), n_fwd: int = 0, n_rev: int = 0,
                 em_iters: int = 10, folds: int = 2, lr: float = 0.05, batch_size: int = 32, l2: float = 1e-3,
                 rerank: bool = True):
        super().__init__()
        self.words, self.tokens = list(words), list(tokens)  # source vocabulary (id 0: NULL), target vocabulary
        self.em_iters, self.folds, self.lr, self.batch_size, self.l2, self.rerank = em_iters, folds, lr, batch_size, \
            l2, rerank
        self.register_buffer("fwd_links", torch.zeros(2, n_fwd, dtype=torch.long))  # (token, word) of t(token|word)
        self.register_buffer("fwd_t", torch.zeros(n_fwd, dtype=torch.float64))
        self.register_buffer("rev_links", torch.zeros(2, n_rev, dtype=torch.long))  # (word, token) of t(word|token)
        self.register_buffer("rev_t", torch.zeros(n_rev, dtype=torch.float64))
        weights = torch.zeros(len(FEATURES), dtype=torch.float64)
        weights[FEATURES.index("overlap")] = 1.0  # unfitted: rank by lexical overlap
        self.register_buffer("weights", weights)
        self.register_buffer("feat_mean", torch.zeros(len(FEATURES), dtype=torch.float64))
        self.register_buffer("feat_std", torch.ones(len(FEATURES), dtype=torch.float64))

    # ------------------------------------------------------------------ vocabularies and tables
    def _tables(self) -> tuple[A.Table, A.Table]:
        nw, nt = len(self.words) + 1, len(self.tokens)
        f, r = self.fwd_links.numpy(), self.rev_links.numpy()
        return (A.Table(f[0], f[1], self.fwd_t.numpy(), nw, nt),
                A.Table(r[0], r[1], self.rev_t.numpy(), nt + 1, nw - 1))  # reverse: tokens + NULL -> words from 0

    @staticmethod
    def _estimate(texts: list[list[str]], sigs: list[Sig], words: dict[str, int], tokens: dict[str, int],
                  iters: int) -> tuple[A.Table, A.Table]:
        """Forward t(token | word) (words from 1, NULL 0) and reverse t(word | token) (tokens from 1, NULL 0,
        words from 0) by EM."""
        w_ids = [[words[w] for w in t if w in words] for t in texts]
        t_ids = [[tokens[z] for z in s.tokens if z in tokens] for s in sigs]
        fwd = A.em(w_ids, t_ids, len(words) + 1, len(tokens), iters)
        rev = A.em([[z + 1 for z in s] for s in t_ids], [[w - 1 for w in t] for t in w_ids], len(tokens) + 1,
                   len(words), iters)
        return fwd, rev

    def _features(self, texts: list[list[str]], cands: list[Sig], tables: tuple[A.Table, A.Table],
                  words: dict[str, int], tokens: dict[str, int]) -> np.ndarray:
        """(Q, N, len(FEATURES)) features of every (text, candidate)."""
        fwd, rev = tables
        nt = len(tokens)
        sigs, names = [c.tokens for c in cands], [c.name for c in cands]
        w_ids = [[words[w] for w in t if w in words] for t in texts]
        n_tok = np.array([max(len(s), 1) for s in sigs], dtype=np.float64)
        n_words = np.array([max(len(t), 1) for t in texts], dtype=np.float64)
        f_sum = A.mean_log_prob(fwd, w_ids, _counts(sigs, tokens, nt))
        name_ll = A.mean_log_prob(fwd, w_ids, _counts(names, tokens, nt)) / np.array([max(len(n), 1) for n in names])
        t_ids = [[tokens[z] + 1 for z in s if z in tokens] for s in sigs]
        w_counts = _counts(texts, {w: i - 1 for w, i in words.items()}, len(words))
        r_sum = A.mean_log_prob(rev, t_ids, w_counts).T  # (Q, N)
        union = {tok: i for i, tok in enumerate(sorted({x for d in (*texts, *sigs) for x in d}))}
        bq, bc, bn = _binary(texts, union), _binary(sigs, union), _binary(names, union)
        n_set = np.array([max(len(set(s)), 1) for s in sigs], dtype=np.float64)
        n_name = np.array([max(len(set(n)), 1) for n in names], dtype=np.float64)
        overlap = np.asarray((bq @ bc.T).todense()) / n_set
        name_overlap = np.asarray((bq @ bn.T).todense()) / n_name
        log_len = np.broadcast_to(np.log1p(n_tok), f_sum.shape)
        return np.stack([f_sum / n_tok, f_sum / 10.0, name_ll, r_sum / n_words[:, None], overlap, name_overlap,
                         log_len], axis=-1)

    # ------------------------------------------------------------------ the contract
    def fit(self, train_pairs: Sequence[Pair], *, steps: int | None = 300, seed: int = 0) -> dict[str, float]:
        """Estimate the translation tables and train the reranker on ``train_pairs`` (``data.Pair``)."""
        t0 = time.perf_counter()
        steps = 300 if steps is None else steps
        rng = np.random.default_rng(seed)
        texts = [code_tokens(p.description) for p in train_pairs]
        sigs = [Sig.of(p.signature) for p in train_pairs]
        words = {w: i + 1 for i, w in enumerate(sorted({w for t in texts for w in t}))}
        tokens = {z: i for i, z in enumerate(sorted({z for s in sigs for z in s.tokens}))}
        loss = float("nan")
        weights = np.zeros(len(FEATURES))
        mu, sd = np.zeros(len(FEATURES)), np.ones(len(FEATURES))
        if self.rerank and len(train_pairs) >= 2 * self.folds:
            fold = rng.permutation(len(train_pairs)) % self.folds
            blocks = []
            for f in range(self.folds):  # features of fold f from tables estimated on the other folds
                held, rest = np.flatnonzero(fold == f), np.flatnonzero(fold != f)
                tabs = self._estimate([texts[i] for i in rest], [sigs[i] for i in rest], words, tokens, self.em_iters)
                blocks.append(self._features([texts[i] for i in held], [sigs[i] for i in held], tabs, words, tokens))
            flat = np.concatenate([b.reshape(-1, len(FEATURES)) for b in blocks])
            mu, sd = flat.mean(0), flat.std(0) + 1e-9
            blocks = [(b - mu) / sd for b in blocks]
            weights, loss = self._train_reranker(blocks, steps, rng)
        fwd, rev = self._estimate(texts, sigs, words, tokens, self.em_iters)
        self._store(words, tokens, fwd, rev, weights if self.rerank else None, mu, sd)
        return {"train_pairs": float(len(train_pairs)), "fit_seconds": time.perf_counter() - t0,
                "final_train_loss": loss, "words": float(len(words)), "tokens": float(len(tokens)),
                "links": float(len(fwd.t))}

    def _train_reranker(self, blocks: list[np.ndarray], steps: int, rng: np.random.Generator
                        ) -> tuple[np.ndarray, float]:
        """Listwise softmax loss (gold = the query's own signature, the diagonal), Adam on the weights."""
        queries = [(b, i) for b in blocks for i in range(len(b))]
        w = rng.normal(0, 0.01, len(FEATURES))
        m, v = np.zeros_like(w), np.zeros_like(w)
        b1, b2, loss = 0.9, 0.999, float("nan")
        for step in range(1, steps + 1):
            grad, total = self.l2 * 2 * w, 0.0
            batch = rng.integers(0, len(queries), self.batch_size)
            for k in batch:
                block, i = queries[k]
                x = block[i]  # (N, F)
                s = x @ w
                p = np.exp(s - s.max())
                p /= p.sum()
                total -= np.log(p[i] + 1e-300)
                grad += (p @ x - x[i]) / len(batch)
            m = b1 * m + (1 - b1) * grad
            v = b2 * v + (1 - b2) * grad ** 2
            w = w - self.lr * (m / (1 - b1 ** step)) / (np.sqrt(v / (1 - b2 ** step)) + 1e-8)
            loss = total / len(batch)
        return w, loss

    def _store(self, words: dict[str, int], tokens: dict[str, int], fwd: A.Table, rev: A.Table,
               weights: np.ndarray | None, mu: np.ndarray, sd: np.ndarray) -> None:
        self.words = sorted(words, key=words.__getitem__)
        self.tokens = sorted(tokens, key=tokens.__getitem__)
        self.fwd_links = torch.from_numpy(np.stack([fwd.tgt, fwd.src]).astype(np.int64))
        self.fwd_t = torch.from_numpy(fwd.t.astype(np.float64))
        self.rev_links = torch.from_numpy(np.stack([rev.tgt, rev.src]).astype(np.int64))
        self.rev_t = torch.from_numpy(rev.t.astype(np.float64))
        w = np.zeros(len(FEATURES))
        if weights is None:  # Model 1 alone: rank by log p(z | x) per token
            w[FEATURES.index("fwd_mean")] = 1.0
            mu, sd = np.zeros(len(FEATURES)), np.ones(len(FEATURES))
        else:
            w = weights
        self.weights = torch.from_numpy(np.asarray(w, dtype=np.float64))
        self.feat_mean = torch.from_numpy(np.asarray(mu, dtype=np.float64))
        self.feat_std = torch.from_numpy(np.asarray(sd, dtype=np.float64))
        prov = getattr(self, "zoo", None)
        if prov is not None:  # what save_pretrained writes: the fitted vocabularies rebuild this model
            self.zoo = dataclasses.replace(prov, model_args={
                **prov.model_args, "words": self.words, "tokens": self.tokens, "n_fwd": int(len(fwd.t)),
                "n_rev": int(len(rev.t))})

    def score_matrix(self, texts: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
        """(Q, N) scores: the reranker's w . standardised features of every (text, candidate)."""
        words = {w: i + 1 for i, w in enumerate(self.words)}
        tokens = {z: i for i, z in enumerate(self.tokens)}
        x = self._features([code_tokens(t) for t in texts], [Sig.of(c) for c in candidates],
                           self._tables(), words, tokens)
        return ((x - self.feat_mean.numpy()) / self.feat_std.numpy()) @ self.weights.numpy()

    def rank(self, text: str, candidates: Sequence[str]) -> np.ndarray:
        """Scores (n,) of ``candidates`` for ``text`` (higher: better)."""
        return self.score_matrix([text], list(candidates))[0]

    def forward(self, texts: Sequence[str], candidates: Sequence[str]) -> torch.Tensor:
        """``score_matrix`` as a tensor."""
        return torch.from_numpy(self.score_matrix(texts, candidates))


def doc2formal(preset: str = "cpu", **overrides: Any) -> Doc2Formal:
    """The doc2formal ranker (``preset="cpu"``: the only setting; ``rerank=False`` for Model 1 alone)."""
    if preset not in PRESETS:
        raise ValueError(f"doc2formal: unknown preset {preset!r}; choose from {sorted(PRESETS)}")
    return Doc2Formal(**{**PRESETS[preset], **overrides})
