"""KV-Embedding on a real decoder LM from ``transformers`` (Qwen, Mistral, Llama and other ``AutoModelForCausalLM``).

Needs the ``hf`` extra (``pip install "zoo-kv-embedding[hf]"``). The re-routing is an attention function registered
with transformers' ``AttentionInterface`` under ``ATTENTION`` (so it runs inside the model's own attention modules,
after their rotary embedding): at the layers being re-routed, the key and value of each sequence's last real token
(post-RoPE, per key-value head) are prepended to the keys and values, every query may attend to them (their logit
shifted by ``bias``), and padded keys stay masked. Texts are right-padded; the last layer's normalised hidden states
are pooled ("mean", "last" or "hybrid", as :class:`~zoo_kv_embedding.model.KVEmbedding`). Layers are picked by
TwoNN on the last token's state at each layer's input (:meth:`HFKVEmbedding.select_layers`).

>>> emb = from_pretrained("Qwen/Qwen2.5-0.5B-Instruct")  # doctest: +SKIP
>>> emb.select_layers(calibration_texts); emb.embed(["a sentence", "another"]).shape  # doctest: +SKIP
"""
from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from .model import POOLINGS
from .twonn import select_layers, two_nn

__all__ = ["ATTENTION", "HFKVEmbedding", "from_pretrained", "PROMPT"]

ATTENTION = "zoo_kv_embedding"
# a compression prompt in the spirit of the paper's (its exact wording is not reproduced): the last token is asked to
# summarise the text, so its state, re-routed as the prefix, carries the text's meaning rather than the next word
PROMPT = 'Text: "{text}"\nThe meaning of this text in one word:"'


@dataclass(frozen=True)
class _Route:
    layers: frozenset[int]
    last: torch.Tensor  # (B,) index of each sequence's last real token
    bias: float


_ROUTE: contextvars.ContextVar[_Route | None] = contextvars.ContextVar("zoo_kv_embedding_route", default=None)


def _allowed(attention_mask: torch.Tensor | None, b: int, tq: int, tk: int, device: torch.device) -> torch.Tensor:
    """The boolean (B, 1, Tq, Tk) "may attend" mask from what transformers passes (None, bool, or additive float)."""
    if attention_mask is None:
        causal = torch.ones(tq, tk, dtype=torch.bool, device=device).tril(tk - tq)
        return causal[None, None].expand(b, 1, tq, tk)
    if attention_mask.dtype == torch.bool:
        return attention_mask[:, :, :, :tk].expand(b, 1, tq, tk)
    return (attention_mask[:, :, :, :tk] > torch.finfo(attention_mask.dtype).min / 2).expand(b, 1, tq, tk)


def kv_rerouting_attention(module: nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                           attention_mask: torch.Tensor | None, scaling: float | None = None, dropout: float = 0.0,
                           **_: Any) -> tuple[torch.Tensor, None]:
    """Scaled dot-product attention, with the last token's key/value as a prefix at the routed layers."""
    groups = getattr(module, "num_key_value_groups", 1)
    if groups > 1:  # grouped-query attention: one key/value head serves ``groups`` query heads
        key, value = key.repeat_interleave(groups, dim=1), value.repeat_interleave(groups, dim=1)
    b, _, tq, _ = query.shape
    allowed = _allowed(attention_mask, b, tq, key.shape[2], query.device)
    shift = torch.zeros(allowed.shape, dtype=query.dtype, device=query.device)
    route = _ROUTE.get()
    if route is not None and getattr(module, "layer_idx", None) in route.layers:
        rows = torch.arange(b, device=query.device)
        key = torch.cat([key[rows, :, route.last][:, :, None], key], dim=2)
        value = torch.cat([value[rows, :, route.last][:, :, None], value], dim=2)
        allowed = torch.cat([torch.ones(b, 1, tq, 1, dtype=torch.bool, device=query.device), allowed], dim=-1)
        shift = torch.cat([torch.full((b, 1, tq, 1), float(route.bias), dtype=query.dtype, device=query.device), shift],
                          dim=-1)
    mask = shift.masked_fill(~allowed, float("-inf"))
    out = F.scaled_dot_product_attention(query, key, value, attn_mask=mask, scale=scaling,
                                         dropout_p=dropout if module.training else 0.0)
    return out.transpose(1, 2).contiguous(), None


def _register() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask

    AttentionInterface.register(ATTENTION, kv_rerouting_attention)
    ALL_MASK_ATTENTION_FUNCTIONS.register(ATTENTION, sdpa_mask)  # boolean masks, read by _allowed


@contextlib.contextmanager
def _routing(route: _Route | None) -> Iterator[None]:
    token = _ROUTE.set(route)
    try:
        yield
    finally:
        _ROUTE.reset(token)


