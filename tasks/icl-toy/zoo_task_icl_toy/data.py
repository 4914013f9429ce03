"""The synthetic in-context tasks of ``icl_toy`` and their prompts (numpy, seeded; no torch).

Token tasks (one vocabulary, ``VOCAB``): each task is a fixed map on one domain, and a prompt shows ``shots``
input -> output pairs of one task before a query, so the model must infer WHICH task from the demonstrations:

    BOS x1 -> y1 x2 -> y2 ... xk -> yk xq ->        (the answer f(xq) is predicted at the last "->")

* ``word_perm_a``, ``word_perm_b``, ``word_perm_c``: fixed random bijections of the ``N_WORDS`` word tokens (seed 17);
* ``word_shift``: word i -> word (i + 5) mod ``N_WORDS`` (a bijection too);
* ``weekday_plus1``, ``weekday_plus2``: weekday d -> (d + 1) mod 7, (d + 2) mod 7;
* ``month_plus1``, ``month_plus2``: month m -> (m + 1) mod 12, (m + 2) mod 12.

Tasks that share a domain are indistinguishable from the query alone: a zero-shot prompt ``BOS xq ->`` can only be
answered right by chance (1/4 of the word tasks, 1/2 of the calendar ones) unless something tells the model the task;
that is what a task / function vector must do.

Regression (Garg et al. 2022's data): ``x_i ~ N(0, I_d)``, ``y_i = w . x_i``. A prompt is one (d + 2)-vector per
point: demonstrations ``[x_i, y_i, 0]``, then the query ``[x_q, 0, 1]``, whose y the model predicts at its last
position (Garg et al. interleave x and y tokens; one token per pair, as von Oswald et al. 2023 do, is learned in far
fewer steps, which a CPU budget needs; the data distribution is theirs). Pretraining draws the number of
demonstrations uniformly from 0..20 per batch, so the lone query (0 shots) is in distribution, and a fresh
``w ~ N(0, I_d)`` per prompt; the evaluation "tasks" are ``N_REG_TASKS`` fixed weight vectors (seed 23), so a
zero-shot prompt (the query alone) has an expected squared error of ``|w|^2`` for a model that predicts 0.

Corrupted prompts (Todd et al. 2024 §2.1): the same demonstrations with their outputs shuffled among themselves, so
the inputs and the output set stay and the input -> output mapping is gone.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

N_WORDS = 16
N_DAYS = 7
N_MONTHS = 12
TASK_SEED = 17
REG_DIM = 4
REG_SHOTS = 20
N_REG_TASKS = 4
REG_TASK_SEED = 23


@dataclass(frozen=True)
class Vocab:
    """Token ids: BOS, ARROW, then the words, the weekdays and the months."""

    bos: int = 0
    arrow: int = 1
    word0: int = 2
    day0: int = 2 + N_WORDS
    month0: int = 2 + N_WORDS + N_DAYS
    size: int = 2 + N_WORDS + N_DAYS + N_MONTHS

    def domain(self, name: str) -> np.ndarray:
        """The token ids of a domain: "word", "day" or "month"."""
        start, n = {"word": (self.word0, N_WORDS), "day": (self.day0, N_DAYS), "month": (self.month0, N_MONTHS)}[name]
        return np.arange(start, start + n)


VOCAB = Vocab()


def _token_tasks() -> dict[str, tuple[str, np.ndarray]]:
    """name -> (domain, table): ``table[i]`` is the index (within the domain) of the output for input index ``i``."""
    rng = np.random.default_rng(TASK_SEED)
    perms = [rng.permutation(N_WORDS) for _ in range(3)]
    return {
        "word_perm_a": ("word", perms[0]),
        "word_perm_b": ("word", perms[1]),
        "word_perm_c": ("word", perms[2]),
        "word_shift": ("word", (np.arange(N_WORDS) + 5) % N_WORDS),
        "weekday_plus1": ("day", (np.arange(N_DAYS) + 1) % N_DAYS),
        "weekday_plus2": ("day", (np.arange(N_DAYS) + 2) % N_DAYS),
        "month_plus1": ("month", (np.arange(N_MONTHS) + 1) % N_MONTHS),
        "month_plus2": ("month", (np.arange(N_MONTHS) + 2) % N_MONTHS),
    }


TOKEN_TASKS = _token_tasks()
TASK_NAMES = tuple(TOKEN_TASKS)


def apply_task(name: str, token: int) -> int:
    """The answer token of task ``name`` for input token ``token`` (a token of the task's domain)."""
    if name not in TOKEN_TASKS:
        raise ValueError(f"unknown task {name!r}; choose from {', '.join(TASK_NAMES)}")
    domain, table = TOKEN_TASKS[name]
    ids = VOCAB.domain(domain)
    i = int(token) - int(ids[0])
    if not 0 <= i < len(ids):
        raise ValueError(f"token {token} is not in task {name}'s domain {domain!r} (ids {ids[0]}..{ids[-1]})")
    return int(ids[table[i]])


def token_prompts(task: int, n: int, shots: int, *, rng: np.random.Generator,
                  corrupt: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``n`` prompts of task index ``task`` with ``shots`` demonstrations: ids (n, 3 * shots + 3), answers (n,).

    Inputs are drawn uniformly with replacement from the task's domain; ``corrupt`` shuffles the demonstration
    outputs within each prompt (the query's answer stays the true one).
    """
    if not 0 <= task < len(TASK_NAMES):
        raise ValueError(f"task index {task} out of range 0..{len(TASK_NAMES) - 1} ({', '.join(TASK_NAMES)})")
    if shots < 0:
        raise ValueError(f"shots must be >= 0, got {shots}")
    domain, table = TOKEN_TASKS[TASK_NAMES[task]]
    ids = VOCAB.domain(domain)
    xs = rng.integers(0, len(ids), size=(n, shots + 1))
    ys = table[xs]
    if corrupt and shots > 1:
        demo = ys[:, :shots].copy()
        for row in demo:
            rng.shuffle(row)
        ys = np.concatenate([demo, ys[:, shots:]], axis=1)
    out = np.empty((n, 3 * shots + 3), dtype=np.int64)
    out[:, 0] = VOCAB.bos
    out[:, 1::3] = ids[xs]
    out[:, 2::3] = VOCAB.arrow
    out[:, 3::3] = ids[ys[:, :shots]]
    return out, ids[ys[:, shots]].astype(np.int64)


def token_training_batch(n: int, shots: int, *, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A pretraining batch: ``n`` prompts of random tasks with ``shots`` demonstrations and every answer as a target.

    Returns ids (n, 3 * shots + 3) and targets of the same shape: the output token after every arrow (the
    demonstrations' outputs and the query's), -100 (ignored) elsewhere.
    """
    tasks = rng.integers(0, len(TASK_NAMES), size=n)
    ids = np.empty((n, 3 * shots + 3), dtype=np.int64)
    targets = np.full_like(ids, -100)
    for t in np.unique(tasks):
        rows = np.nonzero(tasks == t)[0]
        x, ans = token_prompts(int(t), len(rows), shots, rng=rng)
        ids[rows] = x
        tg = np.full_like(x, -100)
        tg[:, 2:-1:3] = x[:, 3::3]  # the arrow of pair i predicts output i
        tg[:, -1] = ans
        targets[rows] = tg
    return ids, targets


def regression_weights(d: int = REG_DIM, n_tasks: int = N_REG_TASKS) -> np.ndarray:
    """The fixed evaluation weight vectors (n_tasks, d), seeded."""
    return np.random.default_rng(REG_TASK_SEED).standard_normal((n_tasks, d)).astype(np.float32)


def _pair_tokens(x: np.ndarray, y: np.ndarray, shots: int) -> np.ndarray:
    """Demonstration tokens ``[x_i, y_i, 0]`` then the query token ``[x_q, 0, 1]``: (n, shots + 1, d + 2)."""
    n, _, d = x.shape
    seq = np.zeros((n, shots + 1, d + 2), dtype=np.float32)
    seq[:, :, :d] = x
    seq[:, :shots, d] = y[:, :shots]
    seq[:, shots, d + 1] = 1.0
    return seq


def regression_prompts(w: np.ndarray, shots: int, *, rng: np.random.Generator,
                       corrupt: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Prompts for weight vectors ``w`` (n, d): inputs (n, shots + 1, d + 2) and the query targets (n,).

    ``corrupt`` shuffles the demonstration ys within each prompt.
    """
    w = np.asarray(w, dtype=np.float32)
    n, d = w.shape
    x = rng.standard_normal((n, shots + 1, d)).astype(np.float32)
    y = np.einsum("nkd,nd->nk", x, w)
    if corrupt and shots > 1:
        demo = y[:, :shots].copy()
        for row in demo:
            rng.shuffle(row)
        y = np.concatenate([demo, y[:, shots:]], axis=1)
    return _pair_tokens(x, y, shots), y[:, shots].astype(np.float32)


def regression_training_batch(n: int, shots: int, d: int = REG_DIM, *,
                              rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Garg et al.'s pretraining distribution: a fresh ``w ~ N(0, I)`` per prompt and ``shots`` demonstrations
    before the query. Returns inputs (n, shots + 1, d + 2) and the query targets (n,)."""
    w = rng.standard_normal((n, d)).astype(np.float32)
    return regression_prompts(w, shots, rng=rng)
