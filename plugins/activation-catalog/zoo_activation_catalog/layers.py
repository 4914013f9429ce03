"""Every catalogued activation as an ``nn.Module`` class, and ``get(name)`` to look one up.

Each class takes no required argument, so any of them fits wherever an ``act_layer`` is called
as ``act_layer()`` (``zoo_nn.backbones.DigitsMLP``, ``DigitsCNN``, ``TinyViT``). The classes are
also attributes of this module under their own names (``layers.Mish``, ``layers.PReLU``, ...).

    >>> import torch
    >>> from zoo_nn.backbones import DigitsMLP
    >>> from zoo_activation_catalog import layers
    >>> net = DigitsMLP(act_layer=layers.get("mish"))
    >>> net(torch.rand(2, 1, 8, 8)).shape
    torch.Size([2, 10])
"""
from __future__ import annotations

from torch import nn

from .catalog import ENTRIES, Entry
from .fixed import FIXED
from .learnable import LEARNABLE

ACTIVATIONS: dict[str, type[nn.Module]] = {name: {**FIXED, **LEARNABLE}[name] for name in ENTRIES}

# The classes under their own names, e.g. ``layers.GELU``; the catalogue fixes each name.
for _name, _cls in ACTIVATIONS.items():
    if _cls.__name__ != ENTRIES[_name].cls:  # pragma: no cover - a mismatch is a bug in catalog.py
        raise RuntimeError(f"{_name}: class {_cls.__name__} but catalogue says {ENTRIES[_name].cls}")
    globals()[_cls.__name__] = _cls

__all__ = ["ACTIVATIONS", "names", "get", "reference", *sorted(c.__name__ for c in ACTIVATIONS.values())]


def names() -> list[str]:
    """Every registered activation name, in catalogue order."""
    return list(ACTIVATIONS)


def get(name: str) -> type[nn.Module]:
    """The layer class of activation ``name`` (e.g. ``"mish"``); call it with no arguments.

    Raises:
        KeyError: unknown name; the message lists close matches.

    >>> get("gelu")()
    GELU()
    """
    try:
        return ACTIVATIONS[name]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(name, ACTIVATIONS, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; choose from {', '.join(ACTIVATIONS)}"
        raise KeyError(f"unknown activation {name!r}{hint}") from None


def reference(name: str) -> Entry:
    """The catalogue entry (formula, paper, year) of activation ``name``."""
    get(name)
    return ENTRIES[name]
