"""A tiny digit VLM, its prompts, and cross-modal task vectors (Luo, Darrell & Bar 2024, "Task Vectors are
Cross-Modal", arXiv 2410.22330).

The method (§3 of the paper, after Hendel et al. 2023's task vectors): a task vector is the residual stream at the
**last token** of a prompt at layer ``l``, averaged over prompts that specify the task; the specification may be
exemplars with text inputs, exemplars with image inputs, or an instruction. It is **patched** (it replaces the
last-token residual entering block ``l``) into the forward pass of a zero-shot query that carries no task
information, possibly of another modality (text-derived vector, image query: cross-modal transfer). **Ensembling**
averages an exemplar vector and an instruction vector. The **logit lens** reads the last-token residual of every
layer through the final norm and the unembedding: the paper finds an *input* phase (the query decodes), a *task*
phase and an *answer* phase.

What comes from where: the paper's text could not be read offline here; the protocol above follows the abstract,
the catalog entry (mean last-token residual over exemplar or instruction prompts, patched at layer l; ensembling by
averaging) and Hendel et al.'s patching (replace, not add). The paper's models are real VLMs (Idefics2, LLaVA,
Mantis...) with tasks such as country -> capital; here the VLM is a tiny one trained in code:

* ``DigitVLM``: ``zoo_task_icl_toy.gpt.HookedGPT`` (zoo_nn's pre-norm GPT with ``resid[l]`` hook points, dim 64,
  4 layers, 4 heads) whose ``IMG`` token positions take a linear projection of an 8x8 scikit-learn digit (one token
  per image, 64 pixels -> dim) instead of the token table;
* six tasks on digits 0-9: ``copy`` x, ``next`` x+1, ``prev`` x-1, ``double`` 2x, ``plus5`` x+5 (mod 10) and
  ``parity`` (answers ``even``/``odd``); every input is a digit word token or a digit image;
* prompts ``[S] x1 -> y1 , x2 -> y2 , ... xq ->`` where ``S`` is the task's instruction token or ``NONE``; answers are
  always word tokens. Training (``train_vlm``) mixes instructed and uninstructed sequences and text, image and mixed
  inputs, with cross-entropy at every ``->`` (so the 0-shot answer after ``NONE`` is trained too: the model's
  prior over tasks, which is what an un-patched zero-shot query gives).

Paper defaults vs here: layer ``l`` is chosen per run on held-out *text* queries (the paper picks the best layer
per model). ``PAPER_DEFAULTS`` names the protocol choices of the paper/catalog (replace-patching, ensembling by the
mean); its prompt and shot counts are a larger setting of ours, not numbers read from the paper. CPU default in the
experiment: 50 prompts per task and specification, 4 shots. Our deviation ``patch_residual(..., mode="add")`` adds a
task-centred vector instead of replacing the state (see the README: replace-patching does not steer this model).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from zoo_task_icl_toy.gpt import HookedGPT

from .similarity import cosine_matrix  # noqa: F401 - re-exported

log = logging.getLogger(__name__)

# ------------------------------------------------------------------------------------------ vocabulary and tasks
TASKS = ("copy", "next", "prev", "double", "plus5", "parity")
EVEN, ODD, ARROW, COMMA, IMG, NONE = 10, 11, 12, 13, 14, 15
INSTR0 = 16  # instruction token of task t: INSTR0 + t
VOCAB = INSTR0 + len(TASKS)
WORDS = [str(d) for d in range(10)] + ["even", "odd", "->", ",", "<img>", "<none>"] + [f"<{t}>" for t in TASKS]
SPECS = ("text", "image", "instruction")
PAPER_DEFAULTS = {"n_prompts": 100, "shots": 5, "patch": "replace", "ensemble": "mean"}
CPU_ARCH = {"dim": 64, "depth": 4, "heads": 4}
TRAIN = {"steps": 2000, "batch": 48, "shots": 5, "lr": 1e-3, "weight_decay": 0.01, "warmup": 100, "seed": 0}
VERSION = 1


def answer(task: int, x: np.ndarray) -> np.ndarray:
    """The answer token of ``TASKS[task]`` for digits ``x``."""
    x = np.asarray(x)
    name = TASKS[int(task)]
    if name == "parity":
        return np.where(x % 2 == 0, EVEN, ODD)
    shift = {"copy": 0, "next": 1, "prev": -1, "plus5": 5}.get(name)
    return (x + shift) % 10 if shift is not None else (2 * x) % 10


@cache
def digit_images(split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's 8x8 digits (the ``zoo_task_digits`` split), (N, 64) in [0, 1], and labels (N,)."""
    from zoo_task_digits.task import load_split

    xtr, ytr, xte, yte = load_split("digits")
    x, y = (xtr, ytr) if split == "train" else (xte, yte)
    return x.reshape(len(x), 64).numpy().astype(np.float32), y.numpy().astype(np.int64)


