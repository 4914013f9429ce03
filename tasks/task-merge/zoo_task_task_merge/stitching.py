"""``task_merge`` mode ``stitching``: zero-shot model stitching through a shared (relative) latent space.

Protocol of Moschella et al. 2023 ("Relative representations enable zero-shot latent space communication", ICLR,
Section 5.1) at digits scale. Two encoders A and B are trained on the same classification data (``dataset``, the
``zoo_task_digits`` split) but differ: a different seed, or a different architecture. The evaluated model maps
latents into a shared space, ``model.project(latents (N, D), anchors (k, D)) -> (N, d')`` (``model(latents,
anchors)`` when it has no ``project``), where ``anchors`` are the SAME ``k`` training images encoded by the same
encoder. A classifier head is trained on A's projected training latents and applied, untouched, to B's projected test
latents (zero-shot stitching A->B), and the other way round (B->A).

Settings (``setting=``), each a pair of latent spaces with a known relation:

================  ===============================================================================================
``seed``          A and B: the same MLP encoder, trained from different seeds
``arch``          A: the MLP encoder, B: a CNN encoder (``zoo_nn`` ``DigitsCNN``), same latent width
``scale_rotate``  ``seed``, then B's latents multiplied by a random orthogonal matrix and by 4 (angles preserved)
``translate``     ``seed``, then B's latents shifted by a random vector 3x their mean norm (distances preserved)
``isometry``      ``seed``, then B's latents rotated and shifted as above (distances preserved, angles not)
================  ===============================================================================================

So different similarity functions are the right invariance in different settings: cosine relative projections are
exactly invariant to ``scale_rotate`` and not to a translation; Euclidean ones to ``isometry`` and ``translate``.

Metrics (each the mean of the two directions, ``_ab``/``_ba`` for one direction):

- ``stitch_acc``: test accuracy of A's head on B's projected latents (A->B) and of B's head on A's (B->A);
- ``within_acc``: test accuracy of each head on its own encoder's projected latents (the no-stitching reference);
- ``latent_similarity``: mean cosine similarity between A's and B's projections of the same test image, each space
  first centred by its own mean over the test set (so a constant offset shared by all samples counts for nothing);
- ``latent_top1``: fraction of test images whose nearest B projection (cosine, centred) is their own (retrieval);
- ``latent_cka``: linear CKA between the two projected test sets (reported; invariant to rotations and scale).

Baselines: ``absolute`` (the raw latents, no projection: stitching has no reason to work) and ``cosine`` (Moschella
et al.'s relative representation: cosine similarity to each anchor, nothing else). Heads are MLPs (one hidden ReLU
layer) whose width is chosen so every head has ``HEAD_PARAMS`` parameters (within 1%) whatever its input size, trained
with Adam for ``steps`` (default ``HEAD_STEPS``) on the same batches. Encoders are trained once per dataset, seed and
architecture and their latents cached in zoo's cache (``ZOO_CACHE_DIR``/task_merge, ``.npz``).
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

log = logging.getLogger(__name__)

VERSION = 1  # the encoder recipe below; part of every cache key
MODE = "stitching"
SETTINGS = ("seed", "arch", "scale_rotate", "translate", "isometry")
DATASETS = ("digits", "fashion_mnist")
BASELINES = ("absolute", "cosine")
LATENT_DIM = 32
MLP_HIDDEN, CNN_WIDTH = 128, 16
ENC_STEPS, ENC_LR, ENC_BATCH = 600, 2e-3, 64
N_ANCHORS = 64
ANCHOR_SEED = 0  # the anchor set is fixed: the same training images for every seed and setting
HEAD_PARAMS = 8192
HEAD_STEPS, HEAD_LR, HEAD_BATCH = 400, 1e-3, 128
SCALE, SHIFT = 4.0, 3.0  # scale_rotate multiplies by SCALE; translate shifts by SHIFT x the mean latent norm
FASHION_TRAIN = 12_000  # Fashion-MNIST training images used (the suite's size)


class Encoder(nn.Module):
    """A digits classifier split into ``encode`` (image -> ``LATENT_DIM`` latent) and a linear ``head``."""

    def __init__(self, arch: str) -> None:
        super().__init__()
        if arch == "mlp":
            self.body = nn.Sequential(nn.Flatten(), nn.Linear(64, MLP_HIDDEN), nn.ReLU(),
                                      nn.Linear(MLP_HIDDEN, MLP_HIDDEN), nn.ReLU(), nn.Linear(MLP_HIDDEN, LATENT_DIM))
        elif arch == "cnn":
            from zoo_nn.backbones import DigitsCNN

            self.body = DigitsCNN(width=CNN_WIDTH, embed_dim=LATENT_DIM).features
        else:
            raise ValueError(f"task_merge stitching: unknown encoder architecture {arch!r}; choose 'mlp' or 'cnn'")
        self.head = nn.Linear(LATENT_DIM, 10)

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.encode(x))


def _data(dataset: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    if dataset not in DATASETS:
        raise ValueError(f"task_merge stitching: unknown dataset {dataset!r}; choose from {list(DATASETS)}")
    from zoo_task_digits.task import load_split

    xtr, ytr, xte, yte = load_split(dataset)
    if dataset == "fashion_mnist":
        xtr, ytr = xtr[:FASHION_TRAIN], ytr[:FASHION_TRAIN]
    return xtr, ytr, xte, yte


def encoder_latents(dataset: str, arch: str, seed: int, *, steps: int = ENC_STEPS) -> dict[str, np.ndarray]:
    """``{"train", "test"}`` latents (N, ``LATENT_DIM``) of the ``arch`` encoder trained from ``seed`` on ``dataset``
    (Adam, ``steps`` batches of ``ENC_BATCH``, cross-entropy through a linear head), plus its ``test_acc``. Cached."""
    from zoo.fileio import cached_arrays
    from zoo.weights import cache_dir

    xtr, ytr, xte, yte = _data(dataset)

    def compute() -> dict[str, np.ndarray]:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seed))
            enc = Encoder(arch)
            g = torch.Generator().manual_seed(1_000 + int(seed))
            opt = torch.optim.Adam(enc.parameters(), lr=ENC_LR)
            for _ in range(int(steps)):
                idx = torch.randint(0, len(ytr), (ENC_BATCH,), generator=g)
                loss = F.cross_entropy(enc(xtr[idx]), ytr[idx])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
            enc.eval()
            with torch.no_grad():
                ztr, zte = enc.encode(xtr), enc.encode(xte)
                acc = (enc.head(zte).argmax(1) == yte).float().mean()
        return {"train": ztr.numpy(), "test": zte.numpy(), "test_acc": np.asarray(float(acc))}

    key = f"stitch-{dataset}-{arch}-s{int(seed)}-e{int(steps)}-d{LATENT_DIM}-v{VERSION}"
    return cached_arrays(cache_dir() / "task_merge" / f"{key}.npz", compute)


def _orthogonal(d: int, g: torch.Generator) -> torch.Tensor:
    q, r = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))
    return (q * torch.sign(torch.diagonal(r))).float()  # Haar-distributed


def transform_latents(setting: str, z: dict[str, torch.Tensor], seed: int) -> dict[str, torch.Tensor]:
    """B's latent space under ``setting``'s transformation (the same map for every split; seeded by ``seed``)."""
    if setting not in SETTINGS:
        raise ValueError(f"task_merge stitching: unknown setting {setting!r}; choose from {list(SETTINGS)}")
    if setting in ("seed", "arch"):
        return z
    g = torch.Generator().manual_seed(7_919 + int(seed))
    d = z["train"].shape[1]
    q = _orthogonal(d, g)
    shift = torch.randn(d, generator=g)
    shift = shift / shift.norm() * SHIFT * z["train"].norm(dim=1).mean()
    if setting == "scale_rotate":
        return {k: SCALE * v @ q for k, v in z.items()}
    if setting == "translate":
        return {k: v + shift for k, v in z.items()}
    return {k: v @ q + shift for k, v in z.items()}  # isometry


def anchor_indices(n_train: int, n_anchors: int) -> torch.Tensor:
    """The fixed anchor set: ``n_anchors`` distinct training indices drawn with ``ANCHOR_SEED``."""
    if not 1 <= int(n_anchors) <= n_train:
        raise ValueError(f"task_merge stitching: n_anchors must be in [1, {n_train}], got {n_anchors}")
    return torch.randperm(n_train, generator=torch.Generator().manual_seed(ANCHOR_SEED))[: int(n_anchors)]


class AbsoluteProjection(nn.Module):
    """Baseline ``absolute``: the latents as they are (the anchors are ignored)."""

    def forward(self, latents: torch.Tensor, anchors: torch.Tensor) -> torch.Tensor:
        return latents


class CosineProjection(nn.Module):
    """Baseline ``cosine``: Moschella et al.'s relative representation, ``cos(x, a_j)`` for each anchor ``a_j``."""

    def forward(self, latents: torch.Tensor, anchors: torch.Tensor) -> torch.Tensor:
        return F.normalize(latents, dim=1) @ F.normalize(anchors, dim=1).T


