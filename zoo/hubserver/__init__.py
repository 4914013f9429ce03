"""A local Hugging Face Hub-compatible server, persisted on disk, standard library only.

The real ``huggingface_hub`` client and timm push to it and pull from it once ``HF_ENDPOINT`` points at
it (run clients with ``HF_HUB_DISABLE_XET=1``: Xet transfers are not served). Endpoints and protocol
facts: ``shared/notes/HUB.md`` §3. Disk layout: ``zoo.hubserver.store``.

Example::

    >>> from zoo.hubserver import LocalHub
    >>> with LocalHub("/tmp/hub", tokens=["secret"]) as hub:   # doctest: +SKIP
    ...     print(hub.url)                                     # export HF_ENDPOINT=<this>, HF_TOKEN=secret
    http://127.0.0.1:40217

Command line: ``zoo hub serve --root DIR [--port P] [--token T ...]``, or the same options with
``python -m zoo.hubserver``: both are ``zoo.hubserver.cli.serve()`` over ``add_arguments()``. SIGTERM (or Ctrl-C) stops the
server cleanly, with exit status 0.

Auth: writes need a token from ``tokens`` (or ``ZOO_HUB_TOKENS``, comma-separated). With no tokens at
all the hub is open: anyone who can reach it may write, and private repos are private in name only.
Reads of private repos need a valid token; to anyone else such a repo does not exist (404), like on the
Hub. A read with a wrong token is treated as anonymous.

Repo ids are case-insensitive, like on the Hub (``zoo.hubserver.store.HubStore``). Resource limits
(worker pool, deadlines, queue bounds, the 10 MiB regular-file limit; ``zoo.hubserver.wire.Limits``)
and what they promise: ``SECURITY.md``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .server import LocalHub

__all__ = ["LocalHub", "DEFAULT_PORT"]

DEFAULT_PORT = 8089


def __getattr__(name: str) -> object:
    # `zoo --help` builds the `hub serve` options from here: the server itself (http.server, ...) loads on use
    if name == "LocalHub":
        from .server import LocalHub

        return LocalHub
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
