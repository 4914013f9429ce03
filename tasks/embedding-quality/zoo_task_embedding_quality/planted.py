"""Planted corpora of the ``embedding_quality`` task: text generated in code with a known truth.

Every word is a random pronounceable string (consonant-vowel syllables drawn from the seed), so no
model can lean on English it has seen elsewhere; only the morphology corpus builds words from parts.

* :func:`morphology` (fastText, catalog entry 65): stems x suffixes. Each stem belongs to a topic and
  has private collocates; a sentence holds one stem+suffix word, the suffix's marker word, two of the
  stem's collocates and three topic words, shuffled. One suffixed form per stem never occurs (the OOV
  words). Truth: same stem > same topic > unrelated.
* :func:`analogy` (word2vec, entry 110): entity words for every role x gender x number cell; contexts
  carry the role (its activity words), the gender (pronoun) and the number (agreeing verb). Questions
  a : b :: c : d change gender (semantic) or number (syntactic) between two entities of other roles.
* :func:`polysemy` (ELMo, entry 77): ambiguous words with two senses, each sense tied to a topic;
  the sentence's topic words tell the sense. Truth: the sense of each test occurrence.
* :func:`svo` (concrete sentence spaces, entry 76): subject-verb-object sentences where an ambiguous
  verb's sense is set by its object; landmark verbs have one sense. Truth: a landmark matches the
  sense of "subject verb object" (1) or not (0).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .data import TextCorpus

__all__ = ["Morphology", "Analogy", "Polysemy", "SVO", "morphology", "analogy", "polysemy", "svo", "PLANTED", "SUFFIXES"]

_CONSONANTS = "bcdfghjklmnprstvz"
_VOWELS = "aeiou"
SUFFIXES = ("", "s", "ed", "ing", "er")


def _words(rng: np.random.Generator, n: int, syllables: tuple[int, int], taken: set[str]) -> list[str]:
    """``n`` new distinct CV-syllable strings (``taken`` is updated)."""
    out = []
    while len(out) < n:
        k = int(rng.integers(syllables[0], syllables[1] + 1))
        w = "".join(_CONSONANTS[rng.integers(len(_CONSONANTS))] + _VOWELS[rng.integers(len(_VOWELS))] for _ in range(k))
        w += _CONSONANTS[rng.integers(len(_CONSONANTS))]  # a closing consonant: suffixes attach to a coda
        if w not in taken:
            taken.add(w)
            out.append(w)
    return out


def _corpus(name: str, sentences: list[list[str]], info: dict[str, Any]) -> TextCorpus:
    # planted documents are single sentences: doc_of counts up
    return TextCorpus(name, sentences, list(range(len(sentences))), [" ".join(s) for s in sentences],
                      {**info, "sentences": len(sentences), "tokens": sum(map(len, sentences))})


@dataclass(frozen=True)
class Morphology:
    corpus: TextCorpus
    words: list[str]  # every stem+suffix word in the corpus
    oov: list[str]  # held-out stem+suffix words (never in the corpus)
    stem_of: dict[str, str]
    topic_of: dict[str, int]  # word -> topic of its stem
    info: dict[str, Any] = field(default_factory=dict)

    def truth(self, a: str, b: str) -> float:
        """Planted similarity: 2 for the same stem, 1 for the same topic, 0 otherwise."""
        return 2.0 if self.stem_of[a] == self.stem_of[b] else float(self.topic_of[a] == self.topic_of[b])


def morphology(*, seed: int = 0, n_topics: int = 8, stems_per_topic: int = 10, topic_words: int = 20,
               collocates: int = 3, sentences: int = 20_000) -> Morphology:
    """The stem x suffix corpus (module docstring): with the defaults 80 stems, 320 corpus words, 80 OOV words.

    >>> m = morphology(sentences=100); len(m.words), len(m.oov), m.oov[0] in m.corpus.counts()
    (320, 80, False)
    """
    rng = np.random.default_rng(seed)
    taken: set[str] = set()
    stems = _words(rng, n_topics * stems_per_topic, (2, 3), taken)
    topic_vocab = [_words(rng, topic_words, (2, 3), taken) for _ in range(n_topics)]
    colloc = {s: _words(rng, collocates, (2, 3), taken) for s in stems}
    markers = _words(rng, len(SUFFIXES), (1, 1), taken)
    held = {s: int(rng.integers(len(SUFFIXES))) for s in stems}  # the suffix index never seen with s
    stem_topic = {s: i // stems_per_topic for i, s in enumerate(stems)}
    sents = []
    for _ in range(sentences):
        s = stems[rng.integers(len(stems))]
        k = int(rng.choice([j for j in range(len(SUFFIXES)) if j != held[s]]))
        t = stem_topic[s]
        toks = [s + SUFFIXES[k], markers[k], *rng.choice(colloc[s], 2), *rng.choice(topic_vocab[t], 3)]
        sents.append([str(w) for w in rng.permutation(toks)])
    words = [s + x for s in stems for j, x in enumerate(SUFFIXES) if j != held[s]]
    oov = [s + SUFFIXES[held[s]] for s in stems]
    stem_of = {s + x: s for s in stems for x in SUFFIXES}
    topic_of = {s + x: stem_topic[s] for s in stems for x in SUFFIXES}
    info = {"generator": "morphology", "seed": seed, "n_topics": n_topics, "stems_per_topic": stems_per_topic,
            "suffixes": list(SUFFIXES), "topic_words": topic_words, "collocates": collocates}
    return Morphology(_corpus("morphology", sents, info), words, oov, stem_of, topic_of, info)


@dataclass(frozen=True)
class Analogy:
    corpus: TextCorpus
    entities: list[str]
    questions: list[tuple[str, tuple[str, str, str, str]]]  # (kind, (a, b, c, d)), kind "gender" | "number"
    info: dict[str, Any] = field(default_factory=dict)


def analogy(*, seed: int = 0, n_roles: int = 12, activities: int = 6, cue_prob: float = 0.5, zipf: float = 1.0,
            sentences: int = 30_000) -> Analogy:
    """Entities over role x gender x number with contexts carrying each attribute (module docstring).

    A sentence holds one entity and three filler words; each cue (an activity word of its role, its
    gender-and-number pronoun, its number's verb) joins with probability ``cue_prob``. Entities are drawn
    with Zipf frequencies (weight ``1 / rank**zipf``, ranks shuffled by the seed), so some are rare.
    Gender questions pair (role r, male -> female) with (role r', male -> female) at one number; number
    questions pair singular -> plural of two roles at one gender; every ordered pair of roles, both ways.

    >>> a = analogy(n_roles=3, sentences=10); len(a.entities), len(a.questions)
    (12, 48)
    """
    rng = np.random.default_rng(seed)
    taken: set[str] = set()
    cells = [(r, g, n) for r in range(n_roles) for g in range(2) for n in range(2)]
    ent = dict(zip(cells, _words(rng, len(cells), (2, 3), taken), strict=True))
    acts = [_words(rng, activities, (2, 3), taken) for _ in range(n_roles)]
    pronoun = dict(zip([(g, n) for g in range(2) for n in range(2)], _words(rng, 4, (1, 1), taken), strict=True))
    verb = _words(rng, 2, (1, 1), taken)  # singular / plural agreement
    filler = _words(rng, 30, (1, 2), taken)
    weight = 1.0 / rng.permutation(np.arange(1, len(cells) + 1)) ** zipf
    draws = rng.choice(len(cells), sentences, p=weight / weight.sum())
    sents = []
    for c in draws:
        r, g, n = cells[c]
        cues = [str(acts[r][rng.integers(activities)]), pronoun[g, n], verb[n]]
        toks = [ent[r, g, n], *map(str, rng.choice(filler, 3)), *(w for w in cues if rng.random() < cue_prob)]
        sents.append([str(w) for w in rng.permutation(toks)])
    questions = []
    for r1 in range(n_roles):
        for r2 in range(n_roles):
            if r1 == r2:
                continue
            for n in range(2):
                for g1, g2 in ((0, 1), (1, 0)):
                    questions.append(("gender", (ent[r1, g1, n], ent[r1, g2, n], ent[r2, g1, n], ent[r2, g2, n])))
            for g in range(2):
                for n1, n2 in ((0, 1), (1, 0)):
                    questions.append(("number", (ent[r1, g, n1], ent[r1, g, n2], ent[r2, g, n1], ent[r2, g, n2])))
    info = {"generator": "analogy", "seed": seed, "n_roles": n_roles, "activities": activities, "cue_prob": cue_prob,
            "zipf": zipf}
    return Analogy(_corpus("analogy", sents, info), list(ent.values()), questions, info)


@dataclass(frozen=True)
class Polysemy:
    corpus: TextCorpus  # training sentences (no sense labels)
    ambiguous: list[str]
    probe: list[tuple[list[str], int, int]]  # (sentence, position of the ambiguous word, sense 0/1), train half
    test: list[tuple[list[str], int, int]]
    info: dict[str, Any] = field(default_factory=dict)


def polysemy(*, seed: int = 0, n_topics: int = 8, n_ambiguous: int = 12, topic_words: int = 20,
             sentences: int = 20_000, n_probe: int = 400) -> Polysemy:
    """Ambiguous words whose two senses live in two topics (module docstring); the probe/test occurrences are new
    sentences of the same grammar, ``n_probe`` of each.

    >>> p = polysemy(sentences=10, n_probe=4); len(p.ambiguous), len(p.test), p.test[0][0][p.test[0][1]] in p.ambiguous
    (12, 4, True)
    """
    rng = np.random.default_rng(seed)
    taken: set[str] = set()
    topic_vocab = [_words(rng, topic_words, (2, 3), taken) for _ in range(n_topics)]
    amb = _words(rng, n_ambiguous, (2, 3), taken)
    senses = {w: tuple(int(t) for t in rng.choice(n_topics, 2, replace=False)) for w in amb}

    def sentence() -> tuple[list[str], int, int]:
        w = amb[rng.integers(n_ambiguous)]
        sense = int(rng.integers(2))
        toks = [str(x) for x in rng.choice(topic_vocab[senses[w][sense]], 5)]
        pos = int(rng.integers(len(toks) + 1))
        return toks[:pos] + [w] + toks[pos:], pos, sense

    sents = [sentence()[0] for _ in range(sentences)]
    probe = [sentence() for _ in range(n_probe)]
    test = [sentence() for _ in range(n_probe)]
    info = {"generator": "polysemy", "seed": seed, "n_topics": n_topics, "n_ambiguous": n_ambiguous,
            "topic_words": topic_words, "n_probe": n_probe}
    return Polysemy(_corpus("polysemy", sents, info), amb, probe, test, info)


@dataclass(frozen=True)
class SVO:
    corpus: TextCorpus
    items: list[tuple[tuple[str, str, str], str, float]]  # ((subject, verb, object), landmark, truth)
    info: dict[str, Any] = field(default_factory=dict)


def svo(*, seed: int = 0, n_verbs: int = 8, nouns_per_sense: int = 6, sentences: int = 20_000) -> SVO:
    """SVO sentences with ambiguous verbs (module docstring): each ambiguous verb has two senses; each sense has
    its own subjects and objects and one landmark verb used only with them.

    Test items: every ambiguous verb with each of its sense-0 and sense-1 objects (a subject of that sense),
    compared with both landmarks: truth 1 for the landmark of the object's sense, 0 for the other.

    >>> s = svo(sentences=10); len(s.items), sorted({t for *_, t in s.items})
    (192, [0.0, 1.0])
    """
    rng = np.random.default_rng(seed)
    taken: set[str] = set()
    verbs = _words(rng, n_verbs, (2, 2), taken)
    landmark = {(v, k): w for v in verbs for k, w in enumerate(_words(rng, 2, (2, 2), taken))}
    subj = {(v, k): _words(rng, nouns_per_sense, (2, 3), taken) for v in verbs for k in range(2)}
    obj = {(v, k): _words(rng, nouns_per_sense, (2, 3), taken) for v in verbs for k in range(2)}
    sents = []
    for _ in range(sentences):
        v, k = verbs[rng.integers(n_verbs)], int(rng.integers(2))
        head = v if rng.random() < 0.5 else landmark[v, k]  # the landmark shares the sense's arguments
        sents.append([str(rng.choice(subj[v, k])), head, str(rng.choice(obj[v, k]))])
    items = []
    for v in verbs:
        for k in range(2):
            for o in obj[v, k]:
                s = str(rng.choice(subj[v, k]))
                for j in range(2):
                    items.append(((s, v, o), landmark[v, j], float(j == k)))
    info = {"generator": "svo", "seed": seed, "n_verbs": n_verbs, "nouns_per_sense": nouns_per_sense}
    return SVO(_corpus("svo", sents, info), items, info)


PLANTED = {"morphology": morphology, "analogy": analogy, "polysemy": polysemy, "svo": svo}