class Pools:
    """Per-digit indices into a split's images, for drawing an image of a given digit."""

    def __init__(self, split: str):
        self.x, y = digit_images(split)
        self.by = [np.nonzero(y == d)[0] for d in range(10)]

    def draw(self, digits: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        out = np.empty((*digits.shape, 64), np.float32)
        for d in range(10):
            m = digits == d
            if m.any():
                out[m] = self.x[rng.choice(self.by[d], size=int(m.sum()))]
        return out


# ------------------------------------------------------------------------------------------ prompts
def make_prompts(task: np.ndarray, shots: int, *, instructed: np.ndarray | bool, modality: str | np.ndarray,
                 query_modality: str | np.ndarray, rng: np.random.Generator, pools: Pools,
                 queries: np.ndarray | None = None, train_targets: bool = False) -> dict[str, np.ndarray]:
    """Prompts ``[S] x1 -> y1 , ... xk -> yk , xq ->`` for tasks ``task`` (B,).

    ``modality`` ("text", "image", "mixed" or a (B,) array of those) sets the exemplar inputs, ``query_modality`` the
    query's. Returns ``ids`` (B, T), ``pix`` (B, T, 64) (zeros off image positions), ``target`` (B,) the query's answer,
    ``x`` (B,) the query digit; with ``train_targets`` also ``tg`` (B, T): the answer at every ``->`` (else -100).
    """
    task = np.asarray(task, np.int64)
    b = len(task)
    t_len = 1 + 4 * shots + 2
    ids = np.full((b, t_len), COMMA, np.int64)
    pix = np.zeros((b, t_len, 64), np.float32)
    tg = np.full((b, t_len), -100, np.int64)
    instr = np.broadcast_to(np.asarray(instructed, bool), (b,))
    ids[:, 0] = np.where(instr, INSTR0 + task, NONE)
    xs = rng.integers(0, 10, size=(b, shots + 1))
    if queries is not None:
        xs[:, -1] = queries
    ys = np.stack([answer(t, row) for t, row in zip(task, xs, strict=True)])

    def as_image(kind: Any, n: int) -> np.ndarray:
        kind = np.broadcast_to(np.asarray(kind), (b,))
        per = np.zeros((b, n), bool)
        per[kind == "image"] = True
        mixed = kind == "mixed"
        per[mixed] = rng.random((int(mixed.sum()), n)) < 0.5
        return per

    img_ex = as_image(modality, shots + 1)
    img_q = as_image(query_modality, 1)[:, 0]
    img_ex[:, -1] = img_q
    for j in range(shots + 1):
        p = 1 + 4 * j
        ids[:, p] = np.where(img_ex[:, j], IMG, xs[:, j])
        if img_ex[:, j].any():
            pix[img_ex[:, j], p] = pools.draw(xs[img_ex[:, j], j], rng)
        ids[:, p + 1] = ARROW
        tg[:, p + 1] = ys[:, j]
        if j < shots:
            ids[:, p + 2] = ys[:, j]
    out = {"ids": ids, "pix": pix, "target": ys[:, -1], "x": xs[:, -1]}
    if train_targets:
        out["tg"] = tg
    return out


def zero_shot_queries(task: np.ndarray, modality: str, rng: np.random.Generator, pools: Pools,
                      queries: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """``NONE xq ->``: the query alone, no task information (what a task vector is patched into)."""
    return make_prompts(task, 0, instructed=False, modality=modality, query_modality=modality, rng=rng, pools=pools,
                        queries=queries)


def instruction_prompts(task: np.ndarray, modality: str, rng: np.random.Generator, pools: Pools) -> dict[str, np.ndarray]:
    """``<task> xq ->``: the task given by its instruction token, no exemplars."""
    return make_prompts(task, 0, instructed=True, modality=modality, query_modality=modality, rng=rng, pools=pools)


# ------------------------------------------------------------------------------------------ the model
class DigitVLM(HookedGPT):
    """``HookedGPT`` with an image-patch embedding: positions holding ``IMG`` read ``img(pixels)`` (one token per 8x8
    digit, a linear projection 64 -> dim) instead of the token table.

    >>> m = DigitVLM(dim=32, depth=2, heads=4)
    >>> m(torch.zeros(2, 5, dtype=torch.long), torch.zeros(2, 5, 64)).shape
    torch.Size([2, 5, 22])
    """

    def __init__(self, dim: int = 64, depth: int = 4, heads: int = 4, block_size: int = 32, mlp_ratio: float = 4.0):
        super().__init__(vocab_size=VOCAB, dim=dim, depth=depth, heads=heads, block_size=block_size,
                         mlp_ratio=mlp_ratio)
        self.img = nn.Linear(64, dim)
        nn.init.normal_(self.img.weight, std=0.02)
        nn.init.zeros_(self.img.bias)

    def embed_mm(self, ids: torch.Tensor, pix: torch.Tensor | None) -> torch.Tensor:
        if ids.ndim != 2:
            raise ValueError(f"DigitVLM takes ids (B, T), got shape {tuple(ids.shape)}")
        x = self.embed(ids)
        if pix is not None:
            if pix.shape != (*ids.shape, 64):
                raise ValueError(f"pix must be (B, T, 64) pixels aligned with ids {tuple(ids.shape)}, got "
                                 f"{tuple(pix.shape)}")
            x = x + (ids == IMG).unsqueeze(-1) * (self.img(pix) - self.tok.weight[IMG])
        return x

    def forward(self, ids: torch.Tensor, pix: torch.Tensor | None = None) -> torch.Tensor:  # type: ignore[override]
        x = self.embed_mm(ids, pix)
        for i, block in enumerate(self.blocks):
            x = block(self.resid[i](x))
        return self.head(self.norm(self.resid[self.depth](x)))


def _lr(step: int, steps: int) -> float:
    if step < TRAIN["warmup"]:
        return TRAIN["lr"] * (step + 1) / TRAIN["warmup"]
    return TRAIN["lr"] * 0.5 * (1 + math.cos(math.pi * (step - TRAIN["warmup"]) / max(1, steps - TRAIN["warmup"])))


def training_batch(rng: np.random.Generator, pools: Pools, batch: int, shots: int) -> dict[str, np.ndarray]:
    """Random tasks, half instructed, exemplar inputs text / image / mixed (a third each), loss at every arrow."""
    task = rng.integers(0, len(TASKS), size=batch)
    instructed = rng.random(batch) < 0.5
    modality = rng.choice(np.array(["text", "image", "mixed"]), size=batch)
    return make_prompts(task, shots, instructed=instructed, modality=modality, query_modality=modality, rng=rng,
                        pools=pools, train_targets=True)


def train_vlm(steps: int | None = None, seed: int | None = None, **arch: Any) -> tuple[DigitVLM, float]:
    """Train a fresh ``DigitVLM`` (AdamW, warm-up + cosine, batches of 48); returns it frozen and its final loss."""
    steps = int(steps or TRAIN["steps"])
    seed = TRAIN["seed"] if seed is None else int(seed)
    torch.manual_seed(seed)
    model = DigitVLM(**{**CPU_ARCH, **arch})
    rng, pools = np.random.default_rng(seed), Pools("train")
    opt = torch.optim.AdamW(model.optim_groups(TRAIN["weight_decay"]), lr=TRAIN["lr"], betas=(0.9, 0.95))
    model.train()
    loss_v = float("nan")
    for i in range(steps):
        for g in opt.param_groups:
            g["lr"] = _lr(i, steps)
        b = training_batch(rng, pools, TRAIN["batch"], TRAIN["shots"])
        logits = model(torch.from_numpy(b["ids"]), torch.from_numpy(b["pix"]))
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), torch.from_numpy(b["tg"]).reshape(-1), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        loss_v = 0.98 * loss_v + 0.02 * loss.item() if i else loss.item()
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model, loss_v


def cache_path() -> Path:
    from zoo.weights import cache_dir

    key = json.dumps({"arch": CPU_ARCH, "train": TRAIN, "tasks": TASKS, "v": VERSION}, sort_keys=True)
    return cache_dir() / "cross_modal_task_vectors" / f"vlm-{hashlib.sha256(key.encode()).hexdigest()[:16]}.safetensors"


_LOADED: dict[str, DigitVLM] = {}


def trained_vlm() -> DigitVLM:
    """The trained, frozen digit VLM: from memory, the safetensors cache, or trained now (a few CPU minutes)."""
    if "vlm" in _LOADED:
        return _LOADED["vlm"]
    from safetensors.torch import load_file, save_file

    from zoo.fileio import atomic_path
    from zoo.task import torch_threads

    path = cache_path()
    model = DigitVLM(**CPU_ARCH)
    try:
        model.load_state_dict(load_file(str(path)))
        model.eval()
        for p in model.parameters():
            p.requires_grad_(False)
    except (OSError, RuntimeError, ValueError):
        with torch_threads(1):
            model, loss = train_vlm()
        log.info("cross-modal-task-vectors: trained the digit VLM (final loss %.3f)", loss)
        try:
            with atomic_path(path) as tmp:
                save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(tmp))
        except OSError as err:
            log.warning("could not cache the digit VLM at %s (%s)", path, err)
    _LOADED["vlm"] = model
    return model


