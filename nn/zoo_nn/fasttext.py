"""fastText's subword skip-gram (Bojanowski et al. 2017), one compiled loop on one CPU core.

The model of arXiv 1607.04606 §3.2: a word w is the set G_w of its character n-grams, taken from the word
written with boundary symbols ``<w>`` (n = ``minn``..``maxn``, 3..6 in the paper; the whole ``<w>`` is one of
them when it is short enough), plus the word itself when it is in the vocabulary. Each n-gram is hashed into
one of ``bucket`` rows (the paper: 2 million) by the 32-bit FNV-1a hash, as the fastText tool computes it
(:func:`fnv1a`); the scoring function is s(w, c) = sum_{g in G_w} z_g . v_c. Training is skip-gram with
negative sampling (§3.1, as word2vec), where the centre word's input vector is built from its rows and
predicts each context word.

What this loop does, and where it follows the fastText tool rather than the paper's text:

* **Input vector** of a word: the *mean* of its rows (the word's own row and its n-grams' rows), as the tool
  computes it (``combine="mean"``); the paper writes the sum (``combine="sum"``). Cosine similarity is the
  same for both; the mean keeps the hidden vector's scale independent of the word's length, so one learning
  rate suits short and long words. The gradient of the hidden vector is added, undivided, to every row (the
  tool's skip-gram update).
* **Skip-gram direction**: the centre word's subword vector predicts each word of its window (the tool's
  loop; word2vec.c predicts the centre from each context word). Window size drawn per centre: ``window - b``,
  b uniform in [0, window) (both tools).
* **Subsampling, negatives, learning rate, sigmoid, random stream**: those of :mod:`zoo_nn.skipgram`
  (word2vec.c's keep probability, which equals the tool's sqrt(t/f) + t/f; negatives from the unigram
  distribution to ``ns_exponent`` (0.75, word2vec's and gensim's; the fastText tool uses 0.5), a negative
  equal to the target skipped; the rate decays linearly per sentence; word2vec.c's sigmoid table and LCG).
* **Initialisation**: every input row uniform in (-1/d, 1/d) (the tool's), output vectors zero.
* **Out-of-vocabulary words** get the mean (or sum) of their n-gram rows (§3.2: "we can compute vector
  representations for words that did not appear in the training data").

Two backends run the same loop on the same random stream: numba (one jitted function) and a numpy reference
(slow; the tests check that the two agree).

>>> fnv1a("a".encode()) == 0xE40C292C  # the FNV-1a test vector
True
>>> char_ngrams("where", 3, 3)
['<wh', 'whe', 'her', 'ere', 're>']
"""
from __future__ import annotations

import bisect
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .skipgram import HAVE_NUMBA, LCG_ADD, LCG_MUL, MIN_LR_RATIO, NLL, SIGMOID, _grad, flatten, keep_probability, unigram_table

log = logging.getLogger(__name__)

__all__ = ["fnv1a", "char_ngrams", "subword_rows", "subword_table", "combine_rows", "train", "FastTextResult",
           "BACKENDS", "FNV_OFFSET", "FNV_PRIME"]

FNV_OFFSET, FNV_PRIME = 2166136261, 16777619  # 32-bit FNV-1a
BOW, EOW = "<", ">"  # the boundary symbols of §3.2
BACKENDS = ("numba", "numpy") if HAVE_NUMBA else ("numpy",)
_MASK = (1 << 64) - 1


# ------------------------------------------------------------------------------------------- n-grams

def fnv1a(data: bytes) -> int:
    """The 32-bit FNV-1a hash of ``data`` as the fastText tool computes it.

    The tool XORs each byte read as a *signed* char widened to 32 bits, so bytes >= 0x80 (non-ASCII UTF-8)
    flip the upper 24 bits too; for ASCII text it is the standard FNV-1a.

    >>> fnv1a(b"foobar") == 0xBF9CF968
    True
    """
    h = FNV_OFFSET
    for b in data:
        h ^= b | 0xFFFFFF00 if b >= 0x80 else b
        h = (h * FNV_PRIME) & 0xFFFFFFFF
    return h


