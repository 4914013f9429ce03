"""The data of ``code_text``: real text from the Python standard library, and synthetic code bags with planted truth.

* **doc2sig pairs** (``stdlib_pairs``): for every public function, class and method defined in ``STDLIB_MODULES``
  (pure-Python modules, imported here), the first sentence of its docstring and its formal signature
  ``module.qualname(parameters)`` from ``inspect.signature``. Descriptions that occur twice are dropped (they cannot
  name one signature). The set depends on the running Python's standard library: ``describe()`` records the version.
* **infill examples** (``infill_examples``): lines of the ``char_lm`` validation split (CPython stdlib source, the
  same files and split as that task) with the code before and after them.
* **vulnerable-function bags** (``vul_bags``): functions of S statements from a toy grammar (assignments, calls,
  reads, returns, guarded and unguarded index writes); a function is vulnerable iff one statement writes ``buf[i]``
  without a guard on the same index and buffer (``if i < len(buf): buf[i] = v``), either unguarded or guarded on
  another variable. Labels are per function; the vulnerable statement's position is kept for scoring only.
"""
from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
import re
import sys
import warnings
from dataclasses import dataclass

import numpy as np

STDLIB_MODULES = (
    "argparse", "base64", "bisect", "calendar", "colorsys", "configparser", "copy", "csv", "dataclasses", "datetime",
    "difflib", "email.utils", "fnmatch", "fractions", "functools", "getopt", "gettext", "glob", "gzip", "heapq", "hmac",
    "html", "http.cookies", "inspect", "ipaddress", "json", "locale", "logging", "mimetypes", "ntpath", "numbers",
    "operator", "optparse", "os", "pathlib", "pkgutil", "platform", "posixpath", "pprint", "quopri", "random", "re",
    "reprlib", "sched", "shlex", "shutil", "statistics", "string", "tarfile", "tempfile", "textwrap", "threading",
    "timeit", "tokenize", "traceback", "types", "typing", "urllib.parse", "uuid", "warnings", "wave", "zipfile",
    "_pydecimal", "_pyio", "asyncio.base_events", "asyncio.events", "asyncio.locks", "asyncio.queues",
    "asyncio.streams", "asyncio.tasks", "collections", "concurrent.futures._base", "contextlib", "email.message",
    "email.header", "email.parser", "enum", "filecmp", "fileinput", "ftplib", "graphlib", "http.client",
    "http.server", "imaplib", "importlib.metadata", "mailbox", "multiprocessing.pool", "pdb", "pickletools",
    "plistlib", "poplib", "queue", "selectors", "smtplib", "socketserver", "subprocess", "sysconfig", "trace",
    "unittest.case", "urllib.request", "urllib.robotparser", "wsgiref.handlers", "xml.dom.minidom",
    "xml.etree.ElementTree", "zipimport", "codecs", "cmd", "code", "compileall", "dis", "doctest", "modulefinder",
    "netrc", "pyclbr", "rlcompleter", "runpy", "secrets", "shelve", "stringprep", "symtable", "tabnanny", "zipapp",
)
TEST_FRACTION = 0.2
_SENTENCE = re.compile(r"^(.+?[.!?])(\s|$)", re.S)


@dataclass(frozen=True)
class Pair:
    description: str
    signature: str
    module: str


def _first_sentence(doc: str) -> str | None:
    para = inspect.cleandoc(doc).split("\n\n", 1)[0].replace("\n", " ").strip()
    m = _SENTENCE.match(para)
    text = (m.group(1) if m else para).strip()
    return text if len(text.split()) >= 3 and not text.startswith((">>>", "..")) else None


def _members(module) -> list[tuple[str, object]]:
    out = []
    for name, obj in sorted(vars(module).items()):
        if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(obj):
            out.append((name, obj))
        elif inspect.isclass(obj):
            out.append((name, obj))
            for mname, meth in sorted(vars(obj).items()):
                if not mname.startswith("_") and inspect.isfunction(meth):
                    out.append((f"{name}.{mname}", meth))
    return out