def build_baseline(name: str, **options: Any) -> nn.Module:
    """Stitching baseline ``name`` (``absolute`` or ``cosine``): a projection without parameters."""
    if name == "absolute":
        return AbsoluteProjection()
    if name == "cosine":
        return CosineProjection()
    raise ValueError(f"task_merge stitching: unknown baseline {name!r}; choose from {list(BASELINES)}")


def project(model: Any, latents: torch.Tensor, anchors: torch.Tensor) -> torch.Tensor:
    """``model.project(latents, anchors)`` (or ``model(latents, anchors)``), checked against the contract."""
    fn = getattr(model, "project", None) or model
    with torch.no_grad():
        out = fn(latents, anchors)
    if not isinstance(out, torch.Tensor) or out.dim() != 2 or out.shape[0] != latents.shape[0]:
        raise ValueError(f"task_merge stitching: project(latents {tuple(latents.shape)}, anchors "
                         f"{tuple(anchors.shape)}) must return (N, d'), got "
                         f"{tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__}")
    if not torch.isfinite(out).all():
        raise ValueError("task_merge stitching: the projection returned non-finite values")
    return out.float()


def _head(d_in: int) -> Callable[[], nn.Module]:
    from zoo.task import match_width

    def build(h: int) -> nn.Module:
        return nn.Sequential(nn.Linear(d_in, h), nn.ReLU(), nn.Linear(h, 10))

    width = match_width(build, HEAD_PARAMS)
    return lambda: build(width)


