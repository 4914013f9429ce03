"""glyph-frozen-embed: the conformance kit, and what tells a frozen glyph table from a trained or random one."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import zoo
from zoo.task import count_params
from zoo.testing import check_plugin
from zoo_glyph_frozen_embed.model import (
    CPU,
    PAPER,
    FrozenEmbedding,
    glyph_gpt,
    glyph_table,
    glyph_text,
    pca_project,
    render_glyphs,
)
from zoo_task_char_lm import task as char_lm

TINY = {"dim": 32, "depth": 1, "heads": 2, "block_size": 16}


def test_conformance(hub):
    check_plugin("glyph-frozen-embed", overrides={"glyph_gpt": TINY})


def test_presets_and_overrides():
    m = glyph_gpt()
    assert m.arch["dim"] == CPU["dim"] and m.arch["depth"] == CPU["depth"] and m.vocab_size == char_lm.VOCAB_SIZE
    assert PAPER["dim"] == 1024 and PAPER["depth"] == 16 and PAPER["heads"] == 32
    assert glyph_gpt(dim=32, heads=2).tok.weight.shape == (97, 32)
    with pytest.raises(ValueError, match="preset"):
        glyph_gpt(preset="huge")
    with pytest.raises(ValueError, match="embedding"):
        glyph_gpt(embedding="learned")


@pytest.fixture(scope="module")
def data():
    return char_lm.load_corpus(max_chars=30_000)


def test_the_table_is_frozen_through_an_optimiser_step(data):
    torch.manual_seed(0)
    model = glyph_gpt(**TINY)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    assert not model.tok.weight.requires_grad and isinstance(model.tok, FrozenEmbedding)
    assert count_params(model) == count_params(glyph_gpt(**TINY, embedding="trainable")) - 97 * 32
    char_lm.train(model, data, steps=2, batch_size=4, lr=1e-2)
    after = model.state_dict()
    assert torch.equal(after["tok.weight"], before["tok.weight"]) and model.tok.weight.grad is None
    assert not torch.equal(after["pos.weight"], before["pos.weight"])  # the rest of the network did train
    trainable = glyph_gpt(**TINY, embedding="trainable")
    w0 = trainable.tok.weight.detach().clone()
    char_lm.train(trainable, data, steps=2, batch_size=4, lr=1e-2)
    assert not torch.equal(trainable.tok.weight, w0)  # the paper's comparison model does learn its table


def test_rows_are_the_pca_projection_of_the_rendered_glyphs():
    model = glyph_gpt(**TINY)
    bitmaps = render_glyphs(char_lm.VOCAB)
    assert bitmaps.shape == (97, 256) and set(np.unique(bitmaps)) <= {0.0, 1.0}
    assert torch.allclose(model.tok.weight, torch.from_numpy(pca_project(bitmaps, 32)))
    assert torch.allclose(model.tok.weight.norm(dim=1), torch.ones(97))
    # with all the components kept, PCA is a rotation of the centred bitmaps: the table's cosines are theirs
    full = glyph_table(char_lm.VOCAB, 128).double()
    assert torch.all(full[:, 96:] == 0)  # 97 centred bitmaps have at most 96 components
    x = torch.from_numpy(bitmaps).double()
    x = x - x.mean(0)
    x = x / x.norm(dim=1, keepdim=True)
    assert torch.allclose(full @ full.T, x @ x.T, atol=1e-5)


def test_different_glyphs_differ_and_similar_ones_are_close():
    table = glyph_table(char_lm.VOCAB, 64)
    cos = table @ table.T
    off = cos[~torch.eye(97, dtype=torch.bool)]
    assert off.max() < 0.999  # 97 distinct rows: every character, "\n" and "\x00" included, has its own vector
    # the table is visual: its cosines follow the glyphs' pixel overlap (IoU); a random table's do not
    bits = render_glyphs(char_lm.VOCAB) > 0.5
    inter = (bits[:, None] & bits[None]).sum(-1)
    union = (bits[:, None] | bits[None]).sum(-1)
    iou = np.where(union > 0, inter / np.maximum(union, 1), 0.0)
    mask = ~np.eye(97, dtype=bool)
    assert np.corrcoef(cos.numpy()[mask], iou[mask])[0, 1] > 0.5
    torch.manual_seed(0)
    rnd = FrozenEmbedding(char_lm.VOCAB, 64, kind="random").weight
    assert abs(np.corrcoef((rnd @ rnd.T).numpy()[mask], iou[mask])[0, 1]) < 0.2
    i = {c: k for k, c in enumerate(char_lm.VOCAB)}
    assert cos[i["O"], i["0"]] > cos[i["O"], i["."]] and cos[i["l"], i["1"]] > cos[i["l"], i["m"]]


def test_control_characters_are_drawn_in_caret_notation():
    assert glyph_text("\n") == "^J" and glyph_text("\x00") == "^@" and glyph_text("~") == "~"
    with pytest.raises(ValueError, match="Latin-1"):
        glyph_text("\u4e2d")


def test_saves_and_reloads_the_frozen_table(tmp_path):
    model = zoo.create("glyph_gpt", **TINY)
    zoo.save_pretrained(model, tmp_path / "g")
    again = zoo.create(f"local-dir:{tmp_path / 'g'}", pretrained=True)
    assert torch.equal(again.tok.weight, model.tok.weight) and not again.tok.weight.requires_grad


def test_quick_reproduction_runs():
    from zoo.claims import run_claim
    from zoo_glyph_frozen_embed.reproduce import MARGIN, REPRODUCTION

    assert len(REPRODUCTION.seeds) >= 3 and MARGIN == -char_lm.CLAIM_SEED_SPREAD_BPC
    res = run_claim(REPRODUCTION, quick=True)
    g, t, r = (res.rows[k]["val_bpc"]["mean"] for k in ("glyph_gpt", "trainable", "frozen_random"))
    assert len({g, t, r}) == 3 and res.rows["glyph_gpt"]["params"]["mean"] < res.rows["trainable"]["params"]["mean"]
    assert res.verdict in ("reproduced", "not reproduced", "inconclusive")


def test_the_shipped_stdlib_tag_loads_offline_with_its_glyph_table():
    model = zoo.create("glyph_gpt.stdlib")
    assert model.zoo.pretrained and model.zoo.source == "package"  # the shipped snapshot, no network
    assert torch.equal(model.tok.weight, glyph_table(char_lm.VOCAB, CPU["dim"]))  # training left the table as built
    assert not model.tok.weight.requires_grad
    _, val, _ = char_lm.load_corpus(max_chars=200_000)
    assert char_lm.val_loss(model, val, max_windows=40) < 3.0 < char_lm.val_loss(glyph_gpt(), val, max_windows=40)
