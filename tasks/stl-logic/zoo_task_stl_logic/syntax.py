"""STL syntax: formulae as nested tuples, a small token vocabulary, prefix tokens and an infix string form.

A formula is a tuple (hashable, cheap to build):

- ``("atom", i, ">=", c)`` / ``("atom", i, "<=", c)``: ``x_i >= c`` / ``x_i <= c``, ``c`` on a 0.1 grid in [-3, 3];
- ``("not", f)``, ``("and", f, g)``, ``("or", f, g)``;
- ``("eventually", a, b, f)``, ``("always", a, b, f)``, ``("until", a, b, f, g)``: integer time bounds
  ``0 <= a < b <= MAX_TIME`` in sample steps, ``b = None`` for an unbounded ``[a, inf)``.

Prefix tokens (what the neural models read and write): an atom is ``x_i, >=|<=, c``; ``not f`` / ``and f g`` /
``or f g``; ``eventually a b f``, ``always a b f``, ``until a b f g``. The infix string (what people read and
``decode`` returns) parenthesises every binary node, so it parses without precedence rules:

>>> f = ("always", 0, 5, ("or", ("atom", 0, ">=", 0.5), ("not", ("atom", 1, "<=", -1.2))))
>>> to_string(f)
'always[0,5] ( ( x0 >= 0.5 or not ( x1 <= -1.2 ) ) )'
>>> from_string(to_string(f)) == f and from_tokens(to_tokens(f)) == f
True
>>> to_tokens(f)[:6]
['always', '0', '5', 'or', 'x0', '>=']
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

Formula = tuple[Any, ...]

MAX_VARS = 3
MAX_TIME = 20
THRESHOLD_RANGE = 3.0  # thresholds are rounded to 0.1 and clipped to [-3, 3]
UNARY_TEMPORAL = ("eventually", "always")
OPS = ("not", "and", "or", "eventually", "always", "until")
SPECIAL = ("<pad>", "<bos>", "<eos>")
PAD, BOS, EOS = 0, 1, 2
VARS = tuple(f"x{i}" for i in range(MAX_VARS))
CMPS = (">=", "<=")
THRESHOLDS = tuple(f"{v / 10:.1f}" for v in range(-int(THRESHOLD_RANGE * 10), int(THRESHOLD_RANGE * 10) + 1))
TIMES = tuple(str(t) for t in range(MAX_TIME + 1)) + ("inf",)
VOCAB: tuple[str, ...] = SPECIAL + OPS + VARS + CMPS + THRESHOLDS + TIMES
INDEX = {t: i for i, t in enumerate(VOCAB)}


class STLSyntaxError(ValueError):
    """A token sequence or string that is not a well-formed formula of this grammar."""


def threshold(c: float) -> float:
    """``c`` on the vocabulary's grid: rounded to 0.1, clipped to [-3, 3] (``-0.0`` becomes ``0.0``)."""
    return round(min(max(round(float(c), 1), -THRESHOLD_RANGE), THRESHOLD_RANGE), 1) + 0.0


def _bound(b: int | None) -> str:
    return "inf" if b is None else str(int(b))


def to_tokens(f: Formula) -> list[str]:
    """Prefix tokens of ``f`` (no ``<bos>``/``<eos>``)."""
    op = f[0]
    if op == "atom":
        return [f"x{f[1]}", f[2], f"{threshold(f[3]):.1f}"]
    if op == "not":
        return ["not", *to_tokens(f[1])]
    if op in ("and", "or"):
        return [op, *to_tokens(f[1]), *to_tokens(f[2])]
    if op in UNARY_TEMPORAL:
        return [op, str(f[1]), _bound(f[2]), *to_tokens(f[3])]
    if op == "until":
        return [op, str(f[1]), _bound(f[2]), *to_tokens(f[3]), *to_tokens(f[4])]
    raise STLSyntaxError(f"unknown operator {op!r} in {f!r}; operators are 'atom' and {OPS}")


def _time(tok: str, *, upper: bool) -> int | None:
    if tok == "inf" and upper:
        return None
    if tok not in TIMES or tok == "inf":
        raise STLSyntaxError(f"expected a time bound 0..{MAX_TIME}{' or inf' if upper else ''}, got {tok!r}")
    return int(tok)


