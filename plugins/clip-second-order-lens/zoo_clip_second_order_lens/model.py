"""A tiny CLIP-like model (ViT image tower, transformer text tower, InfoNCE) with hookable neurons, and the exact
second-order effects of its MLP neurons.

Second-order lens (Gandelsman, Efros & Steinhardt 2024, "Interpreting the Second-Order Effects of Neurons in CLIP",
§3, the second-order effect equation; sources: the abstract, a summary quoting the equation, and the official code's
``prs_second_order_neurons_hook.py``, which was read for the LayerNorm handling; the full paper text was not
available here, so section numbers are approximate): neuron n of layer l writes p_{l,n}(i, I) w_{l,n} into the
residual stream at token i (w_{l,n} the neuron's column of the MLP output matrix). Its *second-order effect* is the
part of that write that flows through the attention heads of the later layers l' > l into the class token and then
directly to the output embedding:

    phi_{l,n}(I) = sum_{l'>l} sum_h sum_i p_{l,n}(i, I) a^{l',h}_{0,i}(I) P W_VO^{l',h} w_{l,n},

with the layer norms in front of each head and in front of the projection P linearised at the image's own
statistics (centering is linear; the scale 1/sigma is read from the forward pass), as the official code does. Like
the official code, effects are divided by the norm of the image's final embedding. Biases are not part of any
neuron's contribution and are left out (the official code spreads them evenly over the neurons; that changes only
the neuron-independent mean). The *first-order* (direct) effect p_{l,n}(0, I) P w_{l,n} (through no head) is given
for comparison.

Architecture: pre-norm ViT (patch embedding with a class token and learned positions, blocks of multi-head
attention and a GELU MLP whose post-GELU units are the neurons, final LayerNorm of the class token and a linear
projection to the joint space), a transformer text tower read at its end-of-text token, cosine logits with a
learned temperature initialised at 1/0.07 and the symmetric InfoNCE loss of CLIP (Radford et al. 2021). The digits
captions ("a photo of the digit seven", four templates) stand in for web captions. Sizes are tiny CPU defaults; the
paper studies OpenAI CLIP ViT-B/32, B/16 and L/14 (``PAPER``), whose weights are not available offline here.
Deviations: digits 8x8 images with 2x2 patches (17 tokens), four blocks of width 64, joint space of 32; trained on
1347 digits for a few hundred steps, not on 400M web pairs.
"""
from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

PAPER = {"models": "OpenAI CLIP ViT-B/32, ViT-B/16, ViT-L/14", "ln_eps": 1e-5, "temperature_init": 0.07}
# ViT-B widths (CLIP ViT-B/32: width 768, 12 layers, 12 heads, MLP 3072, joint space 512, 12-layer text tower),
# available as preset="paper" (the patch size stays the 8x8 digits' 2; no such weights exist offline)
PAPER_VIT_B = {"dim": 768, "depth": 12, "heads": 12, "mlp": 3072, "embed": 512, "text_depth": 12}
CPU = {"dim": 64, "depth": 4, "heads": 4, "mlp": 128, "embed": 32, "text_depth": 2, "patch": 2, "image": 8}

DIGITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
TEMPLATES = ("a photo of the digit {}", "a drawing of a {}", "the number {}", "a handwritten {}")
EXTRA_WORDS = ("photo", "drawing", "number", "digit", "handwritten")
VOCAB = ("<pad>", "<eot>", "a", "photo", "of", "the", "digit", "drawing", "number", "handwritten", *DIGITS)
MAX_LEN = 7  # "a photo of the digit seven <eot>" has 6 tokens


def tokenize(texts: list[str] | tuple[str, ...]) -> torch.Tensor:
    """Word ids (B, MAX_LEN): the words, an end-of-text token, padding. Unknown words raise ValueError."""
    index = {w: i for i, w in enumerate(VOCAB)}
    out = torch.zeros(len(texts), MAX_LEN, dtype=torch.long)
    for b, text in enumerate(texts):
        words = text.lower().split()
        unknown = [w for w in words if w not in index]
        if unknown:
            raise ValueError(f"unknown words {unknown}; the tiny CLIP's vocabulary is {list(VOCAB[2:])}")
        if len(words) + 1 > MAX_LEN:
            raise ValueError(f"{text!r} has {len(words)} words; at most {MAX_LEN - 1} fit")
        out[b, :len(words) + 1] = torch.tensor([index[w] for w in words] + [index["<eot>"]])
    return out