@functools.cache
def stdlib_pairs() -> tuple[Pair, ...]:
    """Every (description, signature) pair mined from ``STDLIB_MODULES``, in a fixed order (module, qualified name)."""
    with warnings.catch_warnings():  # deprecated modules and attributes (typing.re...) still have documentation
        warnings.simplefilter("ignore")
        pairs = _mine()
    counts: dict[str, int] = {}
    for p in pairs:
        counts[p.description] = counts.get(p.description, 0) + 1
    return tuple(p for p in pairs if counts[p.description] == 1)


def _mine() -> list[Pair]:
    pairs = []
    for modname in STDLIB_MODULES:
        try:
            module = importlib.import_module(modname)
        except ImportError:  # a platform without it (e.g. no locale support): the set says which Python mined it
            continue
        for qualname, obj in _members(module):
            doc = inspect.getdoc(obj) if not inspect.isclass(obj) else obj.__doc__
            if not doc:
                continue
            desc = _first_sentence(doc)
            try:
                sig = str(inspect.signature(obj))
            except (TypeError, ValueError):
                continue
            if desc:
                pairs.append(Pair(desc, f"{modname}.{qualname}{sig}", modname))
    return pairs


def doc2sig_split(seed: int = 0) -> tuple[tuple[Pair, ...], tuple[Pair, ...]]:
    """``(train, test)``: each pair in the test split with probability ``TEST_FRACTION``, decided by a hash of its
    signature and ``seed`` (stable when pairs are added or removed)."""
    train, test = [], []
    for p in stdlib_pairs():
        h = int.from_bytes(hashlib.sha256(f"{seed}:{p.signature}".encode()).digest()[:8], "big") / 2 ** 64
        (test if h < TEST_FRACTION else train).append(p)
    return tuple(train), tuple(test)


_IDENT = re.compile(r"[A-Za-z][a-z]*|[A-Z]+(?![a-z])|\d+")


def code_tokens(text: str) -> list[str]:
    """Lower-cased words of text or code, identifiers split at ``_``, dots and camelCase.

    >>> code_tokens("os.path.splitext(p)  # Split the extension")
    ['os', 'path', 'splitext', 'p', 'split', 'the', 'extension']
    """
    return [t.lower() for t in _IDENT.findall(text)]


def python_version() -> str:
    return ".".join(map(str, sys.version_info[:3]))


# ------------------------------------------------------------------------------------------ infill
@dataclass(frozen=True)
class Infill:
    prefix: str
    middle: str
    suffix: str


def infill_examples(n: int = 200, *, seed: int = 0, prefix_chars: int = 256, suffix_chars: int = 128,
                    min_len: int = 8, max_len: int = 48) -> list[Infill]:
    """``n`` seeded infill problems from the ``char_lm`` validation split: a whole line (stripped of its indentation,
    ``min_len``..``max_len`` characters) to write back between the code before and after it."""
    from zoo_task_char_lm.task import decode, load_corpus

    text = decode(load_corpus()[1])
    starts = [m.start() for m in re.finditer(r"\n", text)]
    rng = np.random.default_rng(seed)
    out: list[Infill] = []
    for k in rng.permutation(len(starts) - 1):
        a, b = starts[k] + 1, starts[k + 1]
        line = text[a:b]
        body = line.lstrip()
        if not (min_len <= len(body) <= max_len) or a - prefix_chars < 0 or b + suffix_chars > len(text):
            continue
        a += len(line) - len(body)  # the indentation stays in the prefix
        out.append(Infill(text[a - prefix_chars:a], body, text[b:b + suffix_chars]))
        if len(out) == n:
            break
    return out


# ------------------------------------------------------------------------------------------ vulnerable bags
VUL_VOCAB = ("<pad>", "=", "+", "-", "[", "]", "(", ")", ":", "<", "if", "len", "return", "f", "g", "h",
             "x", "y", "z", "v", "i", "j", "k", "buf", "arr", "out", "0", "1", "2", "3")
