"""Skip-gram and CBOW with negative sampling (Mikolov et al. 2013), one compiled loop on one CPU core.

The algorithm of the papers (arXiv 1301.3781 §3, the architectures; arXiv 1310.4546 §2.2-2.3, negative
sampling and subsampling) as the reference C tool ``word2vec.c`` runs it:

* **Dynamic window**: each centre position draws b uniform in [0, window) and uses the words within
  ``window - b`` positions on each side (nearer words are sampled more often).
* **Subsampling** of frequent words, word2vec.c's formula (not the paper's 1 - sqrt(t/f)): a word of
  corpus frequency f = count / total is kept with probability min(1, (sqrt(f / t) + 1) * t / f); the
  window is applied to the sentence after the discarded words are removed. ``sample = 0`` keeps all.
* **Negatives** from the unigram distribution to the 3/4 power, drawn by binary search in a cumulative
  integer table (gensim's layout; word2vec.c fills a 1e8-entry array with the same distribution); a
  negative equal to the target word is skipped, not redrawn, as in word2vec.c.
* **Skip-gram** (``cbow=False``): for each (centre, context) pair the *context* word's input vector
  predicts the centre word against ``negative`` noise words (word2vec.c's loop order). **CBOW**
  (``cbow=True``): the mean of the window's input vectors predicts the centre word, and the error is
  added to every context word's input vector undivided (word2vec.c; gensim divides it).
* **SGD**: learning rate decaying linearly from ``lr`` with the raw (pre-subsampling) words processed,
  floored at ``lr * 1e-4`` (word2vec.c's ``starting_alpha * 0.0001``); input vectors uniform in
  (-0.5/d, 0.5/d), output vectors zero.
* **Random stream**: word2vec.c's 64-bit linear congruential generator (x <- x * 25214903917 + 11) for the
  window, the subsampling and the negatives, seeded per run; the input vectors come from numpy's
  ``default_rng(seed)``. One thread, so a seed fixes the result.

The sigmoid (and the loss reported) come from word2vec.c's 1000-step table over [-6, 6] (0 or 1 beyond,
where the gradient saturates). Deviations from word2vec.c: sentences are not cut at 1000 words, the learning
rate is updated every sentence rather than every 10,000 words, and the negative table is gensim's cumulative
one (the same distribution).

Two backends run the same loop on the same random stream: numba (``pip install 'zoo-nn[fast]'``; one jitted
function, about 0.2 microseconds per (input, target) update at d = 100) and a numpy fallback used when numba
is missing (numpy row operations per pair, orders of magnitude slower; the tests check the two agree).
The vectors are float32 numpy arrays, so a torch model (node2vec, fastText) can wrap them without copying.

>>> import numpy as np
>>> sents = [np.array([0, 1, 2, 3]), np.array([3, 2, 1])] * 50
>>> out = train(sents, 4, dim=8, epochs=2, sample=0, seed=0)
>>> out.input_vectors.shape, out.output_vectors.shape, len(out.epoch_loss)
((4, 8), (4, 8), 2)
"""
from __future__ import annotations

import bisect
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

log = logging.getLogger(__name__)

__all__ = ["train", "SkipGramResult", "unigram_table", "draw_negative", "keep_probability", "flatten",
           "HAVE_NUMBA", "BACKENDS", "LCG_MUL", "LCG_ADD", "TABLE_DOMAIN", "MIN_LR_RATIO"]

LCG_MUL, LCG_ADD = 25214903917, 11  # word2vec.c's next_random
TABLE_DOMAIN = 2 ** 31 - 1  # the cumulative negative table's integer range (gensim's)
MIN_LR_RATIO = 1e-4  # the rate never falls below lr * this (word2vec.c)
MAX_EXP, EXP_TABLE_SIZE = 6.0, 1000  # word2vec.c's sigmoid table: 1000 steps over [-6, 6], 0 or 1 beyond
_X = (np.arange(EXP_TABLE_SIZE + 1) / EXP_TABLE_SIZE * 2 - 1) * MAX_EXP
SIGMOID = 1.0 / (1.0 + np.exp(-_X))  # word2vec.c's expTable[i] / (expTable[i] + 1)
NLL = np.stack([np.log1p(np.exp(_X)), np.log1p(np.exp(-_X))])  # -log(1 - s), -log s: the loss of label 0, 1
_MASK = (1 << 64) - 1

