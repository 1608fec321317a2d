"""The k-dependent part of a page as an `st.fragment`: changing k reruns only that part.

A fragment rerun calls the fragment with the arguments of the last full run, so the view it was
given is stale: `current` reads the shared selections (k, runs, baseline) again from the session
and the URL, as `layout.view` does at the top of a full run. A widget in the fragment that changes
what is drawn outside it (the runs shown, which the header names) asks for a full rerun
(`rerun_page_if`).
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from dashboard import layout


def current(v: layout.View) -> layout.View:
    """``v`` with k, the runs shown and the baseline as they are now (`layout.selections`)."""
    runs, baseline, k = layout.selections(v.all_runs)
    return replace(v, runs=runs, baseline=baseline, k=k)


def in_fragment_run() -> bool:
    """Whether this script run reruns only a fragment, not the whole page."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return bool(ctx is not None and getattr(ctx, "fragment_ids_this_run", None))


def rerun_page_if(changed: bool) -> None:
    """Rerun the whole page when a fragment's widget changed something drawn outside the fragment.

    Only from a fragment rerun: in a full run everything is drawn afresh anyway (and asking again
    would loop)."""
    if changed and in_fragment_run():
        st.rerun(scope="app")
