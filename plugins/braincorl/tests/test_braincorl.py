"""braincorl: the conformance kit, order invariance of the context, the hyperweight readout, and a short meta-train
that learns a prior ridge cannot have (few shots) while still using more shots."""
from __future__ import annotations

import pytest
import torch

from zoo.testing import check_plugin
from zoo_braincorl.model import CPU, PAPER, BraInCoRL, braincorl
from zoo_task_voxel_encode import data, task
from zoo_task_voxel_encode.baselines import RidgeCV

TINY = {"width": 16, "depth": 1, "heads": 2, "ffn_hidden": 16}


def test_conformance(hub):
    check_plugin("braincorl", overrides={"braincorl": TINY})


def test_presets_and_errors():
    assert braincorl().blocks[0].attn.embed_dim == CPU["width"] and len(braincorl().blocks) == CPU["depth"]
    paper = braincorl(preset="paper", depth=1)  # the paper's CLIP configuration, one layer to stay small
    assert paper.n_features == 512 and paper.registers.shape == (1, 4, 560) and paper.blocks[0].attn.num_heads == 10
    assert PAPER["depth"] == 20
    with pytest.raises(ValueError, match="preset"):
        braincorl(preset="huge")
    with pytest.raises(ValueError, match="n_features=8"):
        braincorl(**TINY)(torch.randn(1, 3, 8), torch.randn(1, 3), torch.randn(1, 2, 8))


def test_context_order_does_not_matter_and_queries_are_read_out_linearly():
    torch.manual_seed(0)
    m = BraInCoRL(n_features=6, **TINY).eval()
    x, y, q = torch.randn(3, 9, 6), torch.randn(3, 9), torch.randn(3, 5, 6)
    perm = torch.randperm(9)
    with torch.no_grad():
        out = m(x, y, q)
        assert torch.allclose(out, m(x[:, perm], y[:, perm], q), atol=1e-5)  # no positional encoding, no mask
        assert not torch.allclose(out, m(x, y[:, perm], q), atol=1e-3)  # but it does pair features with responses
        wb = m.hyperweights(x, y)
        assert wb.shape == (3, 7)
        assert torch.allclose(out, torch.einsum("bqf,bf->bq", q, wb[:, :6]) + wb[:, 6:], atol=1e-5)
        # queries never enter the transformer: each query's prediction is independent of the others
        assert torch.allclose(m(x, y, q[:, :1]), out[:, :1], atol=1e-5)


def _subspace_split(seed: int = 0, n_feat: int = 8) -> data.Split:
    """Voxels whose weights all lie along one shared direction (random scale and sign): a prior a meta-learner can
    learn from other voxels and per-voxel ridge cannot use."""
    g = torch.Generator().manual_seed(seed)
    feats = torch.randn(400, n_feat, generator=g)
    u = torch.randn(n_feat, generator=g)

    def vox(n):
        w = torch.randn(n, 1, generator=g) * u
        clean = feats @ w.T
        clean = ((clean - clean.mean(0)) / clean.std(0)).T.contiguous()
        return data.VoxelSet(clean + 0.3 * torch.randn(clean.shape, generator=g), clean, w, torch.zeros(n, 1).long())

    return data.Split(feats[:300], feats[300:], vox(300), vox(40), 300)


def test_short_meta_train_learns_the_voxel_prior_and_uses_more_shots():
    torch.manual_seed(0)
    sp = _subspace_split()
    m = BraInCoRL(n_features=8, width=32, depth=1, heads=2, ffn_hidden=32)
    before = task.score(m, sp, task.context_draws(sp, (3,), 1, seed=0))["r_c3"]
    fig = task.meta_train(m, sp, steps=250, budget_s=None, seed=0, batch=32, n_query=20, min_context=2,
                          max_context=30, lr=3e-3)
    draws = task.context_draws(sp, (3, 30), 2, seed=1)
    after, ridge = task.score(m, sp, draws), task.score(RidgeCV(), sp, draws)
    assert fig["steps"] == 250 and after["r_c3"] > before + 0.3
    assert after["r_c3"] > ridge["r_c3"] + 0.1  # 3 shots in 8 dimensions: ridge has no prior to lean on
    assert after["r_c30"] > after["r_c3"]  # and the context keeps helping
