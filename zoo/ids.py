"""The shapes of zoo's identifiers, written once: model names and tags, commit ids, sha256 digests.

The patterns carry no anchors: use them with ``fullmatch`` (or the ``is_*`` helpers), since ``^...$``
with ``match`` also accepts a trailing newline.

    >>> is_name("mrl_digits_cnn"), is_name("MRL"), is_commit("a" * 40), is_sha256("a" * 63)
    (True, False, True, False)
"""
from __future__ import annotations

import re

__all__ = ["NAME_RE", "COMMIT_RE", "SHA256_RE", "is_name", "is_commit", "is_sha256"]

NAME_RE = re.compile(r"[a-z0-9][a-z0-9_\-]*")  # model names and weight tags: lowercase, digits, '_' and '-'
COMMIT_RE = re.compile(r"[0-9a-f]{40}")  # a full git commit id, as the Hub returns it
SHA256_RE = re.compile(r"[0-9a-f]{64}")  # a file's sha256, lowercase hex


def is_name(value: object) -> bool:
    """True for a valid model name or weights tag."""
    return isinstance(value, str) and NAME_RE.fullmatch(value) is not None


def is_commit(value: object) -> bool:
    """True for a full 40-hex commit id (a branch or tag name is not one)."""
    return isinstance(value, str) and COMMIT_RE.fullmatch(value) is not None


def is_sha256(value: object) -> bool:
    """True for a lowercase hex sha256 digest."""
    return isinstance(value, str) and SHA256_RE.fullmatch(value) is not None