try:  # numba is an optional extra of zoo-nn: zoo-nn[fast]
    import numba as _numba
except ImportError:  # pragma: no cover - exercised where numba is absent
    _numba = None
HAVE_NUMBA = _numba is not None
BACKENDS = ("numba", "numpy") if HAVE_NUMBA else ("numpy",)


# ---------------------------------------------------------------------------------------------- tables

def unigram_table(counts: np.ndarray, power: float = 0.75, domain: int = TABLE_DOMAIN) -> np.ndarray:
    """Cumulative integer table of counts**power: word i is drawn for r in [table[i-1], table[i]).

    >>> unigram_table(np.array([16, 1]), domain=100).tolist()  # 16**0.75 = 8 of 9 parts
    [89, 100]
    """
    w = np.asarray(counts, dtype=np.float64) ** power
    return np.round(np.cumsum(w) / w.sum() * domain).astype(np.int64)


def draw_negative(table: np.ndarray, state: int) -> int:
    """The word a random state picks from ``table`` (word2vec.c takes the state's bits above 16)."""
    return int(np.searchsorted(table, (state >> 16) % table[-1], side="right"))


def keep_probability(counts: np.ndarray, sample: float) -> np.ndarray:
    """word2vec.c's probability of keeping each word: min(1, (sqrt(f/t) + 1) t / f), f = count / total.

    >>> keep_probability(np.array([1000, 10]), 1e-2).round(3).tolist()
    [0.111, 1.0]
    """
    counts = np.asarray(counts, dtype=np.float64)
    if sample <= 0:
        return np.ones(len(counts))
    t = sample * counts.sum()
    return np.minimum(1.0, (np.sqrt(counts / t) + 1) * t / np.maximum(counts, 1))