def _interval(a: int, b: int | None) -> tuple[int, int | None]:
    if b is not None and b <= a:
        raise STLSyntaxError(f"empty or degenerate interval [{a},{b}]: needs a < b")
    return a, b


def _parse_prefix(toks: Sequence[str], i: int) -> tuple[Formula, int]:
    if i >= len(toks):
        raise STLSyntaxError("token sequence ends inside a formula")
    t = toks[i]
    if t in VARS:
        if i + 2 >= len(toks) or toks[i + 1] not in CMPS or toks[i + 2] not in THRESHOLDS:
            raise STLSyntaxError(f"atom at token {i} needs 'x_i', '>=' or '<=', a threshold; got {list(toks[i:i + 3])}")
        return ("atom", int(t[1:]), toks[i + 1], float(toks[i + 2]) + 0.0), i + 3
    if t == "not":
        f, j = _parse_prefix(toks, i + 1)
        return ("not", f), j
    if t in ("and", "or"):
        f, j = _parse_prefix(toks, i + 1)
        g, k = _parse_prefix(toks, j)
        return (t, f, g), k
    if t in UNARY_TEMPORAL or t == "until":
        if i + 2 >= len(toks):
            raise STLSyntaxError(f"{t} at token {i} lacks its time bounds")
        a, b = _interval(_time(toks[i + 1], upper=False), _time(toks[i + 2], upper=True))
        f, j = _parse_prefix(toks, i + 3)
        if t != "until":
            return (t, a, b, f), j
        g, k = _parse_prefix(toks, j)
        return (t, a, b, f, g), k
    raise STLSyntaxError(f"token {i} ({t!r}) cannot start a formula")


def from_tokens(toks: Sequence[str]) -> Formula:
    """The formula of prefix tokens ``toks`` (``<bos>``/``<pad>`` dropped, cut at the first ``<eos>``).

    Raises ``STLSyntaxError`` when the tokens are not exactly one formula.
    """
    toks = [t for t in toks if t not in ("<bos>", "<pad>")]
    if "<eos>" in toks:
        toks = toks[:toks.index("<eos>")]
    f, j = _parse_prefix(toks, 0)
    if j != len(toks):
        raise STLSyntaxError(f"{len(toks) - j} tokens left after a complete formula: {list(toks[j:j + 5])}")
    return f


def is_valid_tokens(toks: Sequence[str]) -> bool:
    """Whether ``toks`` parse as exactly one formula."""
    try:
        from_tokens(toks)
    except STLSyntaxError:
        return False
    return True


def to_string(f: Formula) -> str:
    """Infix form of ``f``; every binary node in parentheses, every operand of a unary one too."""
    op = f[0]
    if op == "atom":
        return f"x{f[1]} {f[2]} {threshold(f[3]):.1f}"
    if op == "not":
        return f"not ( {to_string(f[1])} )"
    if op in ("and", "or"):
        return f"( {to_string(f[1])} {op} {to_string(f[2])} )"
    if op in UNARY_TEMPORAL:
        return f"{op}[{f[1]},{_bound(f[2])}] ( {to_string(f[3])} )"
    if op == "until":
        return f"( {to_string(f[3])} until[{f[1]},{_bound(f[2])}] {to_string(f[4])} )"
    raise STLSyntaxError(f"unknown operator {op!r}")


_LEX = re.compile(r"\(|\)|(?:eventually|always|until)\[\s*\d+\s*,\s*(?:\d+|inf)\s*\]|not|and|or|x\d+|>=|<=|-?\d+(?:\.\d+)?")


def _lex(s: str) -> list[str]:
    toks, pos = [], 0
    for m in _LEX.finditer(s):
        if s[pos:m.start()].strip():
            raise STLSyntaxError(f"unexpected text {s[pos:m.start()].strip()!r} at character {pos}")
        toks.append(re.sub(r"\s+", "", m.group()))
        pos = m.end()
    if s[pos:].strip():
        raise STLSyntaxError(f"unexpected text {s[pos:].strip()!r} at character {pos}")
    return toks


