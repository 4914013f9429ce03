"""The model-merging suite: one pretrained base network and T = 8 fine-tuned variants of it, one per task.

The network (``MergeMLP``) is an encoder, 64 -> 256 -> 256 with ReLU (``fc1``, ``fc2``: ``nn.Linear``), and one
frozen classification head per task (``heads``: (17, 10, 256), no bias: ``HEADS``), the miniature of Ilharco et al.'s CLIP
setting: the encoder is pretrained on the ``control`` task (digit identity on the dataset as it is: scikit-learn's
8x8 digits, or Fashion-MNIST area-downsampled to 8x8, both from ``zoo_task_digits``) with a throw-away linear
classifier; then each task's head is fixed to its class prototypes under the pretrained encoder (the unit-norm mean
of the unit-norm features of each class of that task's training split; logits are ``LOGIT_SCALE`` times cosines, the
analogue of CLIP's zero-shot text heads; rows of classes a task does not use are zero and masked), and fine-tuning
moves the encoder only. Heads are part of every state dict and equal in all of them (their task vectors are zero).
``model(x, task)`` scores ``x`` with ``task``'s head.

The eight tasks are label tasks on the same images: each regroups the ten classes (``LABELS``), so each fine-tuned
encoder reshapes the features its own way and a merged encoder must keep all eight groupings:

====================  =========================================================================
``parity``            class mod 2
``ge5``               class >= 5
``mod3``              class mod 3
``mod4``              class mod 4
``loops``             closed loops of the digit's glyph (0, 4, 6, 9: one; 8: two; else none)
``prime``             class in {2, 3, 5, 7}
``lt3``               class < 3
``mod5``              class mod 5
====================  =========================================================================

Input-transform tasks (``TRANSFORMS``: ``rotate90``/``180``/``270``, ``flip_h``/``_v``, ``invert`` = 1 - x,
``permute`` = a fixed pixel permutation (seed 1234), ``shift`` = a cyclic roll by (2, 2)) can be asked for by name but
are not in the default suite: in a
64-input encoder they do not compose, every merge with lambda > 0 scored below the pretrained base in the pilots (e.g.
8 transforms: base 0.73, task arithmetic at 0.1: 0.72, fine-tuned 0.97), which leaves nothing to compare. Label tasks
on shared inputs compose only partly (digits, test accuracy averaged over the 8 tasks, mean of seeds 0-4, from
``zoo reproduce stf-merge``: base 0.799, weight averaging 0.880, task arithmetic 0.881 at lambda 0.15, TIES 0.856,
fine-tuned 0.983), the regime of Ilharco et al.'s ViT results.

Splits are the same for every suite seed: the dataset's test split is ``test``, and a fixed 20% of its training
split (``VAL_FRACTION``, split seed 0) is ``val``, the rest ``train`` (Fashion-MNIST: the first 12,000 training
images, 2,400 of them val). The suite seed fixes the base's initialisation and every batch order.

States are cached in zoo's cache (``ZOO_CACHE_DIR``/task_merge) as safetensors, one file for the base and one per
fine-tuned task, keyed by dataset, seed, steps, width and ``VERSION``: the 8-task digits suite builds in about 20 s
on one core, then loads in milliseconds.

>>> suite = build_suite(seed=0, tasks=("parity", "loops"), pre_steps=50, ft_steps=20)   # doctest: +SKIP
>>> suite.tasks, sorted(suite.task_vectors[0]) == sorted(suite.base_state)              # doctest: +SKIP
(['parity', 'loops'], True)
"""
from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn

log = logging.getLogger(__name__)