# ------------------------------------------------------------------------------------------ task vectors
def tensors(b: dict[str, np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
    """A prompt batch's ``(ids, pix)`` as tensors, the model's positional arguments."""
    return torch.from_numpy(b["ids"]), torch.from_numpy(b["pix"])


_t = tensors


@torch.no_grad()
def last_residuals(model: DigitVLM, ids: torch.Tensor, pix: torch.Tensor | None = None) -> torch.Tensor:
    """The residual stream at the last token entering every block and the final norm: (B, depth + 1, dim)."""
    rec: list[torch.Tensor] = []
    handles = [r.register_forward_hook(lambda _m, _i, out: rec.append(out[:, -1])) for r in model.resid]
    try:
        model(ids, pix)
    finally:
        for h in handles:
            h.remove()
    return torch.stack(rec, 1)


def task_vector(model: DigitVLM, ids: torch.Tensor, pix: torch.Tensor | None = None) -> torch.Tensor:
    """The task vector of a set of prompts of one task: their mean last-token residual, (depth + 1, dim) (row
    ``l``: entering block ``l``)."""
    if len(ids) == 0:
        raise ValueError("task_vector needs at least one prompt")
    return last_residuals(model, ids, pix).mean(0)


@contextlib.contextmanager
def patch_residual(model: DigitVLM, layer: int, vector: torch.Tensor | None, mode: str = "replace"
                   ) -> Iterator[None]:
    """Replace (``mode="replace"``, Hendel et al.'s patching, the paper's) or add to (``mode="add"``, our deviation:
    used with task-centred vectors) the last-token residual entering block ``layer``, ``vector`` (dim,) or (B, dim),
    while open; ``None`` patches nothing."""
    if not 0 <= int(layer) <= model.depth:
        raise ValueError(f"layer {layer} out of range 0..{model.depth}")
    if mode not in ("replace", "add"):
        raise ValueError(f"unknown patch mode {mode!r}; choose 'replace' or 'add'")
    if vector is None:
        yield
        return

    def fn(_m: nn.Module, _i: tuple, out: torch.Tensor) -> torch.Tensor:
        out = out.clone()
        out[:, -1] = vector if mode == "replace" else out[:, -1] + vector
        return out

    h = model.resid[int(layer)].register_forward_hook(fn)
    try:
        yield
    finally:
        h.remove()


@torch.no_grad()
def patched_logits(model: DigitVLM, ids: torch.Tensor, pix: torch.Tensor | None, layer: int,
                   vector: torch.Tensor | None, mode: str = "replace") -> torch.Tensor:
    """Last-position logits of ``ids`` with ``vector`` patched in at ``layer`` (``patch_residual``): (B, vocab)."""
    with patch_residual(model, layer, vector, mode):
        return model(ids, pix)[:, -1]


@torch.no_grad()
def logit_lens(model: DigitVLM, ids: torch.Tensor, pix: torch.Tensor | None, tokens: dict[str, np.ndarray]
               ) -> dict[str, np.ndarray]:
    """Per layer (0..depth), the mean probability the logit lens gives each named token set at the last position:
    ``tokens[name]`` (B,) one token per prompt. Returns name -> (depth + 1,)."""
    h = last_residuals(model, ids, pix)  # (B, L + 1, dim)
    p = model.unembed(h).softmax(-1)  # (B, L + 1, vocab)
    return {k: p[torch.arange(len(v)), :, torch.as_tensor(v)].mean(0).numpy() for k, v in tokens.items()}