def layer_norm(x: torch.Tensor, ln: nn.LayerNorm, sigma: torch.Tensor | None = None
               ) -> tuple[torch.Tensor, torch.Tensor]:
    """LayerNorm with its scale exposed (and replaceable: ``sigma`` frozen from another pass)."""
    mu = x.mean(-1, keepdim=True)
    if sigma is None:
        sigma = (x.var(-1, unbiased=False, keepdim=True) + ln.eps).sqrt()
    return ln.weight * (x - mu) / sigma + ln.bias, sigma


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        if dim % heads:
            raise ValueError(f"dim {dim} must be divisible by heads {heads}")
        self.heads, self.head_dim = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, probs: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        if probs is None:
            probs = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.head_dim), dim=-1)  # (B, H, T, T)
        y = (probs @ v).transpose(1, 2).reshape(b, t, d)
        return self.out(y), probs

    def w_vo(self, head: int) -> torch.Tensor:
        """W_O^h W_V^h (d, d): what head ``head`` writes per unit of (normalised) value input."""
        d = self.out.in_features
        sl = slice(head * self.head_dim, (head + 1) * self.head_dim)
        w_v = self.qkv.weight[2 * d:][sl]  # (dh, d)
        return self.out.weight[:, sl] @ w_v


class Block(nn.Module):
    """Pre-norm transformer block; ``neurons`` (an identity) sees the post-GELU units, so hooks can read them."""

    def __init__(self, dim: int, heads: int, mlp: int) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.fc1, self.fc2 = nn.Linear(dim, mlp), nn.Linear(mlp, dim)
        self.neurons = nn.Identity()

    def forward(self, x: torch.Tensor, rec: dict[str, Any] | None = None, frozen: dict[str, Any] | None = None,
                ablate: tuple[torch.Tensor, torch.Tensor] | None = None) -> torch.Tensor:
        frozen = frozen or {}
        h, s1 = layer_norm(x, self.ln1, frozen.get("sigma1"))
        a, probs = self.attn(h, frozen.get("probs"))
        x = x + a
        h, s2 = layer_norm(x, self.ln2, frozen.get("sigma2"))
        p = F.gelu(self.fc1(h))
        if ablate is not None:  # mean-ablation: (mask (M,), mean (T, M))
            mask, mean = ablate
            p = torch.where(mask, mean.to(p.dtype).expand_as(p), p)
        p = self.neurons(p)
        if rec is not None:
            rec.update(sigma1=s1, sigma2=s2, probs=probs, post_gelu=p)
        return x + self.fc2(p)


class SecondOrderLens(nn.Module):
    """Identity on the (N, neurons, embed) second-order effects; ``TinyCLIP`` computes them in eval mode only when
    this module is hooked (``zoo.activations(model, x, layers=["lens"])``)."""

    def forward(self, effects: torch.Tensor) -> torch.Tensor:
        return effects


