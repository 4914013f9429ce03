"""zoo_nn.skipgram: word2vec's skip-gram / CBOW trainer (both backends, the sampling tables, what it learns)."""
import numpy as np
import pytest

from zoo_nn import skipgram as sg

needs_numba = pytest.mark.skipif(not sg.HAVE_NUMBA, reason="numba not installed")


def _random_corpus(n=200, vocab=30, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, vocab, size=rng.integers(3, 12)) for _ in range(n)]


@needs_numba
@pytest.mark.parametrize("cbow", [False, True])
def test_numba_and_numpy_backends_run_the_same_loop(cbow):
    sents = _random_corpus()
    kw = {"dim": 16, "epochs": 2, "sample": 1e-2, "cbow": cbow, "seed": 3}
    a, b = sg.train(sents, 30, backend="numba", **kw), sg.train(sents, 30, backend="numpy", **kw)
    # the same random stream: the same subsampling, windows and negatives, so the same predictions
    assert a.predictions == b.predictions and a.words == b.words == 2 * sum(map(len, sents))
    assert np.abs(a.input_vectors - b.input_vectors).max() < 1e-5
    assert np.abs(a.output_vectors - b.output_vectors).max() < 1e-5
    assert np.allclose(a.epoch_loss, b.epoch_loss, rtol=1e-6)


def test_seed_fixes_the_result_and_another_seed_changes_it():
    sents = _random_corpus()
    a, b, c = (sg.train(sents, 30, dim=8, epochs=1, seed=s) for s in (1, 1, 2))
    assert np.array_equal(a.input_vectors, b.input_vectors)
    assert not np.array_equal(a.input_vectors, c.input_vectors)


def test_initialisation_is_word2vecs():
    out = sg.train(_random_corpus(), 30, dim=50, epochs=0, seed=0)
    assert np.abs(out.input_vectors).max() <= 0.5 / 50 and out.input_vectors.std() > 0.2 / 50
    assert not out.output_vectors.any()


def _topics(n=3000, seed=0):
    # two topics of 20 words; each sentence draws from one topic only
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 20, 8) + 20 * (i % 2) for i in range(n)]


@pytest.mark.parametrize("cbow", [False, True])
def test_loss_decreases(cbow):
    out = sg.train(_topics(), 40, dim=16, epochs=4, sample=0, cbow=cbow, seed=0)
    # zero output vectors start every prediction at -log s(0) = log 2 for the word and each of 5 negatives
    assert out.epoch_loss[0] < 6 * np.log(2) - 1.0
    assert out.epoch_loss[-1] < out.epoch_loss[0] - 0.1


def test_dynamic_window_samples_near_words_more():
    # one long sentence of distinct words: a centre with reduced window w - b has 2 (w - b) contexts,
    # b uniform in [0, w): (w + 1) per word on average; a fixed window would give 2 w
    sent = np.arange(20000) % 1000
    out = sg.train([sent], 1000, dim=4, window=5, negative=1, sample=0, epochs=1, seed=0)
    assert abs(out.predictions / len(sent) - 6.0) < 0.05


def test_cbow_makes_one_prediction_per_window():
    sent = np.arange(5000) % 500
    out = sg.train([sent], 500, dim=4, window=3, sample=0, epochs=1, cbow=True, seed=0)
    assert out.predictions == len(sent)


def test_negative_table_is_unigram_to_the_three_quarters():
    counts = np.array([1000, 100, 10, 1, 0, 50])
    table = sg.unigram_table(counts)
    want = counts ** 0.75 / (counts ** 0.75).sum()
    assert np.allclose(np.diff(np.r_[0, table]) / table[-1], want, atol=1e-8)
    # drawn through word2vec's random stream, the frequencies follow it; an unseen word is never drawn
    state, draws = 1, []
    for _ in range(60000):
        state = (state * sg.LCG_MUL + sg.LCG_ADD) & ((1 << 64) - 1)
        draws.append(sg.draw_negative(table, state))
    freq = np.bincount(draws, minlength=len(counts)) / len(draws)
    assert freq[4] == 0 and np.abs(freq - want).max() < 0.01


def test_subsampling_follows_word2vec_c_formula():
    counts = np.array([10_000, 1000, 10, 1])
    t = 1e-3 * counts.sum()
    keep = sg.keep_probability(counts, 1e-3)
    assert np.allclose(keep[:2], (np.sqrt(counts[:2] / t) + 1) * t / counts[:2])
    assert keep[2] == keep[3] == 1.0 and np.all(np.diff(keep) >= 0)
    assert np.all(sg.keep_probability(counts, 0) == 1)
    # in the loop: a corpus that is 90% one word keeps that word's share of positions as predicted
    rng = np.random.default_rng(0)
    sent = np.where(rng.random(50000) < 0.9, 0, rng.integers(1, 2000, 50000))
    c = np.bincount(sent, minlength=2000)
    k = sg.keep_probability(c, 1e-3)
    out = sg.train([sent], 2000, dim=4, window=1, negative=0, sample=1e-3, epochs=1, cbow=True, seed=0)
    assert abs(out.predictions - (c * k).sum()) < 0.03 * (c * k).sum()  # CBOW: one prediction per kept word


def test_cooccurring_words_end_up_closer():
    # two topics of 20 words; sentences draw from one topic only: same-topic pairs must be nearer
    sents = _topics()
    for cbow in (False, True):
        x = sg.train(sents, 40, dim=20, epochs=3, sample=0, cbow=cbow, seed=0).input_vectors
        x = x / np.linalg.norm(x, axis=1, keepdims=True)
        cos = x @ x.T
        topic = np.equal.outer(np.arange(40) // 20, np.arange(40) // 20)
        same, other = topic & ~np.eye(40, dtype=bool), ~topic
        assert cos[same].mean() > cos[other].mean() + 0.5
        assert cos[same].min() > cos[other].max()  # every same-topic pair nearer than every cross-topic pair


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="outside the vocabulary"):
        sg.train([[0, 5]], 3)
    with pytest.raises(ValueError, match="window"):
        sg.train([[0, 1]], 3, window=0)
    with pytest.raises(ValueError, match="backend"):
        sg.train([[0, 1]], 3, backend="cuda")


@needs_numba
def test_the_compiled_loop_is_cached_once_across_processes(tmp_path):
    # a jitted function built inside another function was compiled afresh (~2 s) in every process and added one
    # more cache file each time; the module-level one is compiled once and found again by the next process
    import os
    import subprocess
    import sys

    code = ("import numpy as np; from zoo_nn import skipgram; "
            "skipgram.train([np.array([0, 1, 2, 3])] * 10, 4, dim=8, epochs=1, sample=0, seed=0)")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    for _ in range(2):
        subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=300)
    entries = sorted(p.name for p in tmp_path.rglob("*.nbc"))
    assert len([e for e in entries if "epoch" in e]) == 1, entries