VERSION = 6  # the recipe below; part of every cache key (bump it when the recipe changes)
LABELS: dict[str, tuple[int, ...]] = {  # task -> the new label of each class 0..9
    "parity": (0, 1, 0, 1, 0, 1, 0, 1, 0, 1),
    "ge5": (0, 0, 0, 0, 0, 1, 1, 1, 1, 1),
    "mod3": (0, 1, 2, 0, 1, 2, 0, 1, 2, 0),
    "mod4": (0, 1, 2, 3, 0, 1, 2, 3, 0, 1),
    "loops": (1, 0, 0, 0, 1, 0, 1, 0, 2, 1),
    "prime": (0, 0, 1, 1, 0, 1, 0, 1, 0, 0),
    "lt3": (1, 1, 1, 0, 0, 0, 0, 0, 0, 0),
    "mod5": (0, 1, 2, 3, 4, 0, 1, 2, 3, 4),
}
TASKS = tuple(LABELS)  # the default suite
# input-transform tasks, available by name (``build_suite(tasks=...)``) but not in the default suite: they do not compose
TRANSFORMS = ("rotate90", "rotate180", "rotate270", "flip_h", "flip_v", "invert", "permute", "shift")
PERMUTE_SEED = 1234
CONTROL = "control"  # the pretraining task (identity transform): the control of task negation
HEADS = (CONTROL, *TASKS, *TRANSFORMS)  # the order of MergeMLP.heads
DATASETS = ("digits", "fashion_mnist")
HIDDEN = 256
PRE_STEPS, FT_STEPS = 800, 300
PRE_LR, FT_LR = 2e-3, 3e-3
BATCH, WEIGHT_DECAY = 64, 1e-4
VAL_FRACTION = 0.2
FASHION_TRAIN = 12_000  # Fashion-MNIST training images used (train + val), to keep the suite fast
LOGIT_SCALE = 30.0  # cosine-classifier temperature, as CLIP's logit scale (100 there; piloted on seed 0's val split)