class TinyCLIP(nn.Module):
    """The tiny CLIP-like model; ``forward(images)`` gives zero-shot logits (B, 10) over the digit names (the
    prompt-ensembled class embeddings of ``TEMPLATES``), ``encode_image``/``encode_text`` the joint embeddings."""

    def __init__(self, dim: int = 64, depth: int = 4, heads: int = 4, mlp: int = 128, embed: int = 32,
                 text_depth: int = 2, patch: int = 2, image: int = 8, channels: int = 1) -> None:
        super().__init__()
        for k, v in dict(dim=dim, depth=depth, heads=heads, mlp=mlp, embed=embed, text_depth=text_depth,
                         patch=patch, image=image).items():
            if int(v) < 1:
                raise ValueError(f"{k} must be a positive integer, got {v}")
        if image % patch:
            raise ValueError(f"image size {image} must be a multiple of the patch size {patch}")
        if depth < 2:
            raise ValueError("depth must be at least 2: second-order effects flow through a later layer's heads")
        self.cfg = dict(dim=dim, depth=depth, heads=heads, mlp=mlp, embed=embed, text_depth=text_depth, patch=patch,
                        image=image, channels=channels)
        self.patch, self.image, self.channels = patch, image, channels
        tokens = (image // patch) ** 2 + 1
        self.patch_embed = nn.Linear(channels * patch * patch, dim)
        self.cls = nn.Parameter(torch.randn(dim) * dim ** -0.5)
        self.pos = nn.Parameter(torch.randn(tokens, dim) * 0.02)
        self.blocks = nn.ModuleList(Block(dim, heads, mlp) for _ in range(depth))
        self.ln_post = nn.LayerNorm(dim)
        self.proj = nn.Parameter(torch.randn(dim, embed) * dim ** -0.5)
        self.tok = nn.Embedding(len(VOCAB), dim)
        self.tpos = nn.Parameter(torch.randn(MAX_LEN, dim) * 0.01)
        self.text_blocks = nn.ModuleList(Block(dim, heads, 2 * dim) for _ in range(text_depth))
        self.ln_text = nn.LayerNorm(dim)
        self.text_proj = nn.Parameter(torch.randn(dim, embed) * dim ** -0.5)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / PAPER["temperature_init"])))
        self.lens = SecondOrderLens()
        self.register_buffer("class_tokens", torch.stack([tokenize([t.format(d) for d in DIGITS])
                                                          for t in TEMPLATES]))  # (templates, 10, L)

    # -- towers ------------------------------------------------------------------------------------------------
    def _tokens(self, images: torch.Tensor) -> torch.Tensor:
        if images.ndim == 3:
            images = images.unsqueeze(1)
        if images.ndim != 4 or tuple(images.shape[1:]) != (self.channels, self.image, self.image):
            raise ValueError(f"images must be (B, {self.channels}, {self.image}, {self.image}), got "
                             f"{tuple(images.shape)}")
        p = self.patch
        x = F.unfold(images.to(self.pos.dtype), kernel_size=p, stride=p).transpose(1, 2)  # (B, patches, C p p)
        x = self.patch_embed(x)
        return torch.cat([self.cls.expand(x.shape[0], 1, -1), x], 1) + self.pos

    def image_features(self, images: torch.Tensor, *, records: list[dict[str, Any]] | None = None,
                       frozen: list[dict[str, Any]] | None = None,
                       ablate: dict[int, tuple[torch.Tensor, torch.Tensor]] | None = None) -> torch.Tensor:
        """Unnormalised image embedding (B, embed). ``records`` collects per block its post-GELU units, attention
        probabilities and LayerNorm scales (and, last, the final LayerNorm scale "sigma_post"); ``frozen`` replays
        such records (attention patterns and LN scales fixed); ``ablate`` mean-ablates neurons per block."""
        x = self._tokens(images)
        for i, blk in enumerate(self.blocks):
            rec = {} if records is not None else None
            x = blk(x, rec, frozen[i] if frozen else None, (ablate or {}).get(i))
            if records is not None:
                records.append(rec)
        h, s = layer_norm(x[:, 0], self.ln_post, frozen[-1]["sigma_post"] if frozen else None)
        if records is not None:
            records.append({"sigma_post": s})
        return h @ self.proj

    def encode_image(self, images: torch.Tensor, **kw: Any) -> torch.Tensor:
        return F.normalize(self.image_features(images, **kw), dim=-1)

    def encode_text(self, tokens: torch.Tensor | list[str]) -> torch.Tensor:
        if isinstance(tokens, (list, tuple)):
            tokens = tokenize(tokens).to(self.tpos.device)
        x = self.tok(tokens) + self.tpos[: tokens.shape[1]]
        for blk in self.text_blocks:
            x = blk(x)
        eot = (tokens == VOCAB.index("<eot>")).float().argmax(1)
        x, _ = layer_norm(x[torch.arange(len(tokens)), eot], self.ln_text)
        return F.normalize(x @ self.text_proj, dim=-1)

    def class_embeddings(self) -> torch.Tensor:
        """Zero-shot classifier (10, embed): the normalised mean over templates of each digit's caption embedding."""
        t, c, length = self.class_tokens.shape
        e = self.encode_text(self.class_tokens.reshape(t * c, length)).view(t, c, -1).mean(0)
        return F.normalize(e, dim=-1)

    def forward(self, images: torch.Tensor, ablate: dict[int, tuple[torch.Tensor, torch.Tensor]] | None = None
                ) -> torch.Tensor:
        if not self.training and self.lens._forward_hooks:  # someone records the lens: compute the effects
            self.lens(second_order_effects(self, images)["second_order"].flatten(1, 2))
        img = self.encode_image(images, ablate=ablate)
        return self.logit_scale.exp() * img @ self.class_embeddings().T


