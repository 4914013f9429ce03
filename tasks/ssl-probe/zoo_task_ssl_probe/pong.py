"""``ssl_probe``'s Pong mode: a seeded numpy Pong-like game at 32x32 and AtariARI-style state probing.

The benchmark follows AtariARI (Anand et al. 2019, "Unsupervised State Representation Learning in Atari", Sec. 4):
frames of a game whose ground-truth state variables are known, an encoder pretrained without labels on frames, then
one linear probe per state variable on the frozen features, scored by the **weighted F1** of its predictions (the
official probe code's ``f1_score(..., average="weighted")``), averaged over the variables (``mean_f1``).

The game (``simulate``, ``render``): a 2x2 ball with a continuous position and velocity, bouncing off the top and
bottom walls and off two 1x6 paddles at columns 1 (``left``, the "player": a sticky random agent, as AtariARI's
frames come from a random agent) and 30 (``right``, the "enemy": a noisy tracker of the ball, speed 1 px per frame);
a missed ball is served again from the centre. Frames are single channel (N, 1, 32, 32) in [0, 1]: background 0,
paddles 0.6, ball 1. One frame holds no velocity, so the probed variables are the four positions, each the pixel
coordinate (ball x/y of its top-left pixel, paddle y of its top) binned into ``bins`` (default 16) equal bins of the
32 pixels: ``ball_x``, ``ball_y``, ``left_y``, ``right_y``.

Pretraining (``run``): a model with ``ssl_views == 2`` gets pairs of CONSECUTIVE frames ``(x_t, x_t+1)`` of the same
episode as its two views (the temporal positives of ST-DIM / CPC-style methods); ``ssl_views == 1`` gets ``(x_t,)``.
No augmentation. The loop is the task's ``train.pretrain`` with AtariARI's optimiser for every method (``TRAINING``:
Adam, lr 3e-4, batches of 64, constant lr), a model's ``ssl_defaults`` and the caller's options overriding it.

Data (all fixed by ``seed``): ``PRETRAIN_EPISODES`` episodes of ``EPISODE_LEN`` frames for pretraining, and separate
episodes for probe training (``PROBE_TRAIN_EPISODES``) and testing (``PROBE_TEST_EPISODES``), as AtariARI splits by
episode. The probe is the task's linear probe recipe (standardised features, multinomial logistic regression, L2
1e-4, full-batch L-BFGS, zero init), one per variable, returning its predictions so F1 can be computed; AtariARI
trains its probes with Adam and early stopping instead (a deviation with the same optimum, deterministic here).

Baselines (``BASELINES``; ``DEFAULT_BASELINES`` leaves out ``pixels``), each built on ``PongCNN`` (AtariARI's
Nature-CNN encoder scaled to 32x32, 32 features) at the size of the model's encoder (``zoo.task.match_width`` over the
width) and trained for the same steps and batch:
``random_cnn`` (the encoder untrained: the paper's RANDOM-CNN), ``autoencoder`` (the encoder plus a mirrored
transposed-conv decoder, pixel MSE; the paper's generative baselines were a VAE and next-frame pixel prediction),
``supervised`` (the encoder plus one linear head per variable trained end to end by cross-entropy on the
probe-training labels: the paper's SUPERVISED upper bound; probed like the others afterwards) and ``pixels`` (the raw
1,024 pixels as features: not in the paper, a reference for how linear the state is in pixel space).

>>> f, s = simulate(5, np.random.default_rng(0))
>>> f.shape, s.shape, int(f.max())
((5, 32, 32), (5, 4), 255)
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from zoo.task import Result, count_params, match_width, model_device, status, torch_threads

from .task import _encoder_size as _baseline_size  # task.py imports this module lazily: no cycle

SIZE, BALL, PADDLE_H, LEFT_X, RIGHT_X = 32, 2, 6, 1, 30
BALL_MAX, PADDLE_MAX = SIZE - BALL, SIZE - PADDLE_H  # top-left coordinates lie in [0, BALL_MAX] / [0, PADDLE_MAX]
PADDLE_LEVEL, BALL_LEVEL = 153, 255  # uint8 intensities (0.6 and 1.0 after /255)
VARIABLES = ("ball_x", "ball_y", "left_y", "right_y")
BINS = 16
EPISODE_LEN = 500
PRETRAIN_EPISODES, PROBE_TRAIN_EPISODES, PROBE_TEST_EPISODES = 40, 8, 4  # 20,000 / 4,000 / 2,000 frames
DEFAULT_STEPS = 1000
# AtariARI's optimiser for every method: Adam, lr 3e-4, batches of 64, constant lr (train.pretrain's keys)
TRAINING = {"optimizer": "adamw", "lr": 3e-4, "weight_decay": 0.0, "batch": 64, "schedule": "constant"}
PROBE_L2, PROBE_ITERS = 1e-4, 100
BASELINES = ("random_cnn", "autoencoder", "supervised", "pixels")
DEFAULT_BASELINES = BASELINES[:3]  # pixels: a 1,024-feature probe, slow; ask for it by name
ENCODE_CHUNK = 1000


# --- the game --------------------------------------------------------------------------------------------------

def _serve(rng: np.random.Generator) -> tuple[float, float, float, float]:
    """A new ball at the centre column, random height, random direction."""
    vx = rng.uniform(0.75, 1.5) * rng.choice((-1.0, 1.0))
    return SIZE / 2 - 1, rng.uniform(4, BALL_MAX - 4), vx, rng.uniform(-1.0, 1.0)


def _hits(ball_y: float, paddle_y: int) -> bool:
    top = int(ball_y)
    return top + BALL > paddle_y and top < paddle_y + PADDLE_H


def render(state: Sequence[int]) -> np.ndarray:
    """The uint8 frame (32, 32) of a pixel state ``(ball_x, ball_y, left_y, right_y)`` (top-left pixel coordinates).

    >>> fr = render((10, 20, 0, 26)); int(fr[20, 10]), int(fr[21, 11]), int(fr[0, 1]), int(fr[31, 30]), int(fr.sum())
    (255, 255, 153, 153, 2856)
    """
    bx, by, ly, ry = (int(v) for v in state)
    if not (0 <= bx <= BALL_MAX and 0 <= by <= BALL_MAX and 0 <= ly <= PADDLE_MAX and 0 <= ry <= PADDLE_MAX):
        raise ValueError(f"render: state {tuple(state)} out of range (ball in [0, {BALL_MAX}], paddles in "
                         f"[0, {PADDLE_MAX}])")
    frame = np.zeros((SIZE, SIZE), dtype=np.uint8)
    frame[ly:ly + PADDLE_H, LEFT_X] = PADDLE_LEVEL
    frame[ry:ry + PADDLE_H, RIGHT_X] = PADDLE_LEVEL
    frame[by:by + BALL, bx:bx + BALL] = BALL_LEVEL
    return frame


def simulate(n_frames: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One episode: uint8 frames (T, 32, 32) and pixel states (T, 4) int64 in ``VARIABLES`` order (see the module
    docstring for the rules). Everything random comes from ``rng``."""
    bx, by, vx, vy = _serve(rng)
    ly, ry = int(rng.integers(0, PADDLE_MAX + 1)), int(rng.integers(0, PADDLE_MAX + 1))
    action = 0
    frames = np.empty((n_frames, SIZE, SIZE), dtype=np.uint8)
    states = np.empty((n_frames, 4), dtype=np.int64)
    for t in range(n_frames):
        states[t] = (min(int(bx), BALL_MAX), min(int(by), BALL_MAX), ly, ry)
        frames[t] = render(states[t])
        # paddles: a sticky random player (keeps its action with prob 0.75) and a noisy tracking enemy
        if rng.random() < 0.25:
            action = int(rng.integers(-1, 2))
        ly = min(max(ly + 2 * action, 0), PADDLE_MAX)
        if rng.random() < 0.8:
            target = by + BALL / 2 - PADDLE_H / 2
            ry = min(max(ry + int(np.sign(round(target - ry))), 0), PADDLE_MAX)
        # ball: walls reflect; a paddle reflects the ball when it crosses the paddle's face, else it is served again
        px = bx
        bx, by = bx + vx, by + vy
        if by < 0:
            by, vy = -by, -vy
        elif by > BALL_MAX:
            by, vy = 2 * BALL_MAX - by, -vy
        left_face, right_face = LEFT_X + 1, RIGHT_X - BALL
        if vx < 0 and px >= left_face > bx and _hits(by, ly):
            bx, vx, vy = 2 * left_face - bx, -vx, float(np.clip(vy + rng.uniform(-0.3, 0.3), -1.25, 1.25))
        elif vx > 0 and px <= right_face < bx and _hits(by, ry):
            bx, vx, vy = 2 * right_face - bx, -vx, float(np.clip(vy + rng.uniform(-0.3, 0.3), -1.25, 1.25))
        elif bx < 0 or bx > BALL_MAX:
            bx, by, vx, vy = _serve(rng)
    return frames, states


