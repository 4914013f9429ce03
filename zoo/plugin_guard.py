"""How one plugin is loaded: in a daemon thread, under a time limit, its output kept off stdout.

``guarded(plugin_id, dist, work)`` runs ``work()`` (import the plugin, call its hooks) so that whatever the
plugin does (print, loop, ``sys.exit()``, ``raise KeyboardInterrupt``) ends as ``PluginBroken`` for that plugin
alone, while a real Ctrl-C from the user still stops zoo. Used by ``zoo.discovery``.
"""
from __future__ import annotations

import os


def _log():
    import logging

    return logging.getLogger("zoo.discovery")


DEFAULT_TIMEOUT = 5.0  # seconds for one plugin's import and hook calls; plugin.py is specs as data: milliseconds


def timeout() -> float | None:
    """``ZOO_PLUGIN_TIMEOUT`` in seconds (default ``DEFAULT_TIMEOUT``); 0 or a negative value: no limit."""
    raw = os.environ.get("ZOO_PLUGIN_TIMEOUT", "").strip()
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        _log().warning("ZOO_PLUGIN_TIMEOUT=%r is not a number of seconds: using %s", raw, DEFAULT_TIMEOUT)
        return DEFAULT_TIMEOUT
    return value if 0 < value < float("inf") else None


# Threads loading a plugin right now (or that were still loading one when zoo gave up on it): what they print
# goes to stderr, so that `zoo list --json` stays JSON whatever a plugin prints.
LOADERS: set[int] = set()


class _PluginOutput:
    """``sys.stdout`` while plugins load: writes from a loading thread go to stderr, every other thread's to stdout."""

    def __init__(self, stdout, stderr) -> None:
        self._stdout = stdout
        self._stderr = stderr

    def _target(self):
        import threading

        return self._stderr if threading.get_ident() in LOADERS else self._stdout

    def write(self, text: str) -> int:
        target = self._target()
        return target.write(text) if target is not None else len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        target = self._target()
        if target is not None:
            target.flush()

    def __getattr__(self, name: str):
        return getattr(self._stdout, name)


class Divert:
    """Install ``_PluginOutput`` for the time plugins load (kept while a timed-out loader thread still runs)."""

    def __enter__(self) -> Divert:
        import sys

        self._previous = sys.stdout
        sys.stdout = _PluginOutput(self._previous, sys.stderr)
        return self

    def __exit__(self, *exc) -> None:
        import sys

        # a plugin may have replaced sys.stdout itself: what was there before loading comes back either way
        sys.stdout = _PluginOutput(self._previous, sys.stderr) if LOADERS else self._previous


class _PluginTimedOut(BaseException):
    """Raised asynchronously inside a loader thread that ran past ZOO_PLUGIN_TIMEOUT, to stop its Python code."""


def _stop(thread) -> None:
    """Best effort: raise ``_PluginTimedOut`` in a stuck loader thread (a pure-Python loop ends; C code finishes first)."""
    try:
        import ctypes

        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(_PluginTimedOut))
    except Exception:  # noqa: BLE001 - no ctypes, another interpreter: the daemon thread is left to the process's exit
        pass


def guarded(plugin_id: str, dist: str | None, work):
    """``work()`` in a daemon thread, under ``ZOO_PLUGIN_TIMEOUT``; the plugin's exceptions, all of them, as PluginBroken.

    Why a thread rather than SIGALRM in the main thread: the caller gets control back at the deadline whatever
    the plugin does (a bare ``except:`` around a retry loop would swallow an alarm's exception, a blocking C call
    would delay it), zoo needs no main thread and leaves the application's SIGALRM and timers alone, and a real
    Ctrl-C is told from a plugin's ``raise KeyboardInterrupt`` for free: signals are delivered to the main thread,
    which is only waiting here, while whatever the plugin raises (``sys.exit()``, ``KeyboardInterrupt``) is raised
    in the loader thread. A thread that ran past its time gets an asynchronous exception and is abandoned.
    """
    import threading

    from .errors import PluginBroken

    box: dict = {}
    done = threading.Event()

    def run() -> None:
        ident = threading.get_ident()
        LOADERS.add(ident)
        try:
            box["result"] = work()
        except BaseException as exc:  # noqa: BLE001 - sys.exit(), KeyboardInterrupt: the plugin's, never the user's
            box["error"] = exc
        finally:
            LOADERS.discard(ident)
            done.set()

    thread = threading.Thread(target=run, name=f"zoo-plugin-{plugin_id}", daemon=True)
    limit = timeout()
    thread.start()
    try:
        finished = done.wait(limit)
    except KeyboardInterrupt:  # in the main thread while it waits: the user's Ctrl-C (or a SIGINT sent to zoo)
        _log().warning("interrupted while loading zoo plugin %s (%s)", plugin_id, dist)
        raise
    if not finished:
        _stop(thread)
        raise PluginBroken(f"timed out: plugin {plugin_id} ({dist}) did not finish loading within {limit:g} s; fix or uninstall "
                            f"it, disable it with ZOO_DISABLE_PLUGINS={plugin_id}, or allow more time with "
                            f"ZOO_PLUGIN_TIMEOUT=SECONDS")
    error = box.get("error")
    if error is None:
        return box["result"]
    if isinstance(error, Exception):
        raise error
    # SystemExit, KeyboardInterrupt, GeneratorExit raised by the plugin's own code: a broken plugin, nothing more
    what = "called sys.exit" if isinstance(error, SystemExit) else f"raised {type(error).__name__}"
    raise PluginBroken(f"{type(error).__name__}: {error} (the plugin {what} while loading; zoo kept going "
                       f"without it)") from error