def char_ngrams(word: str, minn: int = 3, maxn: int = 6) -> list[str]:
    """The character n-grams of ``<word>``, n = ``minn``..``maxn``, in the tool's order (by start, then length).

    A lone boundary symbol is never an n-gram (it matters only when ``minn`` = 1). ``maxn`` < ``minn``: none.

    >>> char_ngrams("ab", 3, 4)
    ['<ab', '<ab>', 'ab>']
    """
    w = BOW + word + EOW
    out = []
    for i in range(len(w)):
        for n in range(minn, maxn + 1):
            if i + n > len(w):
                break
            if n == 1 and (i == 0 or i + n == len(w)):
                continue
            out.append(w[i:i + n])
    return out


def subword_rows(word: str, num_words: int, bucket: int, minn: int = 3, maxn: int = 6,
                 word_id: int | None = None) -> np.ndarray:
    """Rows of the input matrix that make up ``word``: its own row ``word_id`` (when in the vocabulary) then
    ``num_words + fnv1a(ngram) % bucket`` for each n-gram (UTF-8 bytes hashed). int64.

    >>> subword_rows("ab", 10, 100, 3, 3, word_id=4).tolist() == [4, 10 + fnv1a(b"<ab") % 100, 10 + fnv1a(b"ab>") % 100]
    True
    """
    rows = [] if word_id is None else [word_id]
    if bucket > 0:
        rows += [num_words + fnv1a(g.encode("utf-8")) % bucket for g in char_ngrams(word, minn, maxn)]
    return np.asarray(rows, dtype=np.int64)


