"""Every page's first screen computed before anyone opens it: the start script's warm-up run visits each page.

`scripts/start.sh` starts the server with ``EVALCORE_WARM_EVERY_PAGE=1`` and `scripts/warm_up.py` asks Streamlit's
script health check to run the app once, in a session of its own with no browser behind it. In that run (and only
there: a visitor's session has a browser and its request headers), after the Overview has run, each other page of
the navigation runs once too, as a first visitor would open it (no selections in the URL), into a container that is
emptied after. What a page computes goes into the shared caches (`dashboard.caching`), so each page's first screen
for a visitor is a cache hit, not a computation.

A page ends its run early with `stop` (not ``st.stop``, which would end the whole warm-up run): during the visit it
ends only that page's visit. A page that fails here is skipped and named on the server's log: the warm-up only ever
makes a first visit faster.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import types
from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from dashboard import state

ENV = "EVALCORE_WARM_EVERY_PAGE"
"""Set to 1 by scripts/start.sh: its warm-up run visits every page."""

FIRST = ("choose_k.py", "index_size.py", "failures.py", "answers.py", "integrity.py", "sources.py", "judge.py")
"""The pages that compute most, visited first: Streamlit gives its health check 60 s, and a warm-up cut short on a
busy machine has prepared these."""

_LOG = logging.getLogger("evalcore.dashboard.warming")
_DONE: list[bool] = []  # the warm-up visits the pages once per server
_VISITING = threading.local()  # set on the warm-up run's thread while it visits a page


class _PageEnded(Exception):
    """A page ended its run during the warm-up's visit (`stop`)."""


def stop() -> None:
    """End this page's run here: ``st.stop()`` for a visitor; during the warm-up's visit, the end of this page only."""
    if getattr(_VISITING, "page", None):
        raise _PageEnded
    st.stop()


def _forget_element_keys() -> None:
    """Each visit starts as a run of its own would: the element keys of the page before are forgotten (Streamlit
    refuses a key used twice in one run, and two pages may each have a ``headline``). Streamlit 1.67 keeps them on
    the run context's shared state; where it does not, a page with a key seen before is named on the log, skipped."""
    shared = getattr(get_script_run_ctx(), "shared", None)
    for name in ("widget_ids_this_run", "widget_user_keys_this_run"):
        found = getattr(shared, name, None)
        if found is not None:
            found.clear()


def _warm_up_run() -> bool:
    """This run is the start script's warm-up (the health check's session has no browser, so no request headers)."""
    return os.environ.get(ENV) == "1" and not _DONE and not dict(st.context.headers)


def visit_every_page(views: Path, shown: str) -> None:
    """In the warm-up run only: run each view script in the folder ``views`` but ``shown`` (the file of the page
    this run showed: the default page, as the health check asks for no path) once, its output into a container
    emptied after."""
    if not _warm_up_run():
        return
    _DONE.append(True)
    started = time.monotonic()
    holder = st.empty()
    for view in sorted(views.glob("*.py"), key=lambda path: (FIRST.index(path.name) if path.name in FIRST
                                                              else len(FIRST), path.name)):
        if view.name == shown:
            continue
        began = time.monotonic()
        _VISITING.page = view.name
        _forget_element_keys()
        try:
            state.first_visit()  # no selection of the page before (Choose k sets k) carries to this one
            with holder.container():
                module = types.ModuleType("__main__")
                module.__dict__["__file__"] = str(view)
                exec(compile(view.read_text(encoding="utf-8"), str(view), "exec"), module.__dict__)  # noqa: S102
        except _PageEnded:
            pass
        except Exception as error:  # noqa: BLE001 - a page the warm-up cannot open is only slower on its first visit
            _LOG.warning("warm-up: %s not prepared (%s: %s)", view.name, type(error).__name__, error)
        finally:
            _VISITING.page = None
        _LOG.info("warm-up: %s visited in %.1f s", view.name, time.monotonic() - began)
    holder.empty()
    _LOG.info("warm-up: every page visited in %.1f s", time.monotonic() - started)