class HFKVEmbedding(nn.Module):
    """A frozen ``transformers`` causal LM embedding texts by KV re-routing (see the module docstring).

    ``layers``: the decoder layers to re-route (``None``: the middle ``num_layers`` until :meth:`select_layers`);
    ``prompt``: a ``{text}`` template (``None``: the bare text); ``reroute=False`` gives the plain poolings.
    """

    embedding_mode = "sentence"

    def __init__(self, lm: nn.Module, tokenizer: Any, *, layers: Sequence[int] | None = None, num_layers: int = 4,
                 bias: float = 0.0, pooling: str = "hybrid", prompt: str | None = PROMPT, reroute: bool = True,
                 max_length: int = 512, batch_size: int = 8) -> None:
        super().__init__()
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
        self.lm, self.tokenizer = lm.eval().requires_grad_(False), tokenizer
        self.depth = int(lm.config.num_hidden_layers)
        self.num_layers, self.bias, self.pooling, self.prompt, self.reroute = num_layers, bias, pooling, prompt, reroute
        self.max_length, self.batch_size = max_length, batch_size
        mid = [abs(i - self.depth / 2) for i in range(self.depth)]
        self.layers = list(layers) if layers is not None else select_layers(mid, num_layers, range(1, self.depth))
        self.layer_ids: list[float] = []

    def _encode(self, texts: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        texts = [self.prompt.format(text=t) if self.prompt else t for t in texts]
        enc = self.tokenizer(list(texts), padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")
        return enc["input_ids"], enc["attention_mask"]

    @torch.no_grad()
    def _run(self, ids: torch.Tensor, mask: torch.Tensor, *, reroute: bool, output_hidden_states: bool = False) -> Any:
        lengths = mask.sum(1)
        route = _Route(frozenset(self.layers), lengths - 1, float(self.bias)) if reroute else None
        base = self.lm.get_decoder() if hasattr(self.lm, "get_decoder") else self.lm.base_model
        with _routing(route):
            return base(input_ids=ids, attention_mask=mask, output_hidden_states=output_hidden_states), lengths

    @torch.no_grad()
    def pooled(self, texts: Sequence[str], *, reroute: bool | None = None) -> dict[str, torch.Tensor]:
        """Every pooling of the last layer: ``{"mean", "last", "hybrid"}`` -> (N, hidden) float32."""
        reroute = self.reroute if reroute is None else reroute
        parts: dict[str, list[torch.Tensor]] = {p: [] for p in POOLINGS}
        for at in range(0, len(texts), self.batch_size):
            ids, mask = self._encode(texts[at:at + self.batch_size])
            out, lengths = self._run(ids, mask, reroute=reroute)
            h = out.last_hidden_state.float()
            mean = (h * mask[..., None]).sum(1) / lengths[:, None]
            last = h[torch.arange(len(h)), lengths - 1]
            parts["mean"].append(mean)
            parts["last"].append(last)
            parts["hybrid"].append((mean + last) / 2)
        return {p: torch.cat(v) for p, v in parts.items()}

    def embed(self, texts: Sequence[str]) -> torch.Tensor:
        return self.pooled(list(texts))[self.pooling]

    def forward(self, texts: Sequence[str]) -> torch.Tensor:
        return self.embed(texts)

    @torch.no_grad()
    def select_layers(self, texts: Sequence[str]) -> list[int]:
        """Re-route the ``num_layers`` layers around the TwoNN minimum of the last token's state (layer 0 excluded)."""
        last: list[list[torch.Tensor]] = [[] for _ in range(self.depth)]
        for at in range(0, len(texts), self.batch_size):
            ids, mask = self._encode(list(texts[at:at + self.batch_size]))
            out, lengths = self._run(ids, mask, reroute=False, output_hidden_states=True)
            for i in range(self.depth):  # hidden_states[i]: the input of decoder layer i
                last[i].append(out.hidden_states[i][torch.arange(len(ids)), lengths - 1].float())
        self.layer_ids = [two_nn(torch.cat(s).double().numpy()) for s in last]
        self.layers = select_layers(self.layer_ids, self.num_layers, range(1, self.depth))
        return self.layers


def from_pretrained(name_or_path: str, *, tokenizer: Any = None, torch_dtype: Any = None, **options: Any) -> HFKVEmbedding:
    """Load ``AutoModelForCausalLM`` (a local folder or a Hub repo id) with the re-routing attention; ``options`` go to
    :class:`HFKVEmbedding`. The tokenizer is loaded from the same place unless given; it pads on the right.

    >>> emb = from_pretrained("Qwen/Qwen2.5-0.5B-Instruct", num_layers=6)  # doctest: +SKIP
    """
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:  # the core plugin does not need transformers
        raise ImportError('zoo_kv_embedding.hf needs transformers: pip install "zoo-kv-embedding[hf]"') from exc
    _register()
    lm = AutoModelForCausalLM.from_pretrained(name_or_path, attn_implementation=ATTENTION,
                                              **({"dtype": torch_dtype} if torch_dtype is not None else {}))
    tok = tokenizer if tokenizer is not None else AutoTokenizer.from_pretrained(name_or_path)
    tok.padding_side = "right"
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return HFKVEmbedding(lm, tok, **options)
