"""Work that runs beside the pages: one background executor for the whole server, and its finished results kept by
content key.

A page that needs minutes of numbers for every k (the Overview's intervals at every k, the Choose k table) or
should not wait on a disk write (an upload stored in the workspace while it is parsed) starts a job here and either
waits for it or shows what it can meanwhile. A job is keyed by what it is computed from (a data set's content key and
its settings), started once, shared by every visitor, and the last few finished of each kind are kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Hashable

WORKERS = 2
"""Jobs at once: the machine the dashboard is meant for has two cores, and the page's own thread needs one."""

_EXECUTOR = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="evalcore-job")
_LOCK = threading.Lock()
_KEPT: dict[str, OrderedDict[Hashable, Future]] = {}


def finished(value: Any) -> Future:
    """A job already done, holding ``value`` (for what needs no background work, e.g. an error to show)."""
    future: Future = Future()
    future.set_result(value)
    return future


def start(kind: str, key: Hashable, keep: int, work: Callable[[], Any]) -> Future:
    """The job ``kind``/``key``: the one already started, else ``work`` started now in the background. The last
    ``keep`` jobs of ``kind`` are kept (older ones are forgotten once a newer starts)."""
    with _LOCK:
        jobs = _KEPT.setdefault(kind, OrderedDict())
        future = jobs.get(key)
        if future is not None:
            jobs.move_to_end(key)
            return future
        future = jobs[key] = _EXECUTOR.submit(work)
        while len(jobs) > keep:
            jobs.popitem(last=False)
    return future


def put(kind: str, key: Hashable, keep: int, value: Any) -> None:
    """Keep a result computed elsewhere (in the page's thread) as the finished job ``kind``/``key``."""
    with _LOCK:
        jobs = _KEPT.setdefault(kind, OrderedDict())
        jobs[key] = finished(value)
        jobs.move_to_end(key)
        while len(jobs) > keep:
            jobs.popitem(last=False)


def started(kind: str, key: Hashable) -> Future | None:
    """The job ``kind``/``key`` if it was started (done or not), else None; never starts one."""
    with _LOCK:
        return _KEPT.get(kind, {}).get(key)


def run_once(kind: str, key: Hashable, work: Callable[[], Any]) -> Future:
    """Start ``work`` in the background and forget it once it is taken with `take` (an upload's workspace write)."""
    future = _EXECUTOR.submit(work)
    with _LOCK:
        _KEPT.setdefault(kind, OrderedDict())[key] = future
    return future


def take(kind: str, key: Hashable) -> Future | None:
    """The job ``kind``/``key``, forgotten as it is taken (None when there is none)."""
    with _LOCK:
        return _KEPT.get(kind, {}).pop(key, None)


def of_kind(kind: str) -> list[Future]:
    """Every job of ``kind`` kept now (done or not): a benchmark waits for them."""
    with _LOCK:
        return list(_KEPT.get(kind, {}).values())