def clip_loss(img: torch.Tensor, txt: torch.Tensor, logit_scale: torch.Tensor) -> torch.Tensor:
    """CLIP's symmetric InfoNCE over a batch of matched (image, caption) pairs (both normalised)."""
    logits = logit_scale.exp().clamp(max=100) * img @ txt.T
    target = torch.arange(len(img), device=img.device)
    return (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target)) / 2


# -- the second-order lens ------------------------------------------------------------------------------------------
def _center(w: torch.Tensor) -> torch.Tensor:
    """The linear part of LayerNorm's centering, applied to columns (d, ...) of residual-stream vectors."""
    return w - w.mean(0, keepdim=True)


@torch.no_grad()
def second_order_effects(model: TinyCLIP, images: torch.Tensor, *, layers: list[int] | None = None,
                         records: list[dict[str, Any]] | None = None) -> dict[str, torch.Tensor]:
    """Second-order (and first-order) effects of the MLP neurons of ``layers`` (default: every block but the last,
    which has no later heads) on the image embedding, divided by the embedding's norm (§3).

    Returns ``second_order`` (N, len(layers), M, embed), ``first_order`` (same shape), ``activations`` (N,
    len(layers), T, M) post-GELU units, ``embedding`` (N, embed) the unnormalised image embedding, ``layers``.
    """
    depth = len(model.blocks)
    layers = list(range(depth - 1)) if layers is None else [int(x) for x in layers]
    bad = [x for x in layers if not 0 <= x < depth - 1]
    if bad:
        raise ValueError(f"layers {bad} have no later attention heads; choose from 0..{depth - 2}")
    if records is None:
        records = []
        emb = model.image_features(images, records=records)
    else:
        emb = model.image_features(images, frozen=records)
    norm = emb.norm(dim=-1)  # (N,)
    sig_post = records[-1]["sigma_post"].squeeze(-1)  # (N,)
    out_map = model.ln_post.weight[:, None] * 1.0  # (d, 1): final LN gain, then centering and P below
    so, fo, acts = [], [], []
    for layer in layers:
        w = model.blocks[layer].fc2.weight  # (d, M): column n is w_{layer,n}
        p = records[layer]["post_gelu"]  # (N, T, M)
        # direct: centre, final-LN gain, projection
        u_direct = (out_map * _center(w)).T @ model.proj  # (M, embed)
        first = p[:, 0, :, None] * u_direct[None] / sig_post[:, None, None]
        second = torch.zeros_like(first)
        for lp in range(layer + 1, depth):
            blk = model.blocks[lp]
            sig1 = records[lp]["sigma1"].squeeze(-1)  # (N, T)
            a_cls = records[lp]["probs"][:, :, 0, :]  # (N, H, T): the class token's attention
            w_in = blk.ln1.weight[:, None] * _center(w)  # (d, M): head input per unit of the neuron
            for h in range(blk.attn.heads):
                u = (out_map * _center(blk.attn.w_vo(h) @ w_in)).T @ model.proj  # (M, embed)
                s = torch.einsum("ntm,nt->nm", p, a_cls[:, h] / sig1)  # sum_i p(i) a_{0,i} / sigma(i)
                second += s[:, :, None] * u[None] / sig_post[:, None, None]
        so.append(second / norm[:, None, None])
        fo.append(first / norm[:, None, None])
        acts.append(p)
    return {"second_order": torch.stack(so, 1), "first_order": torch.stack(fo, 1), "activations": torch.stack(acts, 1),
            "embedding": emb, "layers": torch.tensor(layers)}


# -- training (in code, cached) ---------------------------------------------------------------------------------------
TRAIN = {"steps": 300, "batch": 128, "lr": 2e-3, "weight_decay": 0.05, "warmup": 100}
VERSION = 2


def build(seed: int = 0, **cfg: Any) -> TinyCLIP:
    torch.manual_seed(seed)
    return TinyCLIP(**{**CPU, **cfg})


