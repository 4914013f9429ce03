"""CodeGen2 (Nijkamp et al. 2023, arXiv:2305.02309): the CodeGen causal decoder with sentinel-token infilling.

Architecture (the released ``CodeGenForCausalLM``, whose config the paper's 1B model ships with; §2/§3 of the paper
keep CodeGen's decoder): token embeddings only (no position table); ``depth`` blocks of one LayerNorm feeding an
attention branch and an MLP branch *in parallel*, ``x + attn(ln(x)) + mlp(ln(x))`` (GPT-J style); fused bias-free
q/k/v and output projections; rotary position embeddings on the first ``rotary_dim`` dimensions of every head
(adjacent pairs rotated, GPT-J's layout; the rest of the head is position-free); a GELU (tanh form) MLP of width
``4 dim`` with biases; a final LayerNorm and an untied output head with a bias. Init N(0, 0.02), biases zero.

Infill format (the released model card): ``prefix <mask_1> suffix <|endoftext|> <sep> <mask_1>`` and the model
writes the middle, ending it with ``<eom>``. Training uses the same format with up to ``MAX_SPANS`` spans
(``objective.span_corrupt``), mixed with plain causal sequences (``objective.train``).

Vocabulary of the char-level model: ids 0..96 are ``char_lm``'s characters (the task's 97), and the sentinels are
appended after them, ids 97.. in the order of ``SENTINELS``. ``forward(ids)`` returns logits over the 97 characters
only (the ``code_text``/``char_lm`` contract: the next-character distribution, sentinels excluded);
``forward(ids, sentinels=True)`` returns all ``vocab_size`` logits (training and infill use it).

Deviations: char-level and tiny on CPU (``preset="cpu"``: dim 64, depth 4, 4 heads, rotary 8 of 16 head dims,
block 128) instead of BPE and 1-16B parameters (``preset="paper"`` is CodeGen2-1B's shape: dim 2048, 16 layers,
16 heads, rotary 64 of 128, 2048 positions, vocabulary 51,200); no Prefix-LM attention (the paper's lesson 1 found
no gain from it and the released models are causal decoders); no dropout (the released config has none).
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from zoo_nn.gpt import MLP
from zoo_task_char_lm.task import VOCAB, VOCAB_SIZE, encode

N_CHARS = VOCAB_SIZE  # 97: char_lm's characters keep their ids
MAX_SPANS = 3
SENTINELS = ("<|endoftext|>", "<sep>", "<eom>") + tuple(f"<mask_{k}>" for k in range(1, MAX_SPANS + 1))
EOT, SEP, EOM = N_CHARS, N_CHARS + 1, N_CHARS + 2


def mask_id(k: int) -> int:
    """Id of ``<mask_k>`` (k from 1) in the char-level vocabulary."""
    if not 1 <= k <= MAX_SPANS:
        raise ValueError(f"<mask_{k}>: the char-level vocabulary has <mask_1>..<mask_{MAX_SPANS}>")
    return N_CHARS + 2 + k


VOCAB_WITH_SENTINELS = N_CHARS + len(SENTINELS)  # 103

CPU = {"vocab_size": VOCAB_WITH_SENTINELS, "dim": 64, "depth": 4, "heads": 4, "rotary_dim": 8, "block_size": 128,
       "mlp_ratio": 4.0}
# CodeGen2-1B's config.json (n_embd 2048, n_layer 16, n_head 16, rotary_dim 64, n_positions 2048, vocab 51200)
PAPER = {"vocab_size": 51200, "dim": 2048, "depth": 16, "heads": 16, "rotary_dim": 64, "block_size": 2048,
         "mlp_ratio": 4.0}
PRESETS = {"cpu": CPU, "paper": PAPER}


def rotary(x: torch.Tensor, positions: torch.Tensor, base: float = 10_000.0) -> torch.Tensor:
    """Rotate adjacent pairs ``(x[2i], x[2i+1])`` of the last dimension by ``position * base^(-2i/d)`` (GPT-J)."""
    d = x.shape[-1]
    inv = base ** (-torch.arange(0, d, 2, device=x.device, dtype=torch.float32) / d)
    ang = positions.to(torch.float32)[:, None] * inv  # (T, d/2)
    sin, cos = ang.sin().to(x.dtype), ang.cos().to(x.dtype)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).flatten(-2)


class CodeGenAttention(nn.Module):
    """Causal self-attention with a fused bias-free q/k/v projection and rotary embeddings on ``rotary_dim`` dims."""

    def __init__(self, dim: int, heads: int, rotary_dim: int):
        super().__init__()
        if dim % heads:
            raise ValueError(f"dim {dim} must be a multiple of heads {heads}")
        head_dim = dim // heads
        if rotary_dim % 2 or not 0 <= rotary_dim <= head_dim:
            raise ValueError(f"rotary_dim {rotary_dim} must be even and at most the head size {head_dim}")
        self.heads, self.rotary_dim = heads, rotary_dim
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)  # rows: all q heads, then all k heads, then all v heads
        self.out = nn.Linear(dim, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        r = self.rotary_dim
        if r:
            pos = torch.arange(t, device=x.device)
            q = torch.cat((rotary(q[..., :r], pos), q[..., r:]), dim=-1)
            k = torch.cat((rotary(k[..., :r], pos), k[..., r:]), dim=-1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # scale 1/sqrt(head_dim), as CodeGen
        return self.out(y.transpose(1, 2).reshape(b, t, d))


class ParallelBlock(nn.Module):
    """``x + attn(ln(x)) + mlp(ln(x))``: one LayerNorm, attention and MLP side by side (CodeGen/GPT-J)."""

    def __init__(self, dim: int, heads: int, rotary_dim: int, hidden: int, eps: float = 1e-5):
        super().__init__()
        self.ln = nn.LayerNorm(dim, eps=eps)
        self.attn = CodeGenAttention(dim, heads, rotary_dim)
        self.mlp = MLP(dim, hidden, act=lambda: nn.GELU(approximate="tanh"), gated=False)  # fc_in / gelu_new / fc_out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.ln(x)
        return x + self.attn(h) + self.mlp(h)


class CodeGen2(nn.Module):
    """The CodeGen2 decoder; ``infill(prefix, suffix)`` writes the middle in the sentinel format.

    >>> m = CodeGen2(dim=32, depth=1, heads=2, rotary_dim=8, block_size=32)
    >>> m(torch.zeros(2, 16, dtype=torch.long)).shape, m(torch.zeros(1, 4, dtype=torch.long), sentinels=True).shape
    (torch.Size([2, 16, 97]), torch.Size([1, 4, 103]))
    """

    input_kind = "tokens"

    def __init__(self, vocab_size: int = VOCAB_WITH_SENTINELS, dim: int = 64, depth: int = 4, heads: int = 4,
                 rotary_dim: int = 8, block_size: int = 128, mlp_ratio: float = 4.0, eps: float = 1e-5,
                 n_chars: int | None = None):
        super().__init__()
        self.vocab_size, self.block_size = vocab_size, block_size
        # char-level models expose the 97 characters through forward(); a BPE model (converted) exposes everything
        self.n_chars = n_chars if n_chars is not None else (N_CHARS if vocab_size == VOCAB_WITH_SENTINELS else vocab_size)
        self.arch = {"dim": dim, "depth": depth, "heads": heads, "block_size": block_size, "mlp_ratio": mlp_ratio}
        self.rotary_dim = rotary_dim
        self.tok = nn.Embedding(vocab_size, dim)
        self.blocks = nn.ModuleList([ParallelBlock(dim, heads, rotary_dim, int(mlp_ratio * dim), eps)
                                     for _ in range(depth)])
        self.norm = nn.LayerNorm(dim, eps=eps)
        self.head = nn.Linear(dim, vocab_size)
        self.apply(self._init)

    @staticmethod
    def _init(m: nn.Module) -> None:
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def forward(self, ids: torch.Tensor, *, sentinels: bool = False) -> torch.Tensor:
        t = ids.shape[1]
        if t > self.block_size:
            raise ValueError(f"sequence length {t} exceeds block_size {self.block_size}")
        x = self.tok(ids)
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.norm(x))
        return logits if sentinels else logits[..., : self.n_chars]

    def mlps(self) -> list[MLP]:
        return [b.mlp for b in self.blocks]

    def optim_groups(self, weight_decay: float) -> list[dict]:
        """AdamW groups: decay on matrices and embeddings, none on biases and LayerNorm scales."""
        decay = [p for p in self.parameters() if p.ndim >= 2]
        rest = [p for p in self.parameters() if p.ndim < 2]
        return [{"params": decay, "weight_decay": weight_decay}, {"params": rest, "weight_decay": 0.0}]

    # ------------------------------------------------------------------ infill
    def _check_char_level(self) -> None:
        if self.vocab_size != VOCAB_WITH_SENTINELS:
            raise ValueError("infill() works on the char-level model; a converted CodeGen2 checkpoint needs its BPE "
                             "tokenizer: encode prefix + '<mask_1>' + suffix + '<|endoftext|><sep><mask_1>' with it and "
                             "generate with forward(ids, sentinels=True) until <eom>")

    @property
    def infill_room(self) -> int:
        """Positions kept free for the middle and its ``<eom>`` (3/8 of the block): the prompt never depends on
        ``max_len``, so one greedy pass serves every length budget."""
        return max(8, 3 * self.block_size // 8) + 1

    def infill_prompt(self, prefix: str, suffix: str) -> torch.Tensor:
        """``prefix <mask_1> suffix <|endoftext|> <sep> <mask_1>`` as ids, cut to leave ``infill_room`` positions.

        The suffix keeps a third of the context room (its start), the prefix the rest (its end: the nearest code).
        """
        self._check_char_level()
        room = self.block_size - self.infill_room - 4
        if room < 2:
            raise ValueError(f"block_size {self.block_size} is too short for infilling")
        s = min(len(suffix), room // 3)
        p = min(len(prefix), room - s)
        m1 = mask_id(1)
        return torch.cat([encode(prefix[len(prefix) - p:]), torch.tensor([m1]), encode(suffix[:s]),
                          torch.tensor([EOT, SEP, m1])])

    @torch.no_grad()
    def infill_many(self, prefixes: list[str], suffixes: list[str], max_len: int | list[int] = 64) -> list[str]:
        """Greedy middles for many gaps at once (prompts of equal length share one batch); as ``infill`` each."""
        n = len(prefixes)
        limits = [max_len] * n if isinstance(max_len, int) else list(max_len)
        limits = [min(m, self.infill_room - 1) for m in limits]
        prompts = [self.infill_prompt(p, s) for p, s in zip(prefixes, suffixes, strict=True)]
        out = [""] * n
        groups: dict[int, list[int]] = {}
        for i, p in enumerate(prompts):
            groups.setdefault(len(p), []).append(i)
        dev = self.head.weight.device
        for rows in groups.values():
            ids = torch.stack([prompts[i] for i in rows]).to(dev)
            done = torch.zeros(len(rows), dtype=torch.bool, device=dev)
            written: list[list[str]] = [[] for _ in rows]
            for step in range(max(limits[i] for i in rows)):
                nxt = self(ids, sentinels=True)[:, -1].argmax(-1)
                for j, i in enumerate(rows):
                    if done[j]:
                        continue
                    if int(nxt[j]) >= N_CHARS or step >= limits[i]:
                        done[j] = True
                    else:
                        written[j].append(VOCAB[int(nxt[j])])
                if bool(done.all()):
                    break
                ids = torch.cat([ids, nxt[:, None]], 1)
            for j, i in enumerate(rows):
                out[i] = "".join(written[j])
        return out

    def infill(self, prefix: str, suffix: str = "", max_len: int = 64) -> str:
        """Greedy middle between ``prefix`` and ``suffix``: the characters written before ``<eom>`` (or any sentinel).

        >>> m = CodeGen2(dim=32, depth=1, heads=2, rotary_dim=8, block_size=64)
        >>> isinstance(m.infill("x = ", "\\nprint(x)", max_len=8), str)
        True
        """
        return self.infill_many([prefix], [suffix], max_len)[0]


def codegen2(preset: str = "cpu", **overrides: Any) -> CodeGen2:
    """The CodeGen2 decoder: ``preset="cpu"`` (char-level, tiny) or ``"paper"`` (CodeGen2-1B's shape)."""
    if preset not in PRESETS:
        raise ValueError(f"codegen2: unknown preset {preset!r}; choose from {sorted(PRESETS)}")
    return CodeGen2(**{**PRESETS[preset], **overrides})
