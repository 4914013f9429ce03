"""Figures that tasks and tools write next to their results: headless pyplot and one way to save a PNG.

matplotlib is not a dependency of zoo-core; the tasks and plugins that draw require it themselves. Both functions
import it on first use, with the non-interactive Agg backend (no display on CI machines or servers).

    >>> import pathlib, tempfile
    >>> plt = pyplot()
    >>> fig, ax = plt.subplots(figsize=(2, 2))
    >>> _ = ax.plot([0, 1], [1, 0])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = save_figure(fig, pathlib.Path(d) / "sub" / "line.png")
    ...     print(pathlib.Path(path).name, pathlib.Path(path).read_bytes()[:4] == b"\\x89PNG")
    line.png True
"""
from __future__ import annotations

import os
from typing import Any

from .fileio import atomic_path

__all__ = ["pyplot", "save_figure"]


def pyplot() -> Any:
    """``matplotlib.pyplot`` with the Agg backend selected (unless a backend was already chosen explicitly).

    Raises:
        ModuleNotFoundError: matplotlib is not installed; the message names the pip line.
    """
    try:
        import matplotlib
    except ModuleNotFoundError as e:
        raise ModuleNotFoundError("drawing this figure needs matplotlib: pip install matplotlib") from e
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, path: str | os.PathLike, *, dpi: int = 100, tight: bool = True) -> str:
    """Lay ``fig`` out (tightly unless ``tight=False``), write it to ``path`` as PNG atomically, close it.

    Returns:
        ``str(path)``, for a result's ``artifacts``.
    """
    if tight:
        fig.tight_layout()
    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=dpi, format="png")
    finally:
        pyplot().close(fig)
    return str(path)