def train_clip(seed: int = 0, steps: int | None = None, **cfg: Any) -> tuple[TinyCLIP, dict[str, float]]:
    """Train the tiny CLIP on the digits training split with random template captions (InfoNCE, AdamW, cosine
    schedule); returns the model (eval mode) and its zero-shot test accuracy."""
    from zoo_task_digits.task import load_split

    steps = TRAIN["steps"] if steps is None else int(steps)
    x, y, xt, yt = load_split("digits")
    model = build(seed, **cfg)
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and "pos" not in n]
    rest = [p for n, p in model.named_parameters() if not (p.ndim >= 2 and "pos" not in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": TRAIN["weight_decay"]},
                             {"params": rest, "weight_decay": 0.0}], lr=TRAIN["lr"])
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: min(1.0, (i + 1) / TRAIN["warmup"]) * 0.5 * (
        1 + math.cos(math.pi * min(i, steps) / max(steps, 1))))
    gen = torch.Generator().manual_seed(seed)
    caps = torch.stack([tokenize([t.format(d) for d in DIGITS]) for t in TEMPLATES])  # (templates, 10, L)
    model.train()
    with torch.enable_grad():  # callers may hold no_grad
        _train_loop(model, opt, sched, x, y, caps, gen, steps)
    model.eval().requires_grad_(False)
    return model, {"zero_shot_accuracy": zero_shot_accuracy(model, xt, yt)}


def _train_loop(model: TinyCLIP, opt: Any, sched: Any, x: torch.Tensor, y: torch.Tensor, caps: torch.Tensor,
                gen: torch.Generator, steps: int) -> None:
    for _ in range(steps):
        idx = torch.randint(len(y), (TRAIN["batch"],), generator=gen)
        tpl = torch.randint(len(TEMPLATES), (TRAIN["batch"],), generator=gen)
        img = model.encode_image(x[idx])
        txt = model.encode_text(caps[tpl, y[idx]])
        loss = clip_loss(img, txt, model.logit_scale)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()


@torch.no_grad()
def zero_shot_accuracy(model: TinyCLIP, x: torch.Tensor, y: torch.Tensor,
                       ablate: dict[int, tuple[torch.Tensor, torch.Tensor]] | None = None) -> float:
    return float((model(x, ablate=ablate).argmax(-1) == y).float().mean())


def cache_path(seed: int) -> Path:
    from zoo.weights import cache_dir

    key = json.dumps({"cfg": CPU, "train": TRAIN, "seed": seed, "version": VERSION}, sort_keys=True)
    return Path(cache_dir()) / "clip_second_order_lens" / f"tiny-clip-{hashlib.sha256(key.encode()).hexdigest()[:16]}.safetensors"


_LOADED: dict[int, TinyCLIP] = {}


def trained_clip(seed: int = 0) -> TinyCLIP:
    """The tiny CLIP trained with ``seed``: from memory, the cache (safetensors) or trained now (about a minute)."""
    if seed in _LOADED:
        return _LOADED[seed]
    from safetensors.torch import load_file, save_file

    from zoo.fileio import atomic_path

    path = cache_path(seed)
    model = build(seed)
    try:
        model.load_state_dict(load_file(str(path)))
        model.eval().requires_grad_(False)
    except (OSError, RuntimeError, ValueError):
        model, _ = train_clip(seed)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_path(path) as tmp:
                save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(tmp))
        except OSError:
            pass
    _LOADED[seed] = model
    return model


def tiny_clip_digits(trained: bool = False, seed: int = 0, preset: str = "cpu", **cfg: Any) -> TinyCLIP:
    """zoo builder: the tiny CLIP (untrained, or ``trained=True``: contrastively trained on digits and cached);
    ``preset="paper"`` gives ViT-B widths (``PAPER_VIT_B``), "cpu" the small default (``CPU``)."""
    if preset not in ("cpu", "paper"):
        raise ValueError(f"unknown preset {preset!r}; choose from ['cpu', 'paper']")
    if preset == "paper":
        cfg = {**PAPER_VIT_B, **cfg}
    if trained:
        if cfg:
            raise ValueError(f"trained=True loads the default configuration; drop {sorted(cfg)}")
        return trained_clip(int(seed))
    return build(int(seed), **cfg)


def text_dictionary(model: TinyCLIP) -> tuple[np.ndarray, list[str]]:
    """The text-embedding dictionary for sparse decomposition: every caption (templates x digits) and every
    single word of the vocabulary, as normalised joint-space embeddings (K, embed) with their texts."""
    texts = [t.format(d) for t in TEMPLATES for d in DIGITS] + list(DIGITS) + list(EXTRA_WORDS)
    with torch.no_grad():
        emb = model.encode_text(texts).cpu().numpy().astype(np.float64)
    return emb, texts