TOK = {t: i for i, t in enumerate(VUL_VOCAB)}
_VALS, _IDXS, _BUFS, _FNS, _NUMS = ("x", "y", "z", "v"), ("i", "j", "k"), ("buf", "arr", "out"), ("f", "g", "h"), \
    ("0", "1", "2", "3")
MAX_TOKENS = 14  # the longest statement: a guarded write


@dataclass(frozen=True)
class VulBags:
    tokens: np.ndarray  # (n, S, T) int64, 0 = padding
    mask: np.ndarray  # (n, S) bool: real statements
    label: np.ndarray  # (n,) int64: 1 = vulnerable
    culprit: np.ndarray  # (n,) int64: the vulnerable statement's position, -1 for safe functions


def _statement(kind: str, rng: np.random.Generator) -> list[str]:
    c = lambda xs: xs[int(rng.integers(len(xs)))]  # noqa: E731
    if kind == "assign":
        return [c(_VALS), "=", c(_VALS), c(("+", "-")), c(_NUMS)]
    if kind == "call":
        return [c(_VALS), "=", c(_FNS), "(", c(_VALS), ")"]
    if kind == "read":
        return [c(_VALS), "=", c(_BUFS), "[", c(_IDXS), "]"]
    if kind == "return":
        return ["return", c(_VALS)]
    if kind == "index":
        return [c(_IDXS), "=", c(_IDXS), "+", "1"]
    idx, buf = c(_IDXS), c(_BUFS)
    write = [buf, "[", idx, "]", "=", c(_VALS)]
    if kind == "guarded":
        return ["if", idx, "<", "len", "(", buf, ")", ":"] + write
    if kind == "unguarded":
        return write
    if kind == "misguarded":  # a guard on another index or buffer: still an unchecked write
        if rng.random() < 0.5:
            other = c(tuple(v for v in _IDXS if v != idx))
            return ["if", other, "<", "len", "(", buf, ")", ":"] + write
        other = c(tuple(b for b in _BUFS if b != buf))
        return ["if", idx, "<", "len", "(", other, ")", ":"] + write
    raise ValueError(kind)


def vul_bags(n: int, *, seed: int = 0, statements: tuple[int, int] = (8, 16)) -> VulBags:
    """``n`` functions, half vulnerable (one unguarded or misguarded write planted at a random position), the rest
    with guarded writes only; every function also holds guarded writes and reads, so no token alone tells them apart."""
    rng = np.random.default_rng(seed)
    lo, hi = statements
    tokens = np.zeros((n, hi, MAX_TOKENS), dtype=np.int64)
    mask = np.zeros((n, hi), dtype=bool)
    label = np.zeros(n, dtype=np.int64)
    culprit = np.full(n, -1, dtype=np.int64)
    benign = ("assign", "call", "read", "return", "index", "guarded", "guarded")
    for f in range(n):
        s = int(rng.integers(lo, hi + 1))
        kinds = [benign[int(rng.integers(len(benign)))] for _ in range(s)]
        if f % 2:
            pos = int(rng.integers(s))
            kinds[pos] = "unguarded" if rng.random() < 0.5 else "misguarded"
            label[f], culprit[f] = 1, pos
        for j, kind in enumerate(kinds):
            toks = _statement(kind, rng)
            tokens[f, j, :len(toks)] = [TOK[t] for t in toks]
        mask[f, :s] = True
    order = rng.permutation(n)
    return VulBags(tokens[order], mask[order], label[order], culprit[order])


def is_vulnerable_statement(tokens: list[str]) -> bool:
    """The planted rule, from a statement's tokens: an index write not guarded on the same index and buffer."""
    if "=" not in tokens or "[" not in tokens:
        return False
    head = tokens[tokens.index("]") + 1:] if "]" in tokens else []
    if not head or head[0] != "=":
        return False  # a read, not a write
    k = tokens.index("[")
    buf, idx = tokens[k - 1], tokens[k + 1]
    return not (tokens[:1] == ["if"] and tokens[1] == idx and tokens[5] == buf)