class MergeMLP(nn.Module):
    """The suite's architecture: encoder Flatten, 64 -> hidden -> hidden with ReLU (``fc1``, ``fc2``) and one linear
    head per entry of ``HEADS`` (``heads``: (17, classes, hidden), no bias). ``forward(x, task)`` -> logits (B, 10)."""

    def __init__(self, hidden: int = HIDDEN, in_dim: int = 64, classes: int = 10) -> None:
        super().__init__()
        self.fc1 = nn.Linear(in_dim, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.heads = nn.Parameter(torch.zeros(len(HEADS), classes, hidden))

    def features(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc2(torch.relu(self.fc1(x.flatten(1)))))

    def forward(self, x: torch.Tensor, task: str | int = CONTROL) -> torch.Tensor:
        """Logits of ``x`` under ``task``'s head (a name in ``HEADS`` or its index there): ``LOGIT_SCALE`` times the
        cosine between the features and each class prototype, as CLIP's zero-shot classifier."""
        i = task if isinstance(task, int) else HEADS.index(task) if task in HEADS else None
        if i is None or not 0 <= i < len(HEADS):
            raise ValueError(f"task_merge: no head for task {task!r}; choose from {list(HEADS)}")
        f = self.features(x)
        head = self.heads[i]
        logits = LOGIT_SCALE * (f / f.norm(dim=1, keepdim=True).clamp(min=1e-6)) @ head.T
        return logits.masked_fill(head.abs().sum(1) == 0, -1e4)  # classes the task does not use


def check_tasks(tasks: Sequence[str] | None) -> list[str]:
    """``tasks`` as a list (all of ``TASKS`` for None); unknown or repeated names raise ``ValueError``."""
    names = list(TASKS) if tasks is None else [str(t) for t in tasks]
    bad = [t for t in names if t not in TASKS + TRANSFORMS]
    if bad or not names or len(set(names)) != len(names):
        raise ValueError(f"task_merge: tasks must be distinct names from {list(TASKS + TRANSFORMS)} (at least one), "
                         f"got {names}")
    return names


def transform(task: str, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``task``'s version of images ``x`` (N, 1, 8, 8) and labels ``y``: the images as they are, the labels regrouped
    by ``LABELS[task]`` (``control``: unchanged)."""
    if task == CONTROL:
        return x, y
    if task in LABELS:
        return x, torch.tensor(LABELS[task])[y]
    rot = {"rotate90": 1, "rotate180": 2, "rotate270": 3}
    if task in rot:
        return torch.rot90(x, rot[task], dims=(2, 3)), y
    if task in ("flip_h", "flip_v"):
        return torch.flip(x, dims=(3,) if task == "flip_h" else (2,)), y
    if task == "invert":
        return 1.0 - x, y
    if task == "permute":
        perm = torch.from_numpy(np.random.default_rng(PERMUTE_SEED).permutation(64))
        return x.flatten(1)[:, perm].view_as(x), y
    if task == "shift":
        return torch.roll(x, shifts=(2, 2), dims=(2, 3)), y
    raise ValueError(f"task_merge: unknown task {task!r}; choose from {list(TASKS + TRANSFORMS) + [CONTROL]}")


def _splits(dataset: str) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """The fixed train/val/test split of ``dataset`` (untransformed)."""
    if dataset not in DATASETS:
        raise ValueError(f"task_merge: unknown dataset {dataset!r}; choose from {list(DATASETS)}")
    from zoo_task_digits.task import load_split

    xtr, ytr, xte, yte = load_split(dataset)
    if dataset == "fashion_mnist":
        xtr, ytr = xtr[:FASHION_TRAIN], ytr[:FASHION_TRAIN]
    order = torch.randperm(len(ytr), generator=torch.Generator().manual_seed(0))
    n_val = int(round(VAL_FRACTION * len(ytr)))
    val, tr = order[:n_val], order[n_val:]
    return {"train": (xtr[tr], ytr[tr]), "val": (xtr[val], ytr[val]), "test": (xte, yte)}


def _fit(params: list[nn.Parameter], forward: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor,
         y: torch.Tensor, *, steps: int, lr: float, seed: int) -> None:
    g = torch.Generator().manual_seed(int(seed))
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=WEIGHT_DECAY)
    for _ in range(int(steps)):
        idx = torch.randint(0, len(y), (BATCH,), generator=g)
        loss = nn.functional.cross_entropy(forward(x[idx]), y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()


def prototype_heads(model: MergeMLP, data: dict[str, tuple[torch.Tensor, torch.Tensor]]) -> torch.Tensor:
    """One head per entry of ``HEADS``: the unit-norm class means of the encoder's unit-norm features on that task's
    training split (the zero-shot heads of the suite)."""
    out = []
    with torch.no_grad():
        for name in HEADS:
            x, y = transform(name, *data["train"])
            f = model.features(x)
            f = f / f.norm(dim=1, keepdim=True).clamp(min=1e-6)
            proto = torch.stack([f[y == c].mean(0) if bool((y == c).any()) else torch.zeros(f.shape[1])
                                 for c in range(model.heads.shape[1])])
            out.append(proto / proto.norm(dim=1, keepdim=True).clamp(min=1e-12))
    return torch.stack(out)


def _cache_file(*parts: object) -> Path:
    from zoo.weights import cache_dir

    key = "-".join(str(p) for p in parts)
    return cache_dir() / "task_merge" / f"{key}-v{VERSION}.safetensors"


def _load_or_train(path: Path, model: MergeMLP, train: Callable[[MergeMLP], None]) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file, save_file

    if path.is_file():
        try:
            model.load_state_dict(load_file(str(path)))
            return {k: v.detach().clone() for k, v in model.state_dict().items()}
        except Exception:  # noqa: BLE001 - a corrupt or stale cache entry is retrained and rewritten
            log.warning("task_merge: unreadable cache file %s, retraining", path)
    train(model)
    state = {k: v.detach().clone().contiguous() for k, v in model.state_dict().items()}
    from zoo.fileio import atomic_path

    try:
        with atomic_path(path) as tmp:
            save_file(state, str(tmp))
    except OSError:  # a read-only cache only costs the retraining
        pass
    return state


@dataclass
class Suite:
    """A base network, its fine-tuned variants and their data (build it with ``build_suite``).

    ``base_state``/``task_states``/``task_vectors`` are ``{name: tensor}`` dicts (task vector = fine-tuned - base,
    Ilharco et al. 2023); ``tasks`` names them in order. Data accessors take a task name or its index.
    """

    dataset: str
    seed: int
    tasks: list[str]
    base_state: dict[str, torch.Tensor]
    task_states: list[dict[str, torch.Tensor]]
    hidden: int = HIDDEN
    data: dict[str, tuple[torch.Tensor, torch.Tensor]] = field(default_factory=dict, repr=False)
    task_vectors: list[dict[str, torch.Tensor]] = field(init=False, repr=False)
    _individual: dict = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.task_vectors = [{k: s[k] - self.base_state[k] for k in self.base_state} for s in self.task_states]

    # --- the architecture -------------------------------------------------------------------------------------
    def architecture(self) -> MergeMLP:
        """A fresh, untrained module of the base architecture (``load_state_dict`` takes any of the states)."""
        return MergeMLP(self.hidden)

    def load(self, state: dict[str, torch.Tensor]) -> MergeMLP:
        """``architecture()`` holding ``state`` (strict), in eval mode."""
        m = self.architecture()
        m.load_state_dict(state)
        return m.eval()

    def n_params(self) -> int:
        return sum(v.numel() for v in self.base_state.values())

    # --- data -------------------------------------------------------------------------------------------------
    def _name(self, t: int | str) -> str:
        if isinstance(t, (int, np.integer)) and not isinstance(t, bool):
            if not 0 <= int(t) < len(self.tasks):
                raise ValueError(f"task_merge: task index {t} out of range for {len(self.tasks)} tasks")
            return self.tasks[int(t)]
        if t != CONTROL and t not in self.tasks:
            raise ValueError(f"task_merge: task {t!r} is not in this suite; choose from {self.tasks + [CONTROL]}")
        return str(t)

    def _split(self, t: int | str, part: str) -> tuple[torch.Tensor, torch.Tensor]:
        x, y = self.data[part]
        return transform(self._name(t), x, y)

    def train(self, t: int | str, n: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Task ``t``'s training inputs (N, 1, 8, 8) and labels (the first ``n``, in a fixed order)."""
        x, y = self._split(t, "train")
        return (x, y) if n is None else (x[:n], y[:n])

    def val(self, t: int | str) -> tuple[torch.Tensor, torch.Tensor]:
        """Task ``t``'s validation split (held out of training: for choosing coefficients)."""
        return self._split(t, "val")

    def test(self, t: int | str) -> tuple[torch.Tensor, torch.Tensor]:
        """Task ``t``'s test split (what ``accuracy`` scores)."""
        return self._split(t, "test")

    def few_shot(self, t: int | str, k: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        """``k`` labelled training examples per class of task ``t`` (its own classes: 2 for ``parity``), drawn with
        ``seed``."""
        if int(k) < 1:
            raise ValueError(f"task_merge: few_shot needs k >= 1 per class, got {k}")
        x, y = self.train(t)
        g = torch.Generator().manual_seed(int(seed))
        picks = []
        for c in torch.unique(y).tolist():
            idx = torch.nonzero(y == c).flatten()
            if len(idx) < int(k):
                raise ValueError(f"task_merge: task {self._name(t)!r} has {len(idx)} training examples of class {c}, "
                                 f"fewer than k={k}")
            picks.append(idx[torch.randperm(len(idx), generator=g)[: int(k)]])
        idx = torch.cat(picks)
        return x[idx], y[idx]

    def unlabeled(self, t: int | str, n: int, seed: int = 0) -> torch.Tensor:
        """``n`` training inputs of task ``t`` without labels, drawn with ``seed``."""
        x, _ = self.train(t)
        if not 1 <= int(n) <= len(x):
            raise ValueError(f"task_merge: unlabeled needs 1 <= n <= {len(x)}, got {n}")
        return x[torch.randperm(len(x), generator=torch.Generator().manual_seed(int(seed)))[: int(n)]]

    # --- scoring ----------------------------------------------------------------------------------------------
    def accuracy(self, state: dict[str, torch.Tensor], t: int | str, split: str = "test") -> float:
        """Accuracy of the network holding ``state`` on task ``t``'s ``split`` ("test", "val" or "train")."""
        if split not in ("train", "val", "test"):
            raise ValueError(f"task_merge: split must be 'train', 'val' or 'test', got {split!r}")
        name = self._name(t)
        x, y = self._split(name, split)
        with torch.no_grad():
            return float((self.load(state)(x, name).argmax(1) == y).float().mean())

    def individual_accuracy(self, t: int | str, split: str = "test") -> float:
        """Accuracy of task ``t``'s own fine-tuned model (the normaliser of ``normalized_acc``)."""
        i = self.tasks.index(self._name(t))
        key = (i, split)
        if key not in self._individual:
            self._individual[key] = self.accuracy(self.task_states[i], i, split)
        return self._individual[key]


def build_suite(seed: int = 0, dataset: str = "digits", tasks: Sequence[str] | None = None, *,
                pre_steps: int | None = None, ft_steps: int | None = None, hidden: int | None = None) -> Suite:
    """The suite of ``dataset`` for ``seed`` (see the module docstring); ``tasks`` picks a subset of ``TASKS`` (all
    eight by default, in that order). ``pre_steps``/``ft_steps``/``hidden`` (default ``PRE_STEPS``, ``FT_STEPS``,
    ``HIDDEN``, read at call time) shrink it for tests."""
    names = check_tasks(tasks)
    pre_steps = PRE_STEPS if pre_steps is None else pre_steps
    ft_steps = FT_STEPS if ft_steps is None else ft_steps
    hidden = HIDDEN if hidden is None else hidden
    if int(pre_steps) < 0 or int(ft_steps) < 1 or int(hidden) < 1:
        raise ValueError(f"task_merge: need pre_steps >= 0, ft_steps >= 1, hidden >= 1; got {pre_steps}, {ft_steps}, "
                         f"{hidden}")
    data = _splits(dataset)
    base_key = (dataset, f"s{int(seed)}", f"h{int(hidden)}", f"pre{int(pre_steps)}")

    def fresh() -> MergeMLP:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seed))
            return MergeMLP(int(hidden))

    def pretrain(m: MergeMLP) -> None:
        x, y = transform(CONTROL, *data["train"])
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seed) + 1)
            clf = nn.Linear(m.fc2.out_features, m.heads.shape[1])  # the throw-away pretraining classifier
        _fit([m.fc1.weight, m.fc1.bias, m.fc2.weight, m.fc2.bias, *clf.parameters()], lambda z: clf(m.features(z)),
             x, y, steps=pre_steps, lr=PRE_LR, seed=10_000 + int(seed))
        with torch.no_grad():
            m.heads.copy_(prototype_heads(m, data))

    base = _load_or_train(_cache_file("base", *base_key), fresh(), pretrain)
    states = []
    for name in names:
        def finetune(m: MergeMLP, name: str = name) -> None:
            m.load_state_dict(base)
            x, y = transform(name, *data["train"])
            tag = int(hashlib.sha256(name.encode()).hexdigest()[:6], 16)
            _fit([m.fc1.weight, m.fc1.bias, m.fc2.weight, m.fc2.bias], lambda z, n=name: m(z, n), x, y,
                 steps=ft_steps, lr=FT_LR, seed=20_000 + 97 * int(seed) + tag)

        states.append(_load_or_train(_cache_file(name, *base_key, f"ft{int(ft_steps)}"), fresh(), finetune))
    return Suite(dataset=dataset, seed=int(seed), tasks=names, base_state=base, task_states=states, hidden=int(hidden),
                 data=data)
