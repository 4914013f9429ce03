"""The local hub's command line: ``zoo hub serve`` and ``python -m zoo.hubserver`` share these options and ``serve``."""

from __future__ import annotations

import argparse
import logging
import sys
import threading
from pathlib import Path

from . import DEFAULT_PORT

logger = logging.getLogger("zoo.hubserver")


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the hub's command-line options to ``parser`` (``zoo hub serve`` and ``python -m zoo.hubserver``)."""
    parser.add_argument("--root", required=True, help="directory holding the hub's repos (created if missing)")
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=f"TCP port, 0 for any free one (default: {DEFAULT_PORT})")
    parser.add_argument("--token", action="append", default=None,
                        help="accepted write token (repeatable; default: $ZOO_HUB_TOKENS, else open writes)")
    parser.add_argument("--log-level", default="INFO", type=str.upper,
                        choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="the hub's log level (default: INFO)")
    return parser


def serve(args: argparse.Namespace) -> int:
    """Serve ``args.root`` until SIGTERM or Ctrl-C; return the exit status (0 after a clean stop).

    The first line on stdout says where the hub listens, once it accepts connections. A root already
    served by another process, or a port in use, is an error on stderr and status 1.
    """
    import signal

    from .server import LocalHub

    logger.setLevel(args.log_level)
    if not logging.getLogger().handlers:  # `python -m zoo.hubserver`; `zoo` configures its own
        logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    hub = LocalHub(args.root, host=args.host, port=args.port, tokens=args.token)
    try:
        hub.start()
    except (OSError, RuntimeError) as exc:
        print(f"error: cannot serve {args.root} on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    print(f"serving {Path(args.root).resolve()} on {hub.url}  (export HF_ENDPOINT={hub.url} HF_HUB_DISABLE_XET=1)",
          flush=True)
    stop = threading.Event()
    previous = None
    if threading.current_thread() is threading.main_thread():  # a service manager's stop: like Ctrl-C
        previous = signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
    try:
        while not stop.wait(0.2):  # a timed wait: signal handlers run in between
            pass
    except KeyboardInterrupt:
        pass
    finally:
        hub.stop()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    logger.info("stopped the local hub at %s", hub.url)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m zoo.hubserver --root DIR [--host H] [--port P] [--token T ...]``."""
    parser = argparse.ArgumentParser(prog="python -m zoo.hubserver", description="Serve a local Hugging Face-compatible hub.")
    return serve(add_arguments(parser).parse_args(argv))
