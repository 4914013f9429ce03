"""Frozen visual Unicode embeddings (Bochkov 2025, arXiv 2507.04886): the token table is built from glyph images.

The paper's recipe (its §3 as the authors' released model card states it: "rendered glyph bitmaps -> PCA
projection -> L2 normalisation"): every token is rendered as a bitmap, the flattened bitmaps are projected
onto their leading principal components, each row is scaled to unit length, and the table is frozen for the
whole of training (``requires_grad=False``: no gradient, no optimiser state, no weight decay). Everything
above it (position embeddings, blocks, the untied output head) trains as usual; the paper's point is that the
Transformer learns the semantics the table does not hold.

Here: a character tokenizer (the ``char_lm`` task's 97 symbols) instead of the paper's 65,536-token bvv241
Unicode tokenizer; Pillow's built-in bitmap font (6x11 cells, Latin-1) on a 16x16 canvas (the catalog's
size); control characters are drawn in caret notation ("^@", "^J"), so no two tokens share a bitmap; the
backbone is ``zoo_nn.gpt.GPT`` (learned absolute positions, LayerNorm, GELU) where the paper's has rotary
positions. ``preset="paper"`` gives the paper's width and depth (d_model 1024, 16 layers, 32 heads); with 97
tokens the bitmaps have at most 96 principal components, so the columns past them are zero (the paper's
65,536 tokens fill all 1024). Parts of the method from the abstract, the catalog and the authors' model card;
the paper's full text was not read here, so its exact bitmap size is not reproduced.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from zoo_nn.gpt import GPT
from zoo_task_char_lm.task import VOCAB

GLYPH_SIZE = 16
EMBEDDINGS = ("glyph", "random", "trainable")
# dim 64, depth 2, block 64: the char_lm task's measured short claim budget (see reproduce.py)
CPU = {"dim": 64, "depth": 2, "heads": 4, "block_size": 64, "mlp_ratio": 4.0}
PAPER = {"dim": 1024, "depth": 16, "heads": 32, "block_size": 1024, "mlp_ratio": 4.0}  # the released 335M model
PRESETS = ("cpu", "paper")


def glyph_text(char: str) -> str:
    """What is drawn for ``char``: the character, or its caret notation when it is a control character.

    >>> glyph_text("a"), glyph_text("\\n"), glyph_text("\\x00")
    ('a', '^J', '^@')
    """
    code = ord(char)
    if code < 32 or code == 127:
        return "^" + chr(code ^ 64)
    if code > 255:
        raise ValueError(f"glyph {char!r} (U+{code:04X}) is outside Latin-1, the range of Pillow's built-in bitmap font; "
                         "render such vocabularies with a TrueType font (not supported by this plugin yet)")
    return char


def render_glyphs(chars: Sequence[str], size: int = GLYPH_SIZE) -> np.ndarray:
    """``(len(chars), size * size)`` float32 in [0, 1]: each character drawn, centred, in Pillow's bitmap font.

    >>> x = render_glyphs([".", "W"])
    >>> x.shape, bool(x[0].sum() < x[1].sum())
    ((2, 256), True)
    """
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default_imagefont()  # the built-in bitmap font: no file, no FreeType
    out = np.zeros((len(chars), size * size), dtype=np.float32)
    for i, char in enumerate(chars):
        text = glyph_text(char)
        left, top, right, bottom = font.getbbox(text)
        w, h = right - left, bottom - top
        side = max(size, w, h)  # a glyph larger than the canvas is drawn larger and scaled down
        img = Image.new("L", (side, side), 0)
        ImageDraw.Draw(img).text(((side - w) // 2 - left, (side - h) // 2 - top), text, fill=255, font=font)
        if side != size:
            img = img.resize((size, size), Image.Resampling.BOX)
        out[i] = np.asarray(img, dtype=np.float32).reshape(-1) / 255.0
    return out


def pca_project(bitmaps: np.ndarray, dim: int) -> np.ndarray:
    """Rows of ``bitmaps`` on their ``dim`` leading principal components, each row then L2-normalised.

    Components are signed so that each one's largest-magnitude loading is positive (SVD signs are otherwise
    arbitrary); components past the rank of the centred bitmaps are zero columns.

    >>> p = pca_project(np.eye(3), 4)
    >>> p.shape, bool((p[:, 2:] == 0).all())
    ((3, 4), True)
    """
    x = bitmaps.astype(np.float64)
    x = x - x.mean(0, keepdims=True)
    _, s, vt = np.linalg.svd(x, full_matrices=False)
    vt = vt * np.sign(vt[np.arange(len(vt)), np.abs(vt).argmax(1)])[:, None]
    proj = np.zeros((len(x), dim))
    k = min(dim, int((s > 1e-9 * s[0]).sum()))  # directions with no variance carry rounding noise only
    proj[:, :k] = x @ vt[:k].T
    return (proj / np.maximum(np.linalg.norm(proj, axis=1, keepdims=True), 1e-12)).astype(np.float32)


def glyph_table(chars: Sequence[str], dim: int, size: int = GLYPH_SIZE) -> torch.Tensor:
    """The frozen embedding table of ``chars``: rendered bitmaps, PCA to ``dim``, unit rows (``(V, dim)`` float32)."""
    return torch.from_numpy(pca_project(render_glyphs(chars, size), dim))


class FrozenEmbedding(nn.Module):
    """A token table that never trains: ``weight`` is a parameter with ``requires_grad=False`` (saved with the model).

    ``kind="glyph"``: the glyph table of ``chars``; ``kind="random"``: Gaussian rows (drawn from torch's global
    generator) scaled to unit length, the control with the same norm and no glyph structure.
    """

    def __init__(self, chars: Sequence[str], dim: int, kind: str = "glyph", size: int = GLYPH_SIZE) -> None:
        super().__init__()
        if kind == "glyph":
            table = glyph_table(chars, dim, size)
        elif kind == "random":
            table = F.normalize(torch.randn(len(chars), dim), dim=1)
        else:
            raise ValueError(f"frozen embedding kind must be 'glyph' or 'random', got {kind!r}")
        self.kind, self.size = kind, size
        self.weight = nn.Parameter(table, requires_grad=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return F.embedding(ids, self.weight)


class GlyphGPT(GPT):
    """``zoo_nn.gpt.GPT`` with its token table replaced by a ``FrozenEmbedding`` (``embedding="glyph"`` or
    ``"random"``); ``embedding="trainable"`` keeps the GPT's own learned table (the paper's comparison model).

    The rest of the network is drawn first, in the GPT's order, so for one torch seed the three variants
    start from the same blocks, positions and head: only the token table differs.
    """

    reference_baselines = ("gpt-ln-gelu",)

    def __init__(self, embedding: str = "glyph", glyph_size: int = GLYPH_SIZE, vocab: str = VOCAB, **gpt: Any) -> None:
        if embedding not in EMBEDDINGS:
            raise ValueError(f"embedding must be one of {EMBEDDINGS}, got {embedding!r}")
        super().__init__(vocab_size=len(vocab), **gpt)
        self.embedding = embedding
        if embedding != "trainable":
            self.tok = FrozenEmbedding(vocab, gpt.get("dim", self.arch["dim"]), embedding, glyph_size)


def glyph_gpt(preset: str = "cpu", embedding: str = "glyph", dim: int | None = None, depth: int | None = None,
              heads: int | None = None, block_size: int | None = None, mlp_ratio: float | None = None,
              glyph_size: int = GLYPH_SIZE) -> GlyphGPT:
    """A char GPT (char_lm's 97 symbols) on frozen glyph embeddings. ``preset="cpu"``: dim 64, depth 2, 4 heads,
    block 64; ``preset="paper"``: dim 1024, depth 16, 32 heads, block 1024. Arguments given override the preset.

    >>> m = glyph_gpt(dim=32, heads=2)
    >>> m(torch.zeros(1, 8, dtype=torch.long)).shape, m.tok.weight.requires_grad
    (torch.Size([1, 8, 97]), False)
    """
    if preset not in PRESETS:
        raise ValueError(f"glyph_gpt preset must be one of {PRESETS}, got {preset!r}")
    given = {"dim": dim, "depth": depth, "heads": heads, "block_size": block_size, "mlp_ratio": mlp_ratio}
    args = {**(PAPER if preset == "paper" else CPU), **{k: v for k, v in given.items() if v is not None}}
    return GlyphGPT(embedding=embedding, glyph_size=glyph_size, **args)
