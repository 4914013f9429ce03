"""codegen2 plugin: the conformance kit, the infill format, the objective's mixture, the CodeGen block, the converter."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from torch.nn import functional as F

import zoo
from zoo.testing import check_plugin
from zoo_codegen2 import objective as O
from zoo_codegen2.hub import from_official, qkv_from_codegen, qkv_to_codegen
from zoo_codegen2.model import EOM, EOT, N_CHARS, SEP, CodeGen2, codegen2, mask_id
from zoo_codegen2.reproduce import left_to_right_many
from zoo_task_char_lm.task import decode
from zoo_task_code_text.data import Infill
from zoo_task_code_text.task import left_to_right_infill

TINY = {"dim": 16, "depth": 1, "heads": 2, "rotary_dim": 4, "block_size": 32}


def test_conformance(hub):
    check_plugin("codegen2", overrides={"codegen2": TINY})


def test_presets():
    assert codegen2(**TINY).vocab_size == N_CHARS + 6 and codegen2().rotary_dim == 8
    with pytest.raises(ValueError, match="preset"):
        codegen2(preset="huge")


def _parse(seq: np.ndarray) -> np.ndarray:
    """Undo span_corrupt: put every span back in place of its <mask_k>."""
    seq = list(seq)
    sep = seq.index(SEP)
    assert seq[sep - 1] == EOT
    context, tail = seq[:sep - 1], seq[sep + 1:]
    spans, k = {}, 0
    while tail:
        m = tail.pop(0)
        end = tail.index(EOM)
        spans[m], tail = tail[:end], tail[end + 1:]
        k += 1
    out = []
    for t in context:
        out += spans[t] if t in spans else [t]
    return np.array(out)


def test_infill_format_round_trips():
    rng = np.random.default_rng(0)
    for n in (1, 2, 3):
        window = rng.integers(2, N_CHARS, 60)
        seq = O.span_corrupt(window, n, rng)
        assert len(seq) == len(window) + 3 * n + 2
        assert [int(t) for t in seq if t >= N_CHARS and t not in (EOT, SEP, EOM)] == \
            [mask_id(k) for k in range(1, n + 1)] * 2  # <mask_k> in the context, then again before span k
        np.testing.assert_array_equal(_parse(seq), window)
    m = CodeGen2(**TINY)  # block 32: 13 positions for the middle, 15 of context (5 suffix, 10 prefix)
    ids = m.infill_prompt("def f(x):\n    ", "\n    return y").tolist()
    k = ids.index(mask_id(1))
    assert ids[-3:] == [EOT, SEP, mask_id(1)] and len(ids) == 32 - m.infill_room
    assert decode(ids[:k]) == "f(x):\n    " and decode(ids[k + 1:-3]) == "\n    "


def test_a_causal_only_step_never_sees_sentinels():
    ids = np.random.default_rng(1).integers(1, N_CHARS, 5000)
    rng = np.random.default_rng(0)
    causal = O.mixed_batch(ids, 64, 33, rng, p_span=0.0)
    mixed = O.mixed_batch(ids, 64, 33, np.random.default_rng(0), p_span=0.5)
    assert causal.shape == mixed.shape == (64, 33) and int(causal.max()) < N_CHARS
    with_sep = (mixed == SEP).any(1).float().mean()
    assert 0.3 < with_sep < 0.7  # about half the sequences are span-corrupted
    seen = []
    m = CodeGen2(**TINY)
    m.tok.register_forward_hook(lambda mod, inp, out: seen.append(int(inp[0].max())))
    data = (torch.from_numpy(ids), None, None)
    O.train(m, steps=3, seed=0, p_span=0.0, data=data, batch_size=4)
    assert seen and max(seen) < N_CHARS


def test_attention_is_causal():
    torch.manual_seed(0)
    m = CodeGen2(**TINY).eval()
    a = torch.randint(0, N_CHARS, (1, 20))
    b = a.clone()
    b[0, 12:] = torch.randint(0, N_CHARS, (8,))
    with torch.no_grad():
        la, lb = m(a), m(b)
    assert torch.allclose(la[0, :12], lb[0, :12], atol=1e-6) and not torch.allclose(la[0, 12:], lb[0, 12:])


def test_the_block_is_parallel_not_sequential():
    torch.manual_seed(0)
    block = CodeGen2(**{**TINY, "dim": 32})
    for p in block.parameters():  # weights large enough that the branches matter
        torch.nn.init.normal_(p, std=0.3)
    blk = block.blocks[0]
    x = torch.randn(2, 10, 32)
    with torch.no_grad():
        par = blk(x)
        h = blk.ln(x)
        assert torch.allclose(par, x + blk.attn(h) + blk.mlp(h), atol=1e-5)
        x1 = x + blk.attn(blk.ln(x))
        seq = x1 + blk.mlp(blk.ln(x1))  # a GPT-2 style block with the same weights
    assert (par - seq).abs().max() > 1e-2


def test_rotary_scores_depend_on_offsets_and_spare_the_other_dims():
    from zoo_codegen2.model import rotary

    torch.manual_seed(0)
    q, k = torch.randn(8), torch.randn(8)
    pos = torch.arange(12)
    qs, ks = rotary(q.expand(12, 8), pos), rotary(k.expand(12, 8), pos)
    s = qs @ ks.T
    assert torch.allclose(s[2, 5], s[6, 9], atol=1e-5) and not torch.allclose(s[2, 5], s[2, 6])
    m = CodeGen2(**TINY)
    x = torch.randn(1, 6, 16)
    with torch.no_grad():  # dims past rotary_dim carry no position: equal inputs give equal rows there
        qkv = m.blocks[0].attn.qkv(x.expand(1, 6, 16) * 0 + x[:, :1])
    assert torch.allclose(qkv[0, 0], qkv[0, 5])


# ---------------------------------------------------------------- the converter (offline, scaled down)
def _released_forward(sd, cfg, ids):
    """CodeGenForCausalLM's forward written from its released layout (mp_num=4 blocks of q, v, k)."""
    d, nh, rd = cfg["n_embd"], cfg["n_head"], cfg["rotary_dim"]
    hd, mp = d // nh, 4
    x = sd["transformer.wte.weight"][ids]
    t = ids.shape[1]
    inv = 1.0 / (10000 ** (torch.arange(0, rd, 2).float() / rd))
    ang = torch.arange(t).float()[:, None] * inv
    sin, cos = (a.repeat_interleave(2, -1) for a in (ang.sin(), ang.cos()))

    def rot(v):
        v1, v2 = v[..., ::2], v[..., 1::2]
        return v * cos + torch.stack((-v2, v1), -1).flatten(-2) * sin

    for i in range(cfg["n_layer"]):
        p = f"transformer.h.{i}."
        h = F.layer_norm(x, (d,), sd[p + "ln_1.weight"], sd[p + "ln_1.bias"])
        qkv = (h @ sd[p + "attn.qkv_proj.weight"].T).view(1, t, mp, -1)
        q, v, k = torch.split(qkv, d // mp, dim=-1)
        q, v, k = (z.reshape(1, t, nh, hd).transpose(1, 2) for z in (q, v, k))
        q = torch.cat([rot(q[..., :rd]), q[..., rd:]], -1)
        k = torch.cat([rot(k[..., :rd]), k[..., rd:]], -1)
        w = (q @ k.transpose(-1, -2)) / hd ** 0.5
        w = w.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf")).softmax(-1)
        a = (w @ v).transpose(1, 2).reshape(1, t, d) @ sd[p + "attn.out_proj.weight"].T
        f = F.gelu(h @ sd[p + "mlp.fc_in.weight"].T + sd[p + "mlp.fc_in.bias"], approximate="tanh")
        x = x + a + f @ sd[p + "mlp.fc_out.weight"].T + sd[p + "mlp.fc_out.bias"]
    x = F.layer_norm(x, (d,), sd["transformer.ln_f.weight"], sd["transformer.ln_f.bias"])
    return x @ sd["lm_head.weight"].T + sd["lm_head.bias"]


def test_released_names_convert_to_equal_logits(tmp_path):
    from safetensors.torch import save_file

    cfg = {"activation_function": "gelu_new", "n_embd": 32, "n_head": 8, "n_layer": 2, "rotary_dim": 2,
           "n_positions": 16, "vocab_size": 50, "n_inner": None, "layer_norm_epsilon": 1e-5,
           "tie_word_embeddings": False}
    g = torch.Generator().manual_seed(0)
    r = lambda *s: torch.randn(*s, generator=g) * 0.2  # noqa: E731
    sd = {"transformer.wte.weight": r(50, 32), "transformer.ln_f.weight": 1 + r(32), "transformer.ln_f.bias": r(32),
          "lm_head.weight": r(50, 32), "lm_head.bias": r(50)}
    for i in range(2):
        p = f"transformer.h.{i}."
        sd.update({p + "ln_1.weight": 1 + r(32), p + "ln_1.bias": r(32), p + "attn.qkv_proj.weight": r(96, 32),
                   p + "attn.out_proj.weight": r(32, 32), p + "mlp.fc_in.weight": r(128, 32),
                   p + "mlp.fc_in.bias": r(128), p + "mlp.fc_out.weight": r(32, 128), p + "mlp.fc_out.bias": r(32),
                   p + "attn.causal_mask": torch.ones(16, 16).tril().bool()})
    save_file(sd, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    model = from_official(tmp_path / "model.safetensors")
    ids = torch.randint(0, 50, (1, 9), generator=g)
    with torch.no_grad():
        assert torch.allclose(model(ids), _released_forward(sd, cfg, ids), atol=1e-5)
    w = sd["transformer.h.0.attn.qkv_proj.weight"]
    assert torch.equal(qkv_to_codegen(qkv_from_codegen(w, 8), 8), w) and not torch.equal(qkv_from_codegen(w, 8), w)
    zoo.save_pretrained(model, tmp_path / "zoo")  # the converted model saves as a zoo folder
    with pytest.raises(ValueError, match="allow_pickle"):
        from_official(tmp_path / "pytorch_model.bin")


# ---------------------------------------------------------------- the method against its baseline
def test_left_to_right_batch_equals_the_task_protocol():
    torch.manual_seed(0)
    m = CodeGen2(**TINY).eval()
    rng = np.random.default_rng(0)
    text = "".join(chr(c) for c in rng.integers(32, 127, 400))
    ex = [Infill(text[i:i + 40], "abcdefgh"[: 3 + i % 4], text[i + 50:i + 60]) for i in range(0, 60, 20)]
    assert left_to_right_many(m, ex) == [left_to_right_infill(m, e.prefix, e.suffix, len(e.middle) + 16) for e in ex]


def test_a_short_mixed_run_learns_the_infill_format_a_causal_run_does_not():
    ids = torch.from_numpy(np.tile(np.arange(2, 40), 300))  # a periodic text: spans are predictable from context
    data = (ids, None, None)
    probe = O.mixed_batch(ids.numpy(), 32, 33, np.random.default_rng(9), p_span=1.0)
    losses = {}
    for p in (0.5, 0.0):
        torch.manual_seed(0)
        m = CodeGen2(**TINY)
        O.train(m, steps=60, seed=0, p_span=p, data=data, batch_size=8, lr=1e-2)
        with torch.no_grad():
            logits = m(probe[:, :-1], sentinels=True)
        losses[p] = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), probe[:, 1:].reshape(-1)).item()
    assert losses[0.5] < losses[0.0] - 0.5


