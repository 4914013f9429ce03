"""vqtoken: the conformance kit, the token hash keeps positions, the adaptive K follows content diversity, and
VQToken's decoded grid is far closer to the video than random pruning's at the same budget."""
from __future__ import annotations

import pytest
import torch

from zoo.testing import check_plugin
from zoo_task_video_tokens import data
from zoo_task_video_tokens.baselines import KMeans, RandomPrune
from zoo_vqtoken.model import VQToken, elbow, tokdense, vqtoken


def test_conformance(hub):
    check_plugin("vqtoken")


def _layout_video(c: int, seed: int = 0, noise: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    """A (1, 8, 36, 16) video whose token at each position is one of ``c`` unit vectors, in a random layout."""
    g = torch.Generator().manual_seed(seed)
    types = torch.nn.functional.normalize(torch.randn(c, 16, generator=g), dim=1)
    layout = torch.randint(0, c, (1, 8, 36), generator=g)
    layout.view(-1)[:c] = torch.arange(c)  # every type appears
    return types[layout] + noise * torch.randn(1, 8, 36, 16, generator=g), layout


def test_token_hash_keeps_positions():
    x, layout = _layout_video(5)
    torch.manual_seed(0)
    codebook, index_map = vqtoken(mode="fixed", k=5).compress(x)
    grid, kept = data.decode(codebook, index_map)
    assert bool(kept.all()) and torch.allclose(grid, x, atol=1e-6)  # decoding the hash reproduces every frame
    # the index map is the layout up to renaming the codes
    assert len(set(zip(index_map.flatten().tolist(), layout.flatten().tolist(), strict=True))) == 5
    # a moving digit: the decoded frames put the digit's tokens where the walk put the digit
    v = data.videos(0)
    tok = data.tokens(v.frames[:4])
    grid, _ = data.decode(*vqtoken(mode="fixed", k=8).compress(tok))
    background = data.tokens(torch.zeros(1, 1, data.CANVAS, data.CANVAS))[0, 0, 0]
    bg = torch.nn.functional.normalize(background, dim=0)
    ink = (grid - bg).norm(dim=-1) > 0.05  # (4, 8, 36): cells whose code is not the background's
    for i in range(4):
        for t in range(8):
            r, c = v.offsets[i, t].tolist()
            rows, cols = torch.nonzero(ink[i, t].reshape(6, 6), as_tuple=True)
            assert int(rows.min()) >= r // 2 and int(rows.max()) <= (r + 7) // 2
            assert int(cols.min()) >= c // 2 and int(cols.max()) <= (c + 7) // 2


def test_adaptive_k_grows_with_content_diversity():
    vq = VQToken(mode="adaptive", k_min=2, k_max=14)
    ks = []
    for c in (3, 6, 10):
        torch.manual_seed(0)
        _, index_map = vq.compress(_layout_video(c, seed=c, noise=0.02)[0])
        ks.append(int(data.token_counts(index_map)[0]))
    assert ks == [3, 6, 10]
    torch.manual_seed(0)
    fixed = [int(data.token_counts(KMeans(k=6).compress(_layout_video(c, seed=c)[0])[1])[0]) for c in (3, 10)]
    assert fixed[1] == 6  # the fixed-K baseline does not adapt
    assert elbow(torch.tensor([[9.0, 8.0, 7.0]]), k_min=5).tolist() == [6]
    with pytest.raises(ValueError, match="mode"):
        VQToken(mode="auto")


def test_codebook_reconstructs_the_video_better_than_random_pruning_at_the_same_budget():
    v = data.videos(0)
    tok = data.tokens(v.frames[v.test[:150]])
    unit = torch.nn.functional.normalize(tok, dim=-1)
    torch.manual_seed(0)
    cb, im = vqtoken().compress(tok)
    k = round(float(data.token_counts(im).double().mean()))
    assert 4 <= k <= 14 and int(data.token_counts(im).max()) <= 14  # under 5% of the 288 tokens
    err_vq = (data.decode(cb, im)[0] - unit).norm(dim=-1).mean()
    err_rand = (data.decode(*RandomPrune(k=k).compress(unit))[0] - unit).norm(dim=-1).mean()
    assert err_vq < err_rand / 4
    assert tokdense(0.9, 10.0) == pytest.approx(0.09)


@pytest.mark.slow
def test_quick_reproduction_classifier_keeps_accuracy_where_random_pruning_loses_it():
    from zoo_task_video_tokens import task

    v = data.videos(0)
    idx = torch.cat([v.train[:240], v.test[:120]])
    tok = data.tokens(v.frames[idx])
    labels, train, test = v.labels[idx], torch.arange(240), torch.arange(240, 360)
    grids, counts = task.compress_all(vqtoken(), tok)
    k = round(float(counts.double().mean()))
    acc_vq = task.train_classifier(grids, labels, train, test, seed=0, steps=80)
    torch.manual_seed(0)
    acc_rand = task.train_classifier(task.compress_all(RandomPrune(k=k), tok)[0], labels, train, test, seed=0, steps=80)
    assert k <= 14 and acc_vq > acc_rand + 0.15