def flatten(sentences: Sequence[Sequence[int]] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sentences of word ids as one int32 stream and int64 sentence starts (the last entry = stream length).

    A 2-D array is read as rows of ids with -1 as padding (node2vec's walks). Negative ids are dropped.

    >>> ids, starts = flatten([[0, 1], [2], [-1, 3]]); ids.tolist(), starts.tolist()
    ([0, 1, 2, 3], [0, 2, 3, 4])
    """
    rows = [np.asarray(s, dtype=np.int64) for s in sentences]
    rows = [r[r >= 0] for r in rows]
    lengths = np.array([len(r) for r in rows], dtype=np.int64)
    ids = np.concatenate(rows).astype(np.int32) if rows else np.zeros(0, np.int32)
    return ids, np.r_[0, np.cumsum(lengths)].astype(np.int64)


# ------------------------------------------------------------------------------------- the training loop

def _epoch_numpy(ids, starts, syn0, syn1, table, keep16, window, negative, cbow, lr, words_done, total_words,
                 state):
    """One pass over the corpus; returns (loss sum, predictions, words done, random state). The reference loop."""
    d = syn0.shape[1]
    table_l = table.tolist()
    top = table_l[-1]
    min_lr = lr * MIN_LR_RATIO
    loss, preds = 0.0, 0
    neu1e = np.zeros(d, np.float32)
    for s in range(len(starts) - 1):
        sent = []
        for p in range(starts[s], starts[s + 1]):
            w = int(ids[p])
            words_done += 1
            if keep16[w] < 65536:  # subsampling: keep when (rand & 0xFFFF) < keep * 65536
                state = (state * LCG_MUL + LCG_ADD) & _MASK
                if (state & 0xFFFF) >= keep16[w]:
                    continue
            sent.append(w)
        alpha = max(min_lr, lr * (1.0 - words_done / (total_words + 1.0)))
        n = len(sent)
        for i in range(n):
            word = sent[i]
            state = (state * LCG_MUL + LCG_ADD) & _MASK
            b = state % window
            ctx = [sent[c] for c in range(i - window + b, i + window - b + 1) if c != i and 0 <= c < n]
            if not ctx:
                continue
            if cbow:
                h = syn0[ctx].mean(0, dtype=np.float32) if len(ctx) > 1 else syn0[ctx[0]].copy()
                inputs = [h]
            else:
                inputs = ctx
            for inp in inputs:
                l1 = inp if cbow else syn0[inp]
                neu1e[:] = 0
                for k in range(negative + 1):
                    if k == 0:
                        target, label = word, 1.0
                    else:
                        state = (state * LCG_MUL + LCG_ADD) & _MASK
                        target = bisect.bisect_right(table_l, (state >> 16) % top)
                        if target == word:
                            continue
                        label = 0.0
                    f = float(np.dot(l1, syn1[target]))
                    g, pl = _grad(f, label, SIGMOID, NLL)
                    loss += pl
                    g *= alpha
                    neu1e += np.float32(g) * syn1[target]
                    syn1[target] += np.float32(g) * l1
                preds += 1
                if cbow:
                    for c in ctx:
                        syn0[c] += neu1e
                else:
                    syn0[inp] += neu1e
    return loss, preds, words_done, state


def _grad(f: float, label: float, sig: np.ndarray, nll: np.ndarray) -> tuple[float, float]:
    """(label - sigmoid(f), -log of the predicted probability of ``label``) from word2vec.c's table ``sig``."""
    if f > MAX_EXP:
        return label - 1.0, (min(f, 30.0) if label == 0.0 else 0.0)
    if f < -MAX_EXP:
        return label, (min(-f, 30.0) if label == 1.0 else 0.0)
    i = int((f + MAX_EXP) * (EXP_TABLE_SIZE / MAX_EXP / 2))
    return label - sig[i], nll[int(label), i]


if HAVE_NUMBA:
    # The numba twin of ``_epoch_numpy``: the same loop with explicit loops over the dimension. Compiled at
    # module level: numba's on-disk cache finds a module-level function again in the next process, where one
    # built inside another function (a closure) was compiled afresh, about 2 s, and cached once more every time.
    _grad_nb = _numba.njit(cache=True, nogil=True)(_grad)

    # fastmath lets LLVM vectorise the float32 dot products (reassociated sums: last-bit differences only)
    @_numba.njit(cache=True, nogil=True, fastmath=True)
    def _epoch_nb(ids, starts, syn0, syn1, table, keep16, window, negative, cbow, lr, words_done, total_words, state):
        d = syn0.shape[1]
        top = np.uint64(table[-1])
        min_lr = lr * MIN_LR_RATIO
        mul, add = np.uint64(LCG_MUL), np.uint64(LCG_ADD)
        loss, preds = 0.0, 0
        neu1e = np.zeros(d, np.float32)
        h = np.zeros(d, np.float32)
        sent = np.empty(max(1, np.max(starts[1:] - starts[:-1])) if len(starts) > 1 else 1, np.int32)
        ctx = np.empty(2 * window, np.int32)
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
                word = sent[i]
                st = st * mul + add
                b = np.int64(st % np.uint64(window))
                nc = 0
                for c in range(i - window + b, i + window - b + 1):
                    if c != i and c >= 0 and c < n:
                        ctx[nc] = sent[c]
                        nc += 1
                if nc == 0:
                    continue
                rounds = 1 if cbow else nc
                for r in range(rounds):
                    if cbow:
                        for j in range(d):
                            acc = np.float32(0.0)
                            for c in range(nc):
                                acc += syn0[ctx[c], j]
                            h[j] = acc / np.float32(nc)
                    else:
                        row = syn0[ctx[r]]
                        for j in range(d):
                            h[j] = row[j]
                    neu1e[:] = 0
                    for k in range(negative + 1):
                        if k == 0:
                            target, label = word, 1.0
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
                            if target == word:
                                continue
                            label = 0.0
                        row = syn1[target]
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
                    if cbow:
                        for c in range(nc):
                            row = syn0[ctx[c]]
                            for j in range(d):
                                row[j] += neu1e[j]
                    else:
                        row = syn0[ctx[r]]
                        for j in range(d):
                            row[j] += neu1e[j]
        return loss, preds, words_done, st


def _numba_epoch():
    return _epoch_nb


# ----------------------------------------------------------------------------------------------- train

@dataclass
class SkipGramResult:
    """What ``train`` returns: (V, d) float32 input vectors (the word vectors) and output vectors, and figures."""

    input_vectors: np.ndarray
    output_vectors: np.ndarray
    epoch_loss: list[float] = field(default_factory=list)  # per prediction: -log p(centre) - sum log(1 - p(noise))
    words: int = 0  # raw words processed (all epochs)
    predictions: int = 0  # (input, centre) predictions made: pairs for skip-gram, windows for CBOW
    seconds: float = 0.0
    backend: str = ""

    @property
    def words_per_second(self) -> float:
        return self.words / self.seconds if self.seconds > 0 else float("nan")


def train(sentences: Sequence[Sequence[int]] | np.ndarray, num_words: int, *, dim: int = 100, window: int = 5,
          negative: int = 5, sample: float = 1e-3, cbow: bool = False, epochs: int = 5, lr: float | None = None,
          counts: np.ndarray | None = None, seed: int = 0, backend: str | None = None,
          init: tuple[np.ndarray, np.ndarray] | None = None) -> SkipGramResult:
    """Train skip-gram (or CBOW) with negative sampling on ``sentences`` of word ids in [0, num_words).

    ``lr`` defaults to word2vec.c's 0.025 for skip-gram and 0.05 for CBOW; ``counts`` (the word
    frequencies for subsampling and the negative table) default to the counts in ``sentences``.
    ``backend``: "numba" (default when installed) or "numpy" (the same loop, slow). ``init`` continues
    from given (input, output) vectors instead of the standard initialisation.

    >>> out = train([[0, 1, 0, 1, 2]] * 20, 3, dim=4, epochs=1, sample=0, backend="numpy")
    >>> out.backend, out.words
    ('numpy', 100)
    """
    if window < 1 or negative < 0 or dim < 1 or epochs < 0:
        raise ValueError(f"skip-gram needs window >= 1, negative >= 0, dim >= 1, epochs >= 0; got window={window}, "
                         f"negative={negative}, dim={dim}, epochs={epochs}")
    backend = backend or BACKENDS[0]
    if backend not in ("numba", "numpy"):
        raise ValueError(f"backend must be 'numba' or 'numpy', got {backend!r}")
    if backend == "numba" and not HAVE_NUMBA:
        raise ImportError("backend='numba' needs numba: pip install 'zoo-nn[fast]' (or pip install numba)")
    ids, starts = flatten(sentences)
    if len(ids) and (ids.max() >= num_words):
        raise ValueError(f"word id {int(ids.max())} is outside the vocabulary of {num_words} words")
    if counts is None:
        counts = np.bincount(ids, minlength=num_words)
    counts = np.asarray(counts, dtype=np.float64)
    if len(counts) != num_words:
        raise ValueError(f"counts has {len(counts)} entries for {num_words} words")
    lr = (0.05 if cbow else 0.025) if lr is None else float(lr)
    # the unigram table needs a positive mass; words never seen are never drawn
    table = unigram_table(counts if counts.sum() > 0 else np.ones(num_words))
    keep16 = np.minimum(65536, np.floor(keep_probability(counts, sample) * 65536)).astype(np.int64)
    if init is None:
        rng = np.random.default_rng(seed)
        syn0 = ((rng.random((num_words, dim), dtype=np.float32) - 0.5) / dim).astype(np.float32)
        syn1 = np.zeros((num_words, dim), np.float32)
    else:
        syn0, syn1 = (np.array(x, dtype=np.float32, copy=True, order="C") for x in init)
    state = (seed * 0x9E3779B97F4A7C15 + 1) & _MASK  # a seed-dependent start of word2vec.c's stream
    total = int(len(ids)) * epochs
    done, preds, losses = 0, 0, []
    step = _numba_epoch() if backend == "numba" else _epoch_numpy
    t0 = time.perf_counter()
    for _ in range(epochs):
        loss, p, done, state = step(ids, starts, syn0, syn1, table, keep16, window, negative, bool(cbow), lr,
                                    done, total, np.uint64(state) if backend == "numba" else state)
        state = int(state)
        preds += int(p)
        losses.append(float(loss) / max(1, int(p)))
    seconds = time.perf_counter() - t0
    log.debug("skip-gram (%s): %d words, %d predictions in %.2f s", backend, done, preds, seconds)
    return SkipGramResult(syn0, syn1, losses, int(done), preds, seconds, backend)
