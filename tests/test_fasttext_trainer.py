"""zoo_nn.fasttext: fastText's n-grams and hash, and the subword skip-gram trainer (both backends, what it learns)."""
import numpy as np
import pytest

from zoo_nn import fasttext as ft
from zoo_nn import skipgram as sg

needs_numba = pytest.mark.skipif(not sg.HAVE_NUMBA, reason="numba not installed")

# FNV-1a 32-bit test vectors (the FNV reference's), and the fastText tool's values for non-ASCII bytes, where it
# XORs each byte as a signed char (gensim's ft_hash_bytes, written to be compatible with the tool, gives these)
KNOWN = {"": 0x811C9DC5, "a": 0xE40C292C, "foobar": 0xBF9CF968, "<wh": 1048167652, "where>": 4012121234,
         "é": 1023043777, "<naïve>": 476539069}


def _standard_fnv1a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def test_hash_is_fasttexts_fnv1a():
    for s, h in KNOWN.items():
        assert ft.fnv1a(s.encode("utf-8")) == h, s
    # ASCII: the standard FNV-1a; UTF-8 bytes >= 0x80: the tool's sign-extended variant, not the standard one
    assert ft.fnv1a(b"subword") == _standard_fnv1a(b"subword")
    assert ft.fnv1a("é".encode()) != _standard_fnv1a("é".encode())


def test_hash_matches_gensims_fasttext_compatible_hash():
    inner = pytest.importorskip("gensim.models.fasttext_inner")
    for s in ("<naïve>", "日本語", "über>", "<where>", "x"):
        assert ft.fnv1a(s.encode("utf-8")) == inner.ft_hash_bytes(s.encode("utf-8"))


def test_character_ngrams_of_the_paper():
    # §3.2's example: "where", n = 3 -> <wh, whe, her, ere, re>; the special sequence <where> is one more n-gram
    assert ft.char_ngrams("where", 3, 3) == ["<wh", "whe", "her", "ere", "re>"]
    grams = ft.char_ngrams("where", 3, 6)
    assert "<where" in grams and "<where>" not in grams  # 7 characters > maxn
    assert "<her>" in ft.char_ngrams("her", 3, 6)  # a short word's whole bracketed form is an n-gram
    assert len(grams) == len(set(grams)) == 5 + 4 + 3 + 2
    assert ft.char_ngrams("naïve", 3, 3)[1] == "naï"  # characters, not UTF-8 bytes


def test_subword_rows_are_the_word_then_hashed_ngrams():
    rows = ft.subword_rows("where", 7, 1000, word_id=3)
    want = [3] + [7 + ft.fnv1a(g.encode()) % 1000 for g in ft.char_ngrams("where")]
    assert rows.tolist() == want
    assert ft.subword_rows("where", 7, 1000).tolist() == want[1:]  # unseen: n-grams only
    ids, off = ft.subword_table(["where", "her"], 1000)
    assert ids[off[0]:off[1]].tolist() == ft.subword_rows("where", 2, 1000, word_id=0).tolist()


def _random_corpus(n=200, vocab=30, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, vocab, size=rng.integers(3, 12)) for _ in range(n)]


WORDS = [f"w{i}x" for i in range(30)]


@needs_numba
@pytest.mark.parametrize("combine", ["mean", "sum"])
def test_numba_and_numpy_backends_run_the_same_loop(combine):
    sents, table = _random_corpus(), ft.subword_table(WORDS, 97)
    kw = {"dim": 16, "epochs": 2, "sample": 1e-2, "seed": 3, "combine": combine, "lr": 0.02}
    a, b = ft.train(sents, table, 30, 97, backend="numba", **kw), ft.train(sents, table, 30, 97, backend="numpy", **kw)
    assert a.predictions == b.predictions and a.words == b.words == 2 * sum(map(len, sents))
    assert np.abs(a.input_matrix - b.input_matrix).max() < 1e-4
    assert np.abs(a.output_vectors - b.output_vectors).max() < 1e-4
    assert np.allclose(a.epoch_loss, b.epoch_loss, rtol=1e-5)


def test_seed_fixes_the_result_and_initialisation_is_fasttexts():
    sents, table = _random_corpus(), ft.subword_table(WORDS, 50)
    a, b, c = (ft.train(sents, table, 30, 50, dim=8, epochs=1, seed=s) for s in (1, 1, 2))
    assert np.array_equal(a.input_matrix, b.input_matrix) and not np.array_equal(a.input_matrix, c.input_matrix)
    init = ft.train(sents, table, 30, 50, dim=40, epochs=0, seed=0)
    assert np.abs(init.input_matrix).max() <= 1 / 40 and init.input_matrix.std() > 0.4 / 40  # uniform in +-1/d
    assert not init.output_vectors.any()


def test_every_ngram_row_of_a_word_gets_the_same_update():
    # one update: the centre word's rows all receive the same gradient (the tool's update), its other rows none
    table = ft.subword_table(["ab", "cd"], 1000)
    out0 = ft.train([[0, 1]], table, 2, 1000, dim=4, window=1, negative=0, sample=0, epochs=0, seed=0)
    out1 = ft.train([[0, 1]], table, 2, 1000, dim=4, window=1, negative=0, sample=0, epochs=1, seed=0)
    # zero output vectors: the first update moves only the output rows; a second epoch moves the input rows
    out2 = ft.train([[0, 1]], table, 2, 1000, dim=4, window=1, negative=0, sample=0, epochs=2, seed=0)
    assert np.array_equal(out0.input_matrix, out1.input_matrix)
    delta = out2.input_matrix - out0.input_matrix
    moved = np.flatnonzero(np.abs(delta).sum(1))
    rows_ab, rows_cd = (set(table[0][table[1][i]:table[1][i + 1]].tolist()) for i in (0, 1))
    assert set(moved.tolist()) <= rows_ab | rows_cd and rows_ab <= set(moved.tolist())
    first = delta[table[0][table[1][0]]]
    for r in rows_ab - rows_cd:
        assert np.allclose(delta[r], first)


def test_dynamic_window_and_loss_decrease():
    sent = np.arange(20000) % 1000
    words = [f"t{i}" for i in range(1000)]
    out = ft.train([sent], ft.subword_table(words, 500), 1000, 500, dim=4, window=5, negative=1, sample=0, epochs=1)
    assert abs(out.predictions / len(sent) - 6.0) < 0.05  # (w + 1) contexts per word, as word2vec
    rng = np.random.default_rng(0)
    topics = [rng.integers(0, 20, 8) + 20 * (i % 2) for i in range(2000)]
    out = ft.train(topics, ft.subword_table(WORDS + [f"v{i}y" for i in range(10)], 200), 40, 200, dim=16,
                   epochs=3, sample=0)
    # zero output vectors start every prediction at log 2 for the target and each of 5 negatives
    assert out.epoch_loss[0] < 6 * np.log(2) - 1.0 and out.epoch_loss[-1] < out.epoch_loss[0] - 0.02


def test_bad_arguments_are_named():
    table = ft.subword_table(WORDS[:3], 10)
    with pytest.raises(ValueError, match="combine"):
        ft.train([[0, 1]], table, 3, 10, combine="max")
    with pytest.raises(ValueError, match="subword table has 3 words"):
        ft.train([[0, 1]], table, 4, 10)
