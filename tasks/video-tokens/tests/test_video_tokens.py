"""video_tokens: seeded videos of real digits, the decode/count rules, the baselines' exact cases, and the contract."""
from __future__ import annotations

import pytest
import torch

from zoo_task_video_tokens import data, task
from zoo_task_video_tokens.baselines import FullTokens, KMeans, RandomPrune, TemporalPool, build_baseline, kmeans


def test_videos_are_seeded_walks_of_the_digit():
    a, b = data.videos(3), data.videos(3)
    assert torch.equal(a.frames, b.frames) and torch.equal(a.train, b.train)
    assert not torch.equal(a.offsets, data.videos(4).offsets)
    steps = a.offsets[:, 1:] - a.offsets[:, :-1]
    assert int(steps.abs().max()) == 1 and int(a.offsets.min()) == 0 and int(a.offsets.max()) == data.CANVAS - data.DIGIT
    images, labels = data._digits()
    i, t = 17, 5
    r, c = a.offsets[i, t].tolist()
    assert torch.equal(a.frames[i, t, r:r + 8, c:c + 8], torch.from_numpy(images[i]))
    assert float(a.frames[i, t].sum()) == pytest.approx(float(images[i].sum()))  # nothing else on the canvas
    assert len(a.test) == 599 and not set(a.test.tolist()) & set(a.train.tolist())
    assert abs(float((a.labels[a.test] == 3).double().mean()) - 0.1) < 0.02  # stratified


def test_decode_and_counts_of_the_baselines():
    x = torch.randn(3, 8, 36, 16)
    grid, kept = data.decode(*FullTokens().compress(x))
    assert torch.equal(grid, x) and bool(kept.all())
    assert data.token_counts(FullTokens().compress(x)[1]).tolist() == [288] * 3
    cb, im = RandomPrune(k=10).compress(x)
    grid, kept = data.decode(cb, im)
    assert data.token_counts(im).tolist() == [10] * 3 and kept.sum(dim=(1, 2)).tolist() == [10] * 3
    assert torch.equal(grid[kept], x[kept]) and not grid[~kept].any()  # kept tokens stay where they were
    cb, im = TemporalPool(window=4).compress(x)
    grid, _ = data.decode(cb, im)
    assert cb.shape == (3, 72, 16) and torch.allclose(grid[:, 5], x[:, 4:8].mean(1))
    with pytest.raises(ValueError, match="choose from"):
        build_baseline("pca")


def test_kmeans_finds_separated_clusters_and_distortion_falls():
    torch.manual_seed(0)
    centres = torch.randn(4, 8) * 10
    truth = torch.arange(200) % 4
    x = (centres[truth] + 0.01 * torch.randn(200, 8))[None]
    labels, cent, dist = kmeans(x, 4)
    assert len(set(zip(labels[0].tolist(), truth.tolist(), strict=True))) == 4  # a bijection with the truth
    assert [float(kmeans(x, k)[2]) for k in (2, 4)][1] < float(kmeans(x, 2)[2]) / 100
    cb, im = KMeans(k=4).compress(x.reshape(1, 8, 25, 8))
    assert data.token_counts(im).tolist() == [4]


def test_evaluate_scores_token_ratio_and_checks_the_contract():
    r = task.evaluate(RandomPrune(k=20), steps=2, n_train=64, baselines=["temporal_pool"])
    assert r.metrics["tokens"] == 20 and r.metrics["token_ratio"] == pytest.approx(20 / 288)
    assert r.metrics["tokdense"] == pytest.approx(r.metrics["accuracy"] / 20)
    assert r.baselines["temporal_pool"]["token_ratio"] == pytest.approx(1 / 8)

    class Broken(FullTokens):
        def compress(self, tokens):
            return tokens.mean(1), torch.zeros(tokens.shape[:3])  # float index map

    with pytest.raises(TypeError, match="index_map"):
        task.evaluate(Broken(), steps=1, n_train=8, baselines=[])
    with pytest.raises(ValueError, match="classify"):
        task.evaluate(FullTokens(), mode="qa", baselines=[])
    assert task.describe()["classify"]["steps"] == task.DEFAULT_STEPS
