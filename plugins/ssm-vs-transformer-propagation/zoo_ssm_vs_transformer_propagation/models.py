"""The two tiny char-LMs the propagation comparison is run on: the ``char_lm`` task's reference GPT and a diagonal
state-space LM of the same shape, trained in code on the same corpus with the same steps, cached as safetensors.

The SSM is S4D (Gu, Gupta, Goel, Re 2022, "On the Parameterization and Initialization of Diagonal State Space
Models", Sec. 3-4): per channel h a diagonal complex state of N/2 modes, ``A_n = -exp(log_a_re) + i a_im``
with the S4D-Lin init ``A_n = -1/2 + i pi n``, ``B = 1``, ``C ~ CN(0, 1/2)``, ``log dt ~ U[log 1e-3, log 1e-1]``,
zero-order-hold discretisation ``dA = exp(dt A)``, ``dB = (dA - 1) / A``, and the convolution kernel
``K_l = 2 Re(sum_n C_n dB_n dA_n^l)`` applied causally (FFT) plus a skip ``D u``. The SSM's own parameters train with
lr 1e-3 and no weight decay (S4D's recipe). Around it the block is a pre-norm residual block shaped like the GPT's
(``x + mixer(norm1(x))``, ``x + mlp(norm2(x))``), the mixer gated as in H3/Mamba: ``out(gelu(S4D(v(x))) * silu(g(x)))``.
Module names follow the GPT (``tok``, ``blocks.N``, ``blocks.N.mlp``, ``norm``, ``head``; the mixer is
``blocks.N.mixer``) so ``zoo.activations`` reads both models' residual streams by the same names.

Deviations: the propagation paper (Hoang et al. 2025, arXiv 2510.06640, catalog 64) compares pretrained Mamba and
transformer LMs; here both are trained in code at CPU scale (dim 64, depth 6, 600 steps); the SSM is S4D (linear
time-invariant) rather than Mamba's selective scan, chosen for a parallel FFT convolution on CPU. ``N = 32`` states
per channel (16 complex modes) makes the mixer's parameters equal attention's (within 1%); the GPT has a position
table the SSM lacks. The GELU after the SSM and the SiLU gate are H3/Mamba-style choices, not S4D's own block.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from zoo_nn.gpt import GPT, MLP, mlp_hidden_width

VERSION = 1
SIZE = {"dim": 64, "depth": 6, "heads": 4, "block_size": 64}  # the comparison's shape (both models)
TRAIN = {"steps": 600, "lr": 1e-2, "batch_size": 16}
SSM_LR = 1e-3  # S4D: A and dt train with lr 1e-3 and no weight decay
KINDS = ("transformer", "ssm")


class S4D(nn.Module):
    """S4D-Lin diagonal SSM over ``channels`` independent channels, ``state`` real states (state/2 complex modes)."""

    def __init__(self, channels: int, state: int = 32, dt_min: float = 1e-3, dt_max: float = 1e-1):
        super().__init__()
        if state % 2:
            raise ValueError(f"state {state} must be even (state/2 complex conjugate modes)")
        m = state // 2
        log_dt = torch.rand(channels) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min)
        self.log_dt = nn.Parameter(log_dt)
        self.log_a_re = nn.Parameter(torch.log(0.5 * torch.ones(channels, m)))
        self.a_im = nn.Parameter(math.pi * torch.arange(m).float().repeat(channels, 1))
        self.c = nn.Parameter(torch.randn(channels, m, 2) * math.sqrt(0.5))  # complex C ~ CN(0, 1/2) as (re, im)
        self.d = nn.Parameter(torch.randn(channels))
        for p in (self.log_dt, self.log_a_re, self.a_im, self.c):
            p.zoo_ssm = True  # optim_groups: lr SSM_LR, no weight decay
        for p in self.parameters():
            p.zoo_weight_decay = False

    def kernel(self, length: int) -> torch.Tensor:
        """``K`` (channels, length): the discretised impulse response."""
        dt = torch.exp(self.log_dt)[:, None]
        a = torch.complex(-torch.exp(self.log_a_re), self.a_im)
        dta = a * dt
        c = torch.view_as_complex(self.c.contiguous()) * (torch.exp(dta) - 1.0) / a  # C * dB (B = 1)
        pw = dta[..., None] * torch.arange(length, device=a.device)  # (H, M, L)
        return 2 * torch.einsum("hm,hml->hl", c, torch.exp(pw)).real

    def forward(self, u: torch.Tensor) -> torch.Tensor:  # (B, T, H)
        t = u.shape[1]
        k = self.kernel(t)
        uf = torch.fft.rfft(u.transpose(1, 2), n=2 * t)
        y = torch.fft.irfft(uf * torch.fft.rfft(k, n=2 * t), n=2 * t)[..., :t]
        return y.transpose(1, 2) + u * self.d


class SSMMixer(nn.Module):
    """``out(gelu(S4D(v(x))) * silu(g(x)))``: the token mixer in place of attention."""

    def __init__(self, dim: int, state: int = 32):
        super().__init__()
        self.v = nn.Linear(dim, dim)
        self.g = nn.Linear(dim, dim)
        self.ssm = S4D(dim, state)
        self.out = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(F.gelu(self.ssm(self.v(x))) * F.silu(self.g(x)))


class SSMBlock(nn.Module):
    """Pre-norm block: ``x + mixer(norm1(x))``, then ``x + mlp(norm2(x))``."""

    def __init__(self, dim: int, hidden: int, state: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.mixer = SSMMixer(dim, state)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = MLP(dim, hidden, "gelu")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.mixer(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class SSMLM(nn.Module):
    """A diagonal-SSM (S4D) char-LM shaped like ``zoo_nn.gpt.GPT``: token embedding, ``depth`` blocks, norm, head.

    Init follows the GPT (linear and embedding weights N(0, 0.02), residual projections N(0, 0.02/sqrt(2 depth)),
    zero biases) except the S4D parameters (S4D-Lin, see the module docstring).

    >>> m = SSMLM(dim=32, depth=2, block_size=16)
    >>> m(torch.zeros(2, 16, dtype=torch.long)).shape
    torch.Size([2, 16, 97])
    """

    def __init__(self, vocab_size: int = 97, dim: int = 64, depth: int = 6, block_size: int = 64, state: int = 32,
                 mlp_ratio: float = 4.0, heads: int | None = None):
        super().__init__()
        del heads  # accepted so one size dict builds both models
        self.block_size, self.vocab_size = block_size, vocab_size
        self.arch = {"dim": dim, "depth": depth, "block_size": block_size, "state": state, "mlp_ratio": mlp_ratio}
        hidden = mlp_hidden_width(dim, mlp_ratio, False)
        self.tok = nn.Embedding(vocab_size, dim)
        self.blocks = nn.ModuleList([SSMBlock(dim, hidden, state) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab_size, bias=False)
        for mod in self.modules():
            if isinstance(mod, (nn.Linear, nn.Embedding)):
                nn.init.normal_(mod.weight, std=0.02)
            if isinstance(mod, nn.Linear) and mod.bias is not None:
                nn.init.zeros_(mod.bias)
        for block in self.blocks:
            for proj in (block.mixer.out, block.mlp.down):
                nn.init.normal_(proj.weight, std=0.02 / math.sqrt(2 * depth))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        if ids.shape[1] > self.block_size:
            raise ValueError(f"sequence length {ids.shape[1]} exceeds block_size {self.block_size}")
        x = self.tok(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))

    def optim_groups(self, weight_decay: float) -> list[dict]:
        """AdamW groups: matrices decayed; biases, norms and D undecayed; S4D's A, dt, C at lr ``SSM_LR``."""
        ssm = [p for p in self.parameters() if getattr(p, "zoo_ssm", False)]
        rest = [p for p in self.parameters() if not getattr(p, "zoo_ssm", False)]
        decay = [p for p in rest if getattr(p, "zoo_weight_decay", p.ndim >= 2)]
        no_decay = [p for p in rest if not getattr(p, "zoo_weight_decay", p.ndim >= 2)]
        return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0},
                {"params": ssm, "weight_decay": 0.0, "lr": SSM_LR}]