def _temporal(tok: str) -> tuple[str, int, int | None] | None:
    m = re.fullmatch(r"(eventually|always|until)\[(\d+),(\d+|inf)\]", tok)
    if m is None:
        return None
    a = _time(m.group(2), upper=False)
    return (m.group(1), *_interval(a, _time(m.group(3), upper=True)))


def _expect(toks: list[str], i: int, tok: str) -> int:
    if i >= len(toks) or toks[i] != tok:
        raise STLSyntaxError(f"expected {tok!r} at token {i}, got {toks[i] if i < len(toks) else 'the end'!r}")
    return i + 1


def _parse_infix(toks: list[str], i: int) -> tuple[Formula, int]:
    if i >= len(toks):
        raise STLSyntaxError("string ends inside a formula")
    t = toks[i]
    if t == "(":
        f, j = _parse_infix(toks, i + 1)
        if j >= len(toks):
            raise STLSyntaxError("string ends inside a parenthesis")
        op, tmp = toks[j], _temporal(toks[j])
        if op not in ("and", "or") and (tmp is None or tmp[0] != "until"):
            raise STLSyntaxError(f"expected 'and', 'or' or 'until[a,b]' at token {j}, got {op!r}")
        g, k = _parse_infix(toks, j + 1)
        k = _expect(toks, k, ")")
        return ((op, f, g) if tmp is None else ("until", tmp[1], tmp[2], f, g)), k
    if t == "not" or ((tmp := _temporal(t)) is not None and tmp[0] != "until"):
        j = _expect(toks, i + 1, "(")
        f, k = _parse_infix(toks, j)
        k = _expect(toks, k, ")")
        return (("not", f) if t == "not" else (tmp[0], tmp[1], tmp[2], f)), k
    if re.fullmatch(r"x\d+", t) and int(t[1:]) < MAX_VARS:
        if i + 2 >= len(toks) or toks[i + 1] not in CMPS:
            raise STLSyntaxError(f"atom {t} needs '>=' or '<=' and a number")
        try:
            c = float(toks[i + 2])
        except ValueError as e:
            raise STLSyntaxError(f"atom {t} needs a number, got {toks[i + 2]!r}") from e
        return ("atom", int(t[1:]), toks[i + 1], threshold(c)), i + 3
    raise STLSyntaxError(f"token {i} ({t!r}) cannot start a formula")


def from_string(s: str) -> Formula:
    """Parse the infix form written by ``to_string`` (whitespace-insensitive, thresholds rounded to the grid)."""
    toks = _lex(s)
    f, j = _parse_infix(toks, 0)
    if j != len(toks):
        raise STLSyntaxError(f"text left after a complete formula: {' '.join(toks[j:j + 5])!r}")
    return f


def encode_batch(formulae: Sequence[Formula], max_len: int) -> list[list[int]]:
    """Token ids ``<bos> prefix <eos>`` padded with ``<pad>`` to ``max_len``; raises if one does not fit."""
    out = []
    for f in formulae:
        ids = [BOS, *(INDEX[t] for t in to_tokens(f)), EOS]
        if len(ids) > max_len:
            raise ValueError(f"formula of {len(ids)} tokens (with <bos>/<eos>) does not fit max_len={max_len}: "
                             f"{to_string(f)}")
        out.append(ids + [PAD] * (max_len - len(ids)))
    return out


def decode_ids(ids: Sequence[int]) -> list[str]:
    """Tokens of ids, ``<bos>`` dropped, cut at the first ``<eos>`` or ``<pad>``."""
    toks = []
    for i in ids:
        t = VOCAB[int(i)]
        if t in ("<eos>", "<pad>"):
            break
        if t != "<bos>":
            toks.append(t)
    return toks


def size(f: Formula) -> int:
    """Number of prefix tokens of ``f``."""
    return len(to_tokens(f))


def depth(f: Formula) -> int:
    """Nesting depth: 0 for an atom."""
    return 0 if f[0] == "atom" else 1 + max(depth(g) for g in f[1:] if isinstance(g, tuple))