def train_head(feats: torch.Tensor, y: torch.Tensor, *, steps: int, seed: int) -> nn.Module:
    """The stitching head: an MLP of ``HEAD_PARAMS`` parameters trained with Adam on ``feats`` (seeded)."""
    make = _head(feats.shape[1])
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        head = make()
    g = torch.Generator().manual_seed(2_000 + int(seed))
    opt = torch.optim.Adam(head.parameters(), lr=HEAD_LR)
    for _ in range(int(steps)):
        idx = torch.randint(0, len(y), (HEAD_BATCH,), generator=g)
        loss = F.cross_entropy(head(feats[idx]), y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return head.eval()


def _accuracy(head: nn.Module, feats: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        return float((head(feats).argmax(1) == y).float().mean())


def similarity_metrics(pa: torch.Tensor, pb: torch.Tensor) -> dict[str, float]:
    """``latent_similarity`` (mean centred cosine of matching rows), ``latent_top1`` (each row of ``pa`` retrieves
    its own row of ``pb`` by centred cosine) and ``latent_cka`` (linear CKA) of two projections of the same inputs.

    >>> x = torch.randn(50, 6)
    >>> {k: round(v, 4) for k, v in similarity_metrics(x, 3 * x + 1).items()}
    {'latent_similarity': 1.0, 'latent_top1': 1.0, 'latent_cka': 1.0}
    """
    ca, cb = pa - pa.mean(0), pb - pb.mean(0)
    out: dict[str, float] = {}
    if ca.shape[1] == cb.shape[1]:
        na, nb = F.normalize(ca, dim=1), F.normalize(cb, dim=1)
        out["latent_similarity"] = float((na * nb).sum(1).mean())
        out["latent_top1"] = float(((na @ nb.T).argmax(1) == torch.arange(len(na))).float().mean())
    ca64, cb64 = ca.double(), cb.double()
    hsic = (ca64.T @ cb64).pow(2).sum()
    out["latent_cka"] = float(hsic / ((ca64.T @ ca64).pow(2).sum().sqrt() * (cb64.T @ cb64).pow(2).sum().sqrt()))
    return out


def spaces(setting: str, seed: int, dataset: str = "digits") -> dict[str, Any]:
    """The two latent spaces of ``setting`` for ``seed``: ``{"A", "B"}`` each ``{"train", "test"}`` tensors, the
    labels ``y_train``/``y_test`` and each encoder's own test accuracy (``enc_acc_a``/``enc_acc_b``)."""
    if setting not in SETTINGS:
        raise ValueError(f"task_merge stitching: unknown setting {setting!r}; choose from {list(SETTINGS)}")
    _, ytr, _, yte = _data(dataset)
    la = encoder_latents(dataset, "mlp", 2 * int(seed))
    lb = encoder_latents(dataset, "cnn" if setting == "arch" else "mlp", 2 * int(seed) + 1)
    za = {k: torch.from_numpy(np.asarray(la[k])) for k in ("train", "test")}
    zb = transform_latents(setting, {k: torch.from_numpy(np.asarray(lb[k])) for k in ("train", "test")}, seed)
    return {"A": za, "B": zb, "y_train": ytr, "y_test": yte,
            "enc_acc_a": float(la["test_acc"]), "enc_acc_b": float(lb["test_acc"])}


def score(model: Any, sp: dict[str, Any], *, n_anchors: int = N_ANCHORS, steps: int = HEAD_STEPS,
          seed: int = 0) -> dict[str, float]:
    """Every stitching metric of ``model``'s projection on the latent spaces ``sp`` (from ``spaces``)."""
    idx = anchor_indices(len(sp["y_train"]), n_anchors)
    proj = {s: {k: project(model, sp[s][k], sp[s]["train"][idx]) for k in ("train", "test")} for s in ("A", "B")}
    if proj["A"]["test"].shape[1] != proj["B"]["test"].shape[1]:
        raise ValueError(f"task_merge stitching: the projection gives A {proj['A']['test'].shape[1]} and B "
                         f"{proj['B']['test'].shape[1]} features: stitching needs one shared space")
    heads = {s: train_head(proj[s]["train"], sp["y_train"], steps=steps, seed=seed) for s in ("A", "B")}
    y = sp["y_test"]
    m = {"stitch_acc_ab": _accuracy(heads["A"], proj["B"]["test"], y),
         "stitch_acc_ba": _accuracy(heads["B"], proj["A"]["test"], y),
         "within_acc_a": _accuracy(heads["A"], proj["A"]["test"], y),
         "within_acc_b": _accuracy(heads["B"], proj["B"]["test"], y)}
    m["stitch_acc"] = (m["stitch_acc_ab"] + m["stitch_acc_ba"]) / 2
    m["within_acc"] = (m["within_acc_a"] + m["within_acc_b"]) / 2
    m.update(similarity_metrics(proj["A"]["test"], proj["B"]["test"]))
    m["dim"] = int(proj["A"]["test"].shape[1])
    return m


def describe(**options: Any) -> dict[str, Any]:
    """The stitching protocol's settings (what ``run`` does with ``options``)."""
    setting, dataset = options.get("setting", "seed"), options.get("dataset", "digits")
    return {"mode": MODE, "setting": setting, "dataset": dataset, "settings": list(SETTINGS),
            "encoders": f"A: MLP 64-{MLP_HIDDEN}-{MLP_HIDDEN}-{LATENT_DIM}; B: the same (seed 2s+1) or DigitsCNN "
                        f"width {CNN_WIDTH} -> {LATENT_DIM} (arch); Adam lr {ENC_LR}, {ENC_STEPS} steps of {ENC_BATCH}",
            "n_anchors": options.get("n_anchors", N_ANCHORS), "anchor_seed": ANCHOR_SEED,
            "head": f"MLP, one hidden ReLU layer, {HEAD_PARAMS} params; Adam lr {HEAD_LR}, batch {HEAD_BATCH}",
            "head_steps": options.get("steps") or HEAD_STEPS, "scale": SCALE, "shift": SHIFT,
            "baselines": list(BASELINES)}


def run(model: Any, *, seed: int = 0, steps: int | None = None, baselines: Sequence[str] | None = None,
        dataset: str = "digits", out_dir: str | None = None, setting: str = "seed", n_anchors: int = N_ANCHORS,
        **options: Any) -> Any:
    """Score ``model``'s shared space and the ``baselines`` (default: all of ``BASELINES``) on ``setting``.

    ``steps``: head training steps (default ``HEAD_STEPS``). Returns a ``zoo.task.Result``."""
    from zoo.task import Result

    unknown = sorted(k for k in options if k not in ("budget_s", "rebuild", "progress", "mode"))
    if unknown:
        raise ValueError(f"task_merge stitching: unknown option(s) {unknown}; it takes setting={list(SETTINGS)}, "
                         f"dataset={list(DATASETS)}, n_anchors, steps, seed, baselines")
    names = list(BASELINES if baselines is None else baselines)
    bad = [b for b in names if b not in BASELINES]
    if bad:
        raise ValueError(f"task_merge stitching: unknown baseline(s) {bad}; choose from {list(BASELINES)}")
    steps = HEAD_STEPS if steps is None else int(steps)
    t0 = time.perf_counter()
    sp = spaces(setting, seed, dataset)
    metrics = score(model, sp, n_anchors=n_anchors, steps=steps, seed=seed)
    metrics.update(enc_acc_a=sp["enc_acc_a"], enc_acc_b=sp["enc_acc_b"])
    base = {b: score(build_baseline(b), sp, n_anchors=n_anchors, steps=steps, seed=seed) for b in names}
    cfg = describe(setting=setting, dataset=dataset, n_anchors=n_anchors, steps=steps)
    cfg["seed"] = int(seed)
    return Result(task="task_merge", metrics=metrics, baselines=base, n=len(sp["y_test"]),
                  seconds=time.perf_counter() - t0, config=cfg)

