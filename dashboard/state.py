"""Selections a person would share live in the URL; this module is the only one that touches it.

Shared by every page: ``data`` (the data set key; absent for the sample), ``runs`` (repeated:
the runs shown; absent = all), ``baseline`` and ``k``. Each page adds its own (the Failures
page: ``query``, ``miss``, ``source``, ``search``, ``sort``, ``vs``). The page itself is the
URL path (``/overview``, ``/choose-k``, ``/failures``, ``/data``).

The URL wins when it has a value (a copied link opens the same view); the session keeps a
copy because Streamlit clears the query string when the user switches pages, and each page
writes its own parameters back. Every change goes through `set`, which updates both, so the
two never disagree. Widgets bind with `bind`: their session key carries the page name and a
callback writes their value to the URL.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import streamlit as st

SHARED = ("data", "runs", "baseline", "k")
LISTS = {"runs", "source"}
ONE_VISIT = {"walk"}
"""Selections that hold for one visit of the pages that own them (the presenter view's ``walk=answers``, set by the
Answers page's link): any other page forgets them, so a later link to that page opens its own default."""
_SESSION = "shared.params"


def first_visit() -> None:
    """Forget every selection, in the URL and in the session: the next page runs as a first visitor's would (the
    warm-up's visit of each page, `dashboard.warming`, starts so, or one page's choice of k would carry to the next)."""
    st.query_params.clear()
    for name in list(st.session_state.keys()):
        del st.session_state[name]


def _params() -> dict[str, Any]:
    return st.session_state.setdefault(_SESSION, {})


def start(page: str, own: Iterable[str] = ()) -> None:
    """Top of every page: read the URL into the session, then show exactly this page's parameters."""
    params = _params()
    for name in st.query_params.keys():
        if name in LISTS:
            params[name] = [v for v in st.query_params.get_all(name) if v]
        else:
            params[name] = st.query_params[name]
    for name in ONE_VISIT.difference(own):
        params.pop(name, None)
    st.session_state["shared.page"] = page
    st.session_state["shared.page_params"] = tuple(SHARED) + tuple(own)
    _write_url()


def _write_url() -> None:
    wanted = st.session_state.get("shared.page_params", SHARED)
    params = _params()
    for name in list(st.query_params.keys()):
        if name not in wanted or params.get(name) in (None, "", []):
            del st.query_params[name]
    for name in wanted:
        value = params.get(name)
        if value in (None, "", []):
            continue
        text = [str(v) for v in value] if isinstance(value, (list, tuple)) else str(value)
        current = st.query_params.get_all(name) if isinstance(text, list) else st.query_params.get(name)
        if current != text:
            st.query_params[name] = text


def get(name: str, default: Any = None) -> Any:
    value = _params().get(name)
    return default if value in (None, "", []) else value


def set(name: str, value: Any) -> None:  # noqa: A001 - the verb is the point
    """Change one selection in the session and the URL (None or empty removes it)."""
    _params()[name] = list(value) if isinstance(value, (list, tuple)) else value
    _write_url()


def widget_key(page: str, name: str) -> str:
    return f"{page}.{name}"


def bind(page: str, name: str, value: Any, to_param: Callable[[Any], Any] | None = None) -> dict:
    """Keyword arguments that tie a widget to parameter ``name``: key, and a callback writing the URL.

    ``value`` is the (validated) current value; the widget shows it unless the person changed
    the widget since. ``to_param`` turns the widget's value into what the URL stores.
    """
    key = widget_key(page, name)
    if st.session_state.get(f"{key}.shown") != value or key not in st.session_state:
        st.session_state[key] = value
    st.session_state[f"{key}.shown"] = value

    def changed() -> None:
        new = st.session_state[key]
        st.session_state[f"{key}.shown"] = new
        set(name, to_param(new) if to_param else new)

    return {"key": key, "on_change": changed}


def forget(*names: str) -> None:
    for name in names:
        _params().pop(name, None)
    _write_url()


# ----------------------------------------------------------------------------- page state that is not in the URL
# What a page remembers between reruns of one visitor's session but would not share in a link: a message to show
# once after a rerun, an action waiting for confirmation, the upload already stored. Every page reads and writes it
# here, named ``page.what``, so the session's keys are listed in one module's calls.


def remembered(name: str, default: Any = None) -> Any:
    """What this session remembered under ``name`` (``default`` when nothing)."""
    return st.session_state.get(name, default)


def remember(name: str, value: Any) -> None:
    """Keep ``value`` under ``name`` for the rest of this session."""
    st.session_state[name] = value


def take(name: str, default: Any = None) -> Any:
    """What was remembered under ``name``, forgotten as it is read (a message shown once)."""
    return st.session_state.pop(name, default)


def memo(name: str) -> dict:
    """A dictionary this session keeps under ``name`` (made empty on first use)."""
    return st.session_state.setdefault(name, {})


def show_in_widget(page: str, name: str, value: Any) -> None:
    """Make the widget bound to ``name`` show ``value`` on the next run, as if `bind` had been given it."""
    key = widget_key(page, name)
    st.session_state[key] = value
    st.session_state[f"{key}.shown"] = value