def build(kind: str, seed: int = 0, **size: Any) -> nn.Module:
    """An untrained model of ``kind`` ("transformer": the char_lm reference GPT with LayerNorm and GELU; "ssm":
    ``SSMLM``) at ``SIZE`` (``size`` overrides), initialised from ``seed``."""
    if kind not in KINDS:
        raise ValueError(f"unknown model kind {kind!r}; choose from {list(KINDS)}")
    from zoo_task_char_lm.task import VOCAB_SIZE

    cfg = {**SIZE, **size}
    torch.manual_seed(int(seed))
    if kind == "transformer":
        return GPT(vocab_size=VOCAB_SIZE, **cfg)
    return SSMLM(vocab_size=VOCAB_SIZE, **cfg)


def _cache_path(kind: str, seed: int, steps: int, size: dict[str, Any]) -> Path:
    from zoo.weights import cache_dir

    tag = "-".join(f"{k}{v}" for k, v in sorted(size.items()))
    return cache_dir() / "ssm_vs_transformer_propagation" / f"{kind}-{tag}-s{int(seed)}-t{int(steps)}-v{VERSION}.safetensors"


def trained(kind: str, seed: int = 0, steps: int = TRAIN["steps"], **size: Any) -> nn.Module:
    """``build(kind, seed)`` trained ``steps`` steps on char_lm (its ``train``: AdamW, warm-up + cosine, random windows
    seeded by ``seed``, lr ``TRAIN['lr']``, batch 16, block 64); 0 steps gives the random init. Cached as safetensors
    under zoo's cache (``ZOO_CACHE_DIR``), keyed by kind, size, seed, steps and ``VERSION``."""
    if int(steps) < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    model = build(kind, seed, **size)
    if int(steps) == 0:
        return model.eval()
    path = _cache_path(kind, seed, steps, {**SIZE, **size})
    if path.is_file():
        from safetensors.torch import load_file

        try:
            model.load_state_dict(load_file(str(path)))
            return model.eval()
        except Exception:  # noqa: BLE001 - a corrupt or stale entry is retrained and rewritten
            model = build(kind, seed, **size)
    from safetensors.torch import save_file

    from zoo.fileio import atomic_path
    from zoo_task_char_lm.task import load_corpus, train

    train(model, load_corpus(), steps=int(steps), seed=int(seed), lr=TRAIN["lr"], batch_size=TRAIN["batch_size"])
    try:
        with atomic_path(path) as tmp:
            save_file({k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}, str(tmp))
    except OSError:
        pass  # a read-only cache only costs the retraining
    return model.eval()


def sample_ids(n: int = 64, length: int = 64, seed: int = 0, split: str = "val") -> torch.Tensor:
    """``(n, length)`` windows of char_lm's validation (or training) split at seeded random offsets."""
    if split not in ("val", "train"):
        raise ValueError(f"split must be 'val' or 'train', got {split!r}")
    from zoo_task_char_lm.task import load_corpus

    tr, va, _ = load_corpus()
    ids = va if split == "val" else tr
    g = torch.Generator().manual_seed(int(seed))
    start = torch.randint(len(ids) - length, (n,), generator=g)
    return ids[start[:, None] + torch.arange(length)]


__all__ = ["S4D", "SSMMixer", "SSMBlock", "SSMLM", "build", "trained", "sample_ids", "SIZE", "TRAIN", "KINDS"]
