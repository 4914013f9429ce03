"""A builder's keyword arguments read from its source file, without importing it (no torch at site build).

``zoo info NAME`` imports the builder to read its signature; the site only parses the module (``ast``), so
building the catalogue stays fast and never runs model code.
"""
from __future__ import annotations

import ast
import functools
import importlib.util
from pathlib import Path
from typing import Any


def _module_file(module: str) -> Path | None:
    """The file of ``a.b.c`` found from its top-level package's location (``find_spec`` of a top level imports nothing)."""
    top, *rest = module.split(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if not rest:
        return Path(spec.origin) if spec.origin and spec.origin.endswith(".py") else None
    for folder in spec.submodule_search_locations or ():
        base = Path(folder, *rest)
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


@functools.lru_cache(maxsize=64)  # a plugin's models mostly share one model.py
def _parse(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None


def _value(node: ast.expr, constants: dict[str, ast.expr]) -> Any:
    """A default as a Python literal when it is one (or names a module-level literal), else its source text."""
    if isinstance(node, ast.Name) and node.id in constants:
        node = constants[node.id]
    try:
        return ast.literal_eval(node)
    except ValueError:
        return ast.unparse(node)


def builder_arguments(builder: str) -> list[dict[str, Any]] | None:
    """``[{"name", "annotation", "default", "required"}]`` of a ``"module:function"`` or ``"module:Class"`` builder.

    None when the source cannot be read this way (a builder made by ``functools.partial``, say): the page then
    points at ``zoo info NAME``.

    >>> builder_arguments("zoo.site.source:builder_arguments")[0]["name"]
    'builder'
    """
    module, _, attr = builder.partition(":")
    path = _module_file(module)
    if path is None or "." in attr:
        return None
    tree = _parse(path)
    if tree is None:
        return None
    constants = {n.targets[0].id: n.value for n in tree.body
                 if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)}
    node = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == attr), None)
    if isinstance(node, ast.ClassDef):
        node = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
        skip = 1  # self
    else:
        skip = 0
    if node is None:
        return None
    a = node.args
    positional = (a.posonlyargs + a.args)[skip:]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    pairs = list(zip(positional, defaults, strict=True)) + list(zip(a.kwonlyargs, a.kw_defaults, strict=True))
    return [{"name": arg.arg, "annotation": ast.unparse(arg.annotation) if arg.annotation else None,
             "default": None if default is None else _value(default, constants), "required": default is None}
            for arg, default in pairs]
