"""Atomic file writes, in one place: a reader sees the old file or the new one, never half of one.

The new content goes to a temp file in the same folder (or in ``tmp_dir``, which must be on the same
file system), is flushed and fsynced, then moved over the target with ``os.replace``; if anything fails
on the way the temp file is removed and the target is untouched. The new file gets the permissions a
plain ``open(path, "w")`` would give it (0o666 less the umask), not ``mkstemp``'s 0o600.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     target = pathlib.Path(d) / "sub" / "note.txt"
    ...     atomic_write_text(target, "hello")
    ...     print(target.read_text())
    hello
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path

TYPE_CHECKING = False  # `zoo list` writes its cache through here: no typing import
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any, BinaryIO

__all__ = ["atomic_path", "atomic_writer", "atomic_write_bytes", "atomic_write_text", "cached_arrays"]

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)


def _open_temp(folder: Path, name: str) -> tuple[Path, int]:
    # os.open with mode 0o666 lets the umask decide the permissions, as for any new file
    for _ in range(100):
        tmp = folder / f".{name[:200]}.{os.urandom(4).hex()}.tmp"
        try:
            return tmp, os.open(tmp, _FLAGS, 0o666)
        except FileExistsError:
            continue
    raise FileExistsError(f"cannot create a temp file for {name} in {folder}")


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, *, tmp_dir: str | os.PathLike | None = None) -> Iterator[Path]:
    """A temp file's path, for code that writes by file name; it replaces ``path`` when the block succeeds.

    The parent folder of ``path`` is created if missing. If the block raises, the temp file is removed,
    ``path`` keeps its old content and the error propagates.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     target = pathlib.Path(d) / "weights.bin"
    ...     with atomic_path(target) as tmp:
    ...         _ = tmp.write_bytes(b"abc")
    ...     print(target.read_bytes(), tmp.exists())
    b'abc' False
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp, fd = _open_temp(Path(tmp_dir) if tmp_dir is not None else path.parent, path.name)
    os.close(fd)
    try:
        yield tmp
        fd = os.open(tmp, os.O_RDWR | getattr(os, "O_BINARY", 0))
        try:
            os.fsync(fd)  # the data is on disk before the new name points at it
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike, *, tmp_dir: str | os.PathLike | None = None) -> Iterator[BinaryIO]:
    """A binary file that replaces ``path`` when the ``with`` block succeeds (see ``atomic_path``).

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     with atomic_writer(pathlib.Path(d) / "blob") as f:
    ...         _ = f.write(b"abc")
    ...     print((pathlib.Path(d) / "blob").read_bytes())
    b'abc'
    """
    with atomic_path(path, tmp_dir=tmp_dir) as tmp, open(tmp, "wb") as f:
        yield f


def atomic_write_bytes(path: str | os.PathLike, data: bytes, *, tmp_dir: str | os.PathLike | None = None) -> None:
    """Replace ``path`` with ``data`` atomically (see the module docstring)."""
    with atomic_writer(path, tmp_dir=tmp_dir) as f:
        f.write(data)


def atomic_write_text(path: str | os.PathLike, text: str, *, encoding: str = "utf-8",
                      tmp_dir: str | os.PathLike | None = None) -> None:
    """Replace ``path`` with ``text`` atomically, encoded with ``encoding`` (no newline translation)."""
    atomic_write_bytes(path, text.encode(encoding), tmp_dir=tmp_dir)


def cached_arrays(path: str | os.PathLike, compute: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The numpy arrays stored at ``path`` (an ``.npz`` file, read with ``allow_pickle=False``), or ``compute()``'s,
    written there atomically for next time. An unreadable file is recomputed and replaced; a cache that cannot be
    written (read-only) only costs the recomputation. Tasks name ``path`` by a hash of what the arrays depend on.

    >>> import pathlib, tempfile, numpy as np
    >>> with tempfile.TemporaryDirectory() as d:
    ...     first = cached_arrays(pathlib.Path(d) / "x.npz", lambda: {"a": np.arange(3)})
    ...     again = cached_arrays(pathlib.Path(d) / "x.npz", lambda: 1 / 0)  # read back: compute is not called
    >>> again["a"].tolist()
    [0, 1, 2]
    """
    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as z:
            return {name: z[name] for name in z.files}
    except (OSError, ValueError, KeyError, EOFError):
        pass  # missing or unreadable: recompute and replace
    arrays = compute()
    try:
        with atomic_writer(path) as f:  # a file object: np.savez would append ".npz" to a name
            np.savez(f, **arrays)
    except OSError:
        pass
    return arrays