def subword_table(words: Sequence[str], bucket: int, minn: int = 3, maxn: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """Every vocabulary word's rows as one CSR pair: int32 row ids and int64 offsets (word i: ids[off[i]:off[i+1]]).

    >>> ids, off = subword_table(["ab", "c"], 100, 3, 3); off.tolist(), ids[off[1]:off[2]].tolist()[0]
    ([0, 3, 5], 1)
    """
    rows = [subword_rows(w, len(words), bucket, minn, maxn, word_id=i) for i, w in enumerate(words)]
    off = np.r_[0, np.cumsum([len(r) for r in rows])].astype(np.int64)
    return (np.concatenate(rows).astype(np.int32) if rows else np.zeros(0, np.int32)), off


def combine_rows(matrix: np.ndarray, rows: np.ndarray, combine: str = "mean") -> np.ndarray:
    """A word's vector from its rows of the input matrix: their mean (the tool) or sum (the paper); zeros if none."""
    if len(rows) == 0:
        return np.zeros(matrix.shape[1], dtype=matrix.dtype)
    v = matrix[rows].sum(0)
    return v / len(rows) if combine == "mean" else v


# ------------------------------------------------------------------------------------- the training loop

def _epoch_numpy(ids, starts, sub, sub_off, wi, wo, table, keep16, window, negative, mean, lr, words_done,
                 total_words, state):
    """One pass over the corpus; returns (loss sum, predictions, words done, random state). The reference loop."""
    table_l = table.tolist()
    top = table_l[-1]
    min_lr = lr * MIN_LR_RATIO
    loss, preds = 0.0, 0
    for s in range(len(starts) - 1):
        sent = []
        for p in range(starts[s], starts[s + 1]):
            w = int(ids[p])
            words_done += 1
            if keep16[w] < 65536:
                state = (state * LCG_MUL + LCG_ADD) & _MASK
                if (state & 0xFFFF) >= keep16[w]:
                    continue
            sent.append(w)
        alpha = max(min_lr, lr * (1.0 - words_done / (total_words + 1.0)))
        n = len(sent)
        for i in range(n):
            rows = sub[sub_off[sent[i]]:sub_off[sent[i] + 1]]
            scale = np.float32(1.0 / len(rows)) if mean else np.float32(1.0)
            state = (state * LCG_MUL + LCG_ADD) & _MASK
            b = state % window
            for c in range(i - window + b, i + window - b + 1):
                if c == i or c < 0 or c >= n:
                    continue
                h = wi[rows].sum(0, dtype=np.float32) * scale
                neu1e = np.zeros_like(h)
                for k in range(negative + 1):
                    if k == 0:
                        target, label = sent[c], 1.0
                    else:
                        state = (state * LCG_MUL + LCG_ADD) & _MASK
                        target = bisect.bisect_right(table_l, (state >> 16) % top)
                        if target == sent[c]:
                            continue
                        label = 0.0
                    g, pl = _grad(float(np.dot(h, wo[target])), label, SIGMOID, NLL)
                    loss += pl
                    g32 = np.float32(g * alpha)
                    neu1e += g32 * wo[target]
                    wo[target] += g32 * h
                preds += 1
                for r in rows:  # the tool's update: the whole gradient to every row (rows may repeat)
                    wi[r] += neu1e
    return loss, preds, words_done, state


if HAVE_NUMBA:
    import numba as _numba

    _grad_nb = _numba.njit(cache=True, nogil=True)(_grad)

    @_numba.njit(cache=True, nogil=True, fastmath=True)
    def _epoch_nb(ids, starts, sub, sub_off, wi, wo, table, keep16, window, negative, mean, lr, words_done,
                  total_words, state):
        d = wi.shape[1]
        top = np.uint64(table[-1])
        min_lr = lr * MIN_LR_RATIO
        mul, add = np.uint64(LCG_MUL), np.uint64(LCG_ADD)
        loss, preds = 0.0, 0
        neu1e = np.zeros(d, np.float32)
        h = np.zeros(d, np.float32)
        sent = np.empty(max(1, np.max(starts[1:] - starts[:-1])) if len(starts) > 1 else 1, np.int32)
        st = np.uint64(state)
        for s in range(len(starts) - 1):
            n = 0
            for p in range(starts[s], starts[s + 1]):
                w = ids[p]
                words_done += 1
                if keep16[w] < 65536:
                    st = st * mul + add
                    if (st & np.uint64(0xFFFF)) >= np.uint64(keep16[w]):
                        continue
                sent[n] = w
                n += 1
            alpha = max(min_lr, lr * (1.0 - words_done / (total_words + 1.0)))
            for i in range(n):
                a0, a1 = sub_off[sent[i]], sub_off[sent[i] + 1]
                scale = np.float32(1.0 / (a1 - a0)) if mean else np.float32(1.0)
                st = st * mul + add
                b = np.int64(st % np.uint64(window))
                for c in range(i - window + b, i + window - b + 1):
                    if c == i or c < 0 or c >= n:
                        continue
                    h[:] = 0
                    for r in range(a0, a1):
                        row = wi[sub[r]]
                        for j in range(d):
                            h[j] += row[j]
                    for j in range(d):
                        h[j] *= scale
                    neu1e[:] = 0
                    for k in range(negative + 1):
                        if k == 0:
                            target, label = sent[c], 1.0
                        else:
                            st = st * mul + add
                            x = (st >> np.uint64(16)) % top
                            lo, hi = 0, len(table)
                            while lo < hi:  # first index with table > x
                                mid = (lo + hi) >> 1
                                if np.uint64(table[mid]) <= x:
                                    lo = mid + 1
                                else:
                                    hi = mid
                            target = lo
                            if target == sent[c]:
                                continue
                            label = 0.0
                        row = wo[target]
                        f = np.float32(0.0)
                        for j in range(d):
                            f += h[j] * row[j]
                        g, pl = _grad_nb(np.float64(f), label, SIGMOID, NLL)
                        loss += pl
                        g32 = np.float32(g * alpha)
                        for j in range(d):
                            neu1e[j] += g32 * row[j]
                        for j in range(d):
                            row[j] += g32 * h[j]
                    preds += 1
                    for r in range(a0, a1):
                        row = wi[sub[r]]
                        for j in range(d):
                            row[j] += neu1e[j]
        return loss, preds, words_done, st


# ----------------------------------------------------------------------------------------------- train

@dataclass
class FastTextResult:
    """What ``train`` returns: the (V + bucket, d) float32 input matrix (word rows, then n-gram buckets), the
    (V, d) output vectors, and figures."""

    input_matrix: np.ndarray
    output_vectors: np.ndarray
    epoch_loss: list[float] = field(default_factory=list)  # per prediction: -log p(context) - sum log(1 - p(noise))
    words: int = 0  # raw words processed (all epochs)
    predictions: int = 0  # (centre, context) predictions made
    seconds: float = 0.0
    backend: str = ""

    @property
    def words_per_second(self) -> float:
        return self.words / self.seconds if self.seconds > 0 else float("nan")


def train(sentences: Sequence[Sequence[int]], subwords: tuple[np.ndarray, np.ndarray], num_words: int, bucket: int, *,
          dim: int = 100, window: int = 5, negative: int = 5, sample: float = 1e-4, epochs: int = 5, lr: float = 0.05,
          combine: str = "mean", ns_exponent: float = 0.75, counts: np.ndarray | None = None, seed: int = 0,
          backend: str | None = None) -> FastTextResult:
    """Train subword skip-gram on ``sentences`` of word ids in [0, num_words) (module docstring).

    ``subwords``: the CSR pair of :func:`subword_table` (word i's input rows). ``counts`` (for subsampling and
    the negative table) default to the counts in ``sentences``. The paper's settings: d=300, window 5, 5
    negatives, t=1e-4, lr 0.05, 5 epochs, 2M buckets.

    >>> words = ["ab", "cd", "ef"]
    >>> out = train([[0, 1, 2, 1]] * 20, subword_table(words, 50), 3, 50, dim=4, epochs=1, sample=0, backend="numpy")
    >>> out.input_matrix.shape, out.output_vectors.shape, out.words
    ((53, 4), (3, 4), 80)
    """
    if window < 1 or negative < 0 or dim < 1 or epochs < 0 or bucket < 0:
        raise ValueError(f"fastText needs window >= 1, negative >= 0, dim >= 1, epochs >= 0, bucket >= 0; got "
                         f"window={window}, negative={negative}, dim={dim}, epochs={epochs}, bucket={bucket}")
    if combine not in ("mean", "sum"):
        raise ValueError(f"combine must be 'mean' (the fastText tool) or 'sum' (the paper), got {combine!r}")
    backend = backend or BACKENDS[0]
    if backend not in ("numba", "numpy"):
        raise ValueError(f"backend must be 'numba' or 'numpy', got {backend!r}")
    if backend == "numba" and not HAVE_NUMBA:
        raise ImportError("backend='numba' needs numba: pip install 'zoo-nn[fast]' (or pip install numba)")
    sub, sub_off = np.ascontiguousarray(subwords[0], np.int32), np.ascontiguousarray(subwords[1], np.int64)
    if len(sub_off) != num_words + 1:
        raise ValueError(f"the subword table has {len(sub_off) - 1} words, expected {num_words}")
    if len(sub) and (sub.max() >= num_words + bucket or sub.min() < 0):
        raise ValueError(f"subword rows must lie in [0, {num_words + bucket})")
    if np.any(np.diff(sub_off) < 1):
        raise ValueError("every word needs at least one input row (its own or an n-gram)")
    ids, starts = flatten(sentences)
    if len(ids) and ids.max() >= num_words:
        raise ValueError(f"word id {int(ids.max())} is outside the vocabulary of {num_words} words")
    counts = np.bincount(ids, minlength=num_words) if counts is None else counts
    counts = np.asarray(counts, dtype=np.float64)
    table = unigram_table(counts if counts.sum() > 0 else np.ones(num_words), power=ns_exponent)
    keep16 = np.minimum(65536, np.floor(keep_probability(counts, sample) * 65536)).astype(np.int64)
    rng = np.random.default_rng(seed)
    wi = ((rng.random((num_words + bucket, dim), dtype=np.float32) * 2 - 1) / dim).astype(np.float32)
    wo = np.zeros((num_words, dim), np.float32)
    state = (seed * 0x9E3779B97F4A7C15 + 1) & _MASK
    total = int(len(ids)) * epochs
    done, preds, losses = 0, 0, []
    step = _epoch_nb if backend == "numba" else _epoch_numpy
    t0 = time.perf_counter()
    for _ in range(epochs):
        loss, p, done, state = step(ids, starts, sub, sub_off, wi, wo, table, keep16, window, negative,
                                    combine == "mean", float(lr), done, total,
                                    np.uint64(state) if backend == "numba" else state)
        state = int(state)
        preds += int(p)
        losses.append(float(loss) / max(1, int(p)))
    seconds = time.perf_counter() - t0
    log.debug("fastText (%s): %d words, %d predictions in %.2f s", backend, done, preds, seconds)
    return FastTextResult(wi, wo, losses, int(done), preds, seconds, backend)