def test_converted_weights_give_transformers_codegen_logits():
    """The converter and the forward pass side by side with the package people would otherwise use: a randomly
    initialised ``transformers`` ``CodeGenForCausalLM`` (the architecture of the CodeGen2 releases), its state dict
    converted by ``from_hf_names``, gives the same logits here (no checkpoint downloaded: the weights are random)."""
    transformers = pytest.importorskip("transformers")
    from zoo_codegen2.hub import config_from_hf, from_hf_names

    cfg = transformers.CodeGenConfig(vocab_size=120, n_positions=64, n_ctx=64, n_embd=64, n_layer=2, n_head=8,
                                     rotary_dim=4, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                                     tie_word_embeddings=False, bos_token_id=0, eos_token_id=0)
    torch.manual_seed(0)
    hf = transformers.CodeGenForCausalLM(cfg).eval()
    with torch.no_grad():
        for p in hf.parameters():
            p.normal_(0, 0.2)  # larger than the default init, so every block matters to the logits
    args = config_from_hf(cfg.to_dict())
    ours = CodeGen2(**args).eval()
    ours.load_state_dict(from_hf_names(hf.state_dict(), args["heads"]), strict=True)
    ids = torch.randint(0, 120, (2, 20))
    with torch.no_grad():
        want, got = hf(ids).logits, ours(ids, sentinels=True)
    assert want.abs().max() > 0.5
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