def bin_states(states: np.ndarray, bins: int = BINS) -> np.ndarray:
    """Pixel coordinates (any shape, values in [0, 32)) to ``bins`` equal bins of the 32 pixels.

    >>> bin_states(np.array([[0, 1, 2, 31]]), 16).tolist()
    [[0, 0, 1, 15]]
    """
    if not 1 <= bins <= SIZE:
        raise ValueError(f"bins={bins}: use 1..{SIZE}")
    return (np.asarray(states) * bins) // SIZE


@dataclass(frozen=True)
class PongData:
    """The seeded frames: ``pretrain`` (N, 1, 32, 32) uint8 with ``next_ok`` (N,) bool (frame i+1 follows frame i in
    the same episode), ``train``/``test`` frames for the probes with ``train_y``/``test_y`` (n, 4) binned states."""

    pretrain: torch.Tensor
    next_ok: torch.Tensor
    train: torch.Tensor
    train_y: torch.Tensor
    test: torch.Tensor
    test_y: torch.Tensor
    bins: int


def _episodes(seed: int, split: int, n: int, length: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    fr, st, ep = [], [], []
    for e in range(n):
        f, s = simulate(length, np.random.default_rng([seed, split, e]))
        fr.append(f)
        st.append(s)
        ep.append(np.full(length, e))
    return np.concatenate(fr), np.concatenate(st), np.concatenate(ep)


def load(seed: int = 0, *, bins: int = BINS, episode_len: int = EPISODE_LEN, pretrain_episodes: int = PRETRAIN_EPISODES,
         probe_train_episodes: int = PROBE_TRAIN_EPISODES, probe_test_episodes: int = PROBE_TEST_EPISODES) -> PongData:
    """The Pong data of ``seed``: pretraining, probe-training and probe-test episodes from disjoint seed streams."""
    if min(episode_len, pretrain_episodes, probe_train_episodes, probe_test_episodes) < 1 or episode_len < 2:
        raise ValueError("pong: episode_len must be >= 2 and every episode count >= 1")
    pf, _, pe = _episodes(seed, 0, pretrain_episodes, episode_len)
    trf, trs, _ = _episodes(seed, 1, probe_train_episodes, episode_len)
    tef, tes, _ = _episodes(seed, 2, probe_test_episodes, episode_len)
    next_ok = np.zeros(len(pf), dtype=bool)
    next_ok[:-1] = pe[:-1] == pe[1:]
    t = lambda a: torch.from_numpy(a).unsqueeze(1)  # noqa: E731 - (N, 1, 32, 32) uint8
    return PongData(pretrain=t(pf), next_ok=torch.from_numpy(next_ok), train=t(trf),
                    train_y=torch.from_numpy(bin_states(trs, bins)), test=t(tef),
                    test_y=torch.from_numpy(bin_states(tes, bins)), bins=bins)


def as_float(frames: torch.Tensor) -> torch.Tensor:
    return frames.float() / 255.0


def consecutive_sampler(data: PongData, views: int,
                        device: Any = None) -> Callable[[torch.Generator, int], tuple[torch.Tensor, ...]]:
    """``sample(generator, batch)``: ``views`` = 2 gives ``(x_t, x_t+1)``, consecutive frames of one episode; 1 gives
    ``(x_t,)``. Start frames are uniform over those with a successor."""
    if views not in (1, 2):
        raise ValueError(f"pong mode gives 1 view (x_t) or 2 (x_t, x_t+1), not ssl_views={views}")
    starts = data.next_ok.nonzero().flatten()

    def sample(g: torch.Generator, batch: int) -> tuple[torch.Tensor, ...]:
        i = starts[torch.randint(len(starts), (batch,), generator=g)]
        x = as_float(data.pretrain[i]).to(device)
        return (x, as_float(data.pretrain[i + 1]).to(device)) if views == 2 else (x,)
    return sample


# --- the encoder and the baselines ------------------------------------------------------------------------------

class PongCNN(nn.Module):
    """AtariARI's encoder (the no-downsample Nature CNN of ``atariari/methods/encoders.py``) scaled from 160x210 to
    32x32: four ReLU convolutions of ``width`` * (1, 2, 4, 2) channels (4x4 s2, 4x4 s2, 3x3 s1, 3x3 s2, padded: 32
    -> 16 -> 8 -> 8 -> 4), a linear layer to ``feature_size`` without a final ReLU; orthogonal weights with ReLU
    gain, zero biases. ``local_features(x)`` is the output of the third convolution (the "f5" map ST-DIM contrasts):
    (B, 4 * width, 8, 8) at 32x32. AtariARI: width 32 and 256 features for 33,600-pixel frames; here width 16 and
    32 features for 1,024 pixels: with many features a random projection of so small a frame keeps the positions
    linearly decodable (RANDOM-CNN measured mean F1 0.94 at 128 features, 0.80 at 64, 0.59 at 32), so the benchmark
    would not tell representations apart. An adaptive average pool before the linear layer keeps other input sizes
    working (identity at 32x32 and 28x28).

    >>> PongCNN(width=4)(torch.zeros(2, 1, 32, 32)).shape
    torch.Size([2, 32])
    """

    def __init__(self, in_channels: int = 1, width: int = 16, feature_size: int = 32) -> None:
        super().__init__()
        if min(width, in_channels, feature_size) < 1:
            raise ValueError(f"PongCNN: width={width}, in_channels={in_channels} and feature_size={feature_size} "
                             "must be >= 1")
        c1, c2, c3, c4 = width, 2 * width, 4 * width, 2 * width
        self.feature_size = feature_size
        self.local_depth = c3
        self.local = nn.Sequential(nn.Conv2d(in_channels, c1, 4, 2, 1), nn.ReLU(), nn.Conv2d(c1, c2, 4, 2, 1), nn.ReLU(),
                                   nn.Conv2d(c2, c3, 3, 1, 1), nn.ReLU())
        self.top = nn.Sequential(nn.Conv2d(c3, c4, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(4), nn.Flatten(),
                                 nn.Linear(c4 * 16, self.feature_size))
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.orthogonal_(m.weight, gain=nn.init.calculate_gain("relu"))
                nn.init.zeros_(m.bias)

    def local_features(self, x: torch.Tensor) -> torch.Tensor:
        return self.local(x)

    def forward(self, x: torch.Tensor, *, with_local: bool = False) -> Any:
        f = self.local(x)
        out = self.top(f)
        return (out, f) if with_local else out

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return self(x)


class PongAutoencoder(nn.Module):
    """``autoencoder`` baseline: ``PongCNN`` and a decoder mirroring it (linear to (2w, 4, 4), transposed convs 4x4 s2
    to 8, 16, 32 pixels, sigmoid); ``ssl_loss(x)`` is the pixel MSE. ``encode`` is the encoder alone."""

    ssl_views = 1

    def __init__(self, width: int = 16, in_channels: int = 1) -> None:
        super().__init__()
        self.encoder = PongCNN(in_channels, width)
        c4 = 2 * width
        self.decoder = nn.Sequential(nn.Linear(self.encoder.feature_size, c4 * 16), nn.Unflatten(1, (c4, 4, 4)),
                                     nn.ReLU(), nn.ConvTranspose2d(c4, 2 * width, 4, 2, 1), nn.ReLU(),
                                     nn.ConvTranspose2d(2 * width, width, 4, 2, 1), nn.ReLU(),
                                     nn.ConvTranspose2d(width, in_channels, 4, 2, 1), nn.Sigmoid())

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return self.encoder(x)

    forward = encode

    def ssl_loss(self, x: torch.Tensor) -> torch.Tensor:
        return F.mse_loss(self.decoder(self.encoder(x)), x)


class PongSupervised(nn.Module):
    """``supervised`` baseline: ``PongCNN`` plus one linear head per state variable, trained end to end on labels
    (``ssl_loss(x, y)`` with ``trains_on_labels``: the task's loop feeds it labelled probe-training frames; the loss is
    the sum of the heads' cross-entropies). ``encode`` is the encoder alone."""

    trains_on_labels = True

    def __init__(self, width: int = 16, bins: int = BINS, in_channels: int = 1) -> None:
        super().__init__()
        self.encoder = PongCNN(in_channels, width)
        self.heads = nn.Linear(self.encoder.feature_size, len(VARIABLES) * bins)
        self.bins = bins

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return self.encoder(x)

    forward = encode

    def ssl_loss(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        logits = self.heads(self.encoder(x)).reshape(len(x), len(VARIABLES), self.bins)
        return F.cross_entropy(logits.transpose(1, 2), y)


class Pixels(nn.Module):
    """``pixels`` baseline: the flattened frame as features (no parameters)."""

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return x.flatten(1)

    forward = encode


def build_baseline(name: str, *, params: int | None = None, seed: int = 0, bins: int = BINS, in_channels: int = 1,
                   **_: Any) -> nn.Module:
    """Pong baseline ``name`` (``BASELINES``), seeded; its encoder (``PongCNN``) sized to ``params`` when given
    (the width whose encoder's ``count_params`` is closest), else width 16."""
    if name not in BASELINES:
        raise ValueError(f"unknown pong baseline {name!r}; choose from {', '.join(BASELINES)}")
    if name == "pixels":
        return Pixels()
    width = 16
    if params is not None:
        width = match_width(lambda w: PongCNN(in_channels, w), params)
    torch.manual_seed(seed)
    if name == "random_cnn":
        return PongCNN(in_channels, width)
    if name == "autoencoder":
        return PongAutoencoder(width, in_channels)
    return PongSupervised(width, bins, in_channels)


# --- probing -----------------------------------------------------------------------------------------------------

def weighted_f1(y_true: torch.Tensor, y_pred: torch.Tensor) -> float:
    """F1 per class weighted by the class's support in ``y_true`` (scikit-learn's ``average="weighted"``, AtariARI's
    metric); a class never predicted and never true does not count, one with no true examples weighs 0.

    >>> weighted_f1(torch.tensor([0, 0, 1, 1]), torch.tensor([0, 1, 1, 1]))
    0.7333333333333334
    """
    y_true, y_pred = y_true.long().flatten(), y_pred.long().flatten()
    total = 0.0
    for c in y_true.unique().tolist():
        tp = float(((y_pred == c) & (y_true == c)).sum())
        fp = float(((y_pred == c) & (y_true != c)).sum())
        fn = float(((y_pred != c) & (y_true == c)).sum())
        f1 = 2 * tp / (2 * tp + fp + fn) if tp > 0 else 0.0
        total += f1 * (tp + fn)
    return total / len(y_true)


def probe_predict(train_f: torch.Tensor, train_y: torch.Tensor, test_f: torch.Tensor, n_classes: int, *,
                  l2: float = PROBE_L2, iters: int = PROBE_ITERS) -> torch.Tensor:
    """Test predictions (n, V) of one multinomial logistic regression per column of ``train_y`` (n, V) on frozen
    features: features standardised with the training part's mean and std; each variable's ``W_v f + b_v`` minimises
    its mean cross-entropy + ``l2`` ||W_v||^2. The V problems are separable, so they are solved together (one
    full-batch L-BFGS on the sum, strong Wolfe, ``iters`` iterations, float64, zero init): convex, so no seed.

    >>> f = torch.tensor([[0.0], [1.0], [2.0], [3.0]]); y = torch.tensor([[0, 1], [0, 1], [1, 0], [1, 0]])
    >>> probe_predict(f, y, f, 2).tolist()
    [[0, 1], [0, 1], [1, 0], [1, 0]]
    """
    mu, sd = train_f.double().mean(0), train_f.double().std(0).clamp_min(1e-6)
    tr, te = (train_f.double() - mu) / sd, (test_f.double() - mu) / sd
    v = train_y.shape[1]
    w = torch.zeros(tr.shape[1], v * n_classes, dtype=torch.float64, requires_grad=True)
    b = torch.zeros(v * n_classes, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], lr=1, max_iter=iters, history_size=20, line_search_fn="strong_wolfe",
                            tolerance_grad=1e-9, tolerance_change=1e-12)

    def closure() -> torch.Tensor:
        opt.zero_grad()
        logits = (tr @ w + b).reshape(len(tr), v, n_classes).transpose(1, 2)  # (n, K, V)
        loss = v * F.cross_entropy(logits, train_y) + l2 * (w * w).sum()  # the sum of the V mean losses
        loss.backward()
        return loss

    with torch.enable_grad(), torch_threads(1):  # tiny float64 ops: threads only add overhead on a shared machine
        opt.step(closure)
    with torch.no_grad():
        return (te @ w + b).reshape(len(te), v, n_classes).argmax(2)


def probe_scores(train_f: torch.Tensor, train_y: torch.Tensor, test_f: torch.Tensor, test_y: torch.Tensor,
                 bins: int = BINS) -> dict[str, float]:
    """One linear probe per state variable (columns of ``*_y``, ``VARIABLES``): ``f1_<var>``, ``acc_<var>``,
    ``mean_f1`` and ``mean_acc`` (plain means over the variables, AtariARI's overall average)."""
    pred = probe_predict(train_f, train_y, test_f, bins)
    out: dict[str, float] = {}
    for j, var in enumerate(VARIABLES):
        out[f"f1_{var}"] = weighted_f1(test_y[:, j], pred[:, j])
        out[f"acc_{var}"] = float((pred[:, j] == test_y[:, j]).double().mean())
    out["mean_f1"] = sum(out[f"f1_{v}"] for v in VARIABLES) / len(VARIABLES)
    out["mean_acc"] = sum(out[f"acc_{v}"] for v in VARIABLES) / len(VARIABLES)
    return out


@torch.no_grad()
def encode_frames(model: nn.Module, frames: torch.Tensor) -> torch.Tensor:
    """``model.encode`` (else ``model``) on uint8 frames, in eval mode and chunks, as float32 CPU features (N, D)."""
    was = model.training
    model.eval()
    fn = getattr(model, "encode", model)
    dev = model_device(model)
    try:
        out = torch.cat([fn(as_float(frames[s:s + ENCODE_CHUNK]).to(dev)).float().cpu()
                         for s in range(0, len(frames), ENCODE_CHUNK)])
    finally:
        model.train(was)
    if out.ndim != 2 or out.shape[0] != len(frames):
        raise AssertionError(f"pong: encode(x) must return (N, D) features, got {tuple(out.shape)}")
    return out


def score(model: nn.Module, data: PongData) -> dict[str, float]:
    """Probe metrics and the collapse indicators of ``model``'s frozen features."""
    from .probe import collapse

    tr, te = encode_frames(model, data.train), encode_frames(model, data.test)
    return {**probe_scores(tr, data.train_y, te, data.test_y, data.bins), **collapse(te)}


# --- training ----------------------------------------------------------------------------------------------------

def labelled_sampler(data: PongData, device: Any = None) -> Callable[[torch.Generator, int], tuple[torch.Tensor, ...]]:
    """``sample(generator, batch)`` -> ``(frames, binned states)`` from the probe-training part (``supervised``)."""
    def sample(g: torch.Generator, batch: int) -> tuple[torch.Tensor, ...]:
        i = torch.randint(len(data.train), (batch,), generator=g)
        return as_float(data.train[i]).to(device), data.train_y[i].to(device)
    return sample


def train(model: nn.Module, data: PongData, *, steps: int | None, seed: int, budget_s: float | None = None,
          progress: str | None = None, **options: Any) -> dict[str, float]:
    """Train ``model`` with the task's loop (``train.pretrain``: ``options`` are its optimiser settings) on
    consecutive frames (``consecutive_sampler``), or on labelled probe-training frames for a model with
    ``trains_on_labels`` (the ``supervised`` baseline). A model without ``ssl_loss`` (``random_cnn``, ``pixels``) or
    ``steps=0`` is left as it is. Returns ``pretrain_steps``, ``pretrain_seconds`` and ``final_ssl_loss``."""
    from .train import pretrain

    if steps == 0 or not callable(getattr(model, "ssl_loss", None)):
        return {}
    dev = model_device(model)
    if getattr(model, "trains_on_labels", False):
        sample = labelled_sampler(data, dev)
    else:
        sample = consecutive_sampler(data, int(getattr(model, "ssl_views", 2)), dev)
    fit = pretrain(model, sample, steps=steps, seed=seed, budget_s=budget_s, progress=progress, **options)
    return {"pretrain_steps": float(fit["steps"]), "pretrain_seconds": fit["train_seconds"],
            "final_ssl_loss": fit["final_train_loss"]}


# --- the mode ----------------------------------------------------------------------------------------------------

DATA_OPTIONS = ("bins", "episode_len", "pretrain_episodes", "probe_train_episodes", "probe_test_episodes")
TRAIN_OPTIONS = ("optimizer", "lr", "weight_decay", "momentum", "batch", "schedule")
RUN_OPTIONS = ("init_probe", "baseline_params", "train_model")


def describe(steps: int | None = None, budget_s: float | None = None, **options: Any) -> dict[str, Any]:
    """The Pong protocol's settings as ``run`` uses them with these options."""
    ep = int(options.get("episode_len", EPISODE_LEN))
    return {"mode": "pong", "frame": "(N, 1, 32, 32) in [0, 1], one frame per input",
            "views": "ssl_views=2: consecutive frames (x_t, x_t+1) of one episode; 1: (x_t,)",
            "variables": list(VARIABLES), "bins": int(options.get("bins", BINS)), "episode_len": ep,
            "pretrain_frames": ep * int(options.get("pretrain_episodes", PRETRAIN_EPISODES)),
            "probe_train_frames": ep * int(options.get("probe_train_episodes", PROBE_TRAIN_EPISODES)),
            "probe_test_frames": ep * int(options.get("probe_test_episodes", PROBE_TEST_EPISODES)),
            "steps": DEFAULT_STEPS if steps is None and budget_s is None else steps, "budget_s": budget_s,
            "training": {**TRAINING, **{k: options[k] for k in TRAIN_OPTIONS if k in options}},
            "probe": f"one multinomial logistic regression per variable on standardised frozen features, L2 "
                     f"{PROBE_L2}, L-BFGS {PROBE_ITERS} iterations; weighted F1 (AtariARI), mean over variables",
            "baselines": list(options.get("baselines") or DEFAULT_BASELINES)}


def run(model: nn.Module, *, steps: int | None = None, seed: int = 0, baselines: Sequence[str] | None = None,
        out_dir: str | None = None, budget_s: float | None = None, rebuild: Any = None, progress: bool = False,
        **options: Any) -> Result:
    """Pretrain ``model`` on Pong frames (``steps``, default ``DEFAULT_STEPS``), probe its frozen features per state
    variable, and do the same for each baseline (default ``DEFAULT_BASELINES``) under the same steps and batch.

    Options: the data (``DATA_OPTIONS``), the optimiser (``TRAIN_OPTIONS``, as ``train.pretrain`` takes them: the
    Pong defaults ``TRAINING``, then the model's ``ssl_defaults``, then these; the baselines get ``TRAINING`` and
    these, at the model's batch), ``init_probe`` (default True: ``mean_f1_init``, the model's probe before
    training), ``baseline_params`` ("encoder": the size of ``model.encoder`` when it has one, else the model;
    "model"; a count), ``train_model`` (default: unless zoo loaded pretrained weights). ``out_dir`` and ``rebuild``
    are unused.
    """
    del out_dir, rebuild
    unknown = sorted(set(options) - set(DATA_OPTIONS) - set(TRAIN_OPTIONS) - set(RUN_OPTIONS))
    if unknown:
        raise ValueError(f"ssl_probe pong mode: unknown option(s) {unknown}; data options {list(DATA_OPTIONS)}, "
                         f"training options {list(TRAIN_OPTIONS)}, run options {list(RUN_OPTIONS)}")
    names = list(DEFAULT_BASELINES if baselines is None else baselines)
    bad = [b for b in names if b not in BASELINES]
    if bad:
        raise ValueError(f"ssl_probe pong mode: unknown baseline(s) {bad}; choose from {list(BASELINES)}")
    if steps is None and budget_s is None:
        steps = DEFAULT_STEPS
    if steps is not None and steps < 0:
        raise ValueError(f"steps={steps} must be >= 0")
    data_opts = {k: int(options[k]) for k in DATA_OPTIONS if k in options}
    train_opts = {k: options[k] for k in TRAIN_OPTIONS if k in options}
    model_opts = {**TRAINING, **(getattr(model, "ssl_defaults", None) or {}), **train_opts}
    base_opts = {**TRAINING, **train_opts, "batch": model_opts["batch"]}
    size = _baseline_size(model, options.get("baseline_params", "encoder"))
    train_model = options.get("train_model")
    if train_model is None:
        train_model = not getattr(getattr(model, "zoo", None), "pretrained", False)
    t0 = time.perf_counter()
    with torch_threads(1):
        data = load(seed, **data_opts)
        metrics: dict[str, float] = {"params": float(count_params(model))}
        if options.get("init_probe", True) and train_model:
            metrics["mean_f1_init"] = score(model, data)["mean_f1"]
        if train_model:
            if callable(getattr(model, "ssl_loss", None)):
                status(f"ssl_probe pong: pretraining {type(model).__name__} ({steps} steps)", force=progress)
            metrics.update(train(model, data, steps=steps, seed=seed, budget_s=budget_s,
                                 progress="pretrain" if progress else None, **model_opts))
        metrics.update(score(model, data))
        results: dict[str, dict[str, float]] = {}
        for name in names:
            status(f"ssl_probe pong: baseline {name}", force=progress)
            base = build_baseline(name, params=size, seed=seed, bins=data.bins).to(model_device(model))
            fit = train(base, data, steps=steps, seed=seed, budget_s=budget_s,
                        progress=f"train {name}" if progress else None, **base_opts)
            enc = getattr(base, "encoder", base)
            results[name] = {"params": float(count_params(enc)), **fit, **score(base, data)}
    config = {**describe(steps=steps, budget_s=budget_s, **data_opts, **train_opts), "seed": seed,
              "trained": bool(train_model), "model_training": model_opts, "baseline_params": size}
    return Result(task="ssl_probe", metrics=metrics, baselines=results, n=len(data.test),
                  seconds=time.perf_counter() - t0, config=config)




def example_input() -> torch.Tensor:
    """Four consecutive Pong frames (4, 1, 32, 32) in [0, 1] (seed 0): the mode's example input."""
    f, _ = simulate(4, np.random.default_rng(0))
    return as_float(torch.from_numpy(f).unsqueeze(1))


__all__ = ["BASELINES", "DEFAULT_BASELINES", "VARIABLES", "PongCNN", "PongData", "build_baseline", "describe",
           "example_input", "load", "render", "run", "score", "simulate", "train", "weighted_f1"]
