"""Entry point: page settings and navigation, nothing else. Each page is one file in ``views/``.

The folder is not called ``pages/``: Streamlit would also treat that as an old-style page folder,
and a fresh server's first visitor would get its sidebar and a "Page not found" notice.

A path that names no page (``/home``, an old or mistyped link) opens the Overview with the link's
selections, without Streamlit's "Page not found" dialog: Streamlit 1.67 answers a path it cannot match with that
dialog over the default page (``st.navigation`` sends ``page_not_found``), and offers no setting against it, so the
path asked for is given a hidden page of its own that switches to the Overview (`_unknown_path`).

    streamlit run dashboard/app.py      (or: bash scripts/start.sh)
"""

import sys
import threading
from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `streamlit run` puts only this folder on the path; pages import `dashboard.*`
    sys.path.insert(0, str(ROOT))

from dashboard import charts  # after the path above

if "altair" not in sys.modules:  # the Choose k chart needs Altair (~1 s to import and warm): not on a first visit
    threading.Thread(target=charts.warm, name="evalcore-warm-altair", daemon=True).start()

st.set_page_config(page_title="evalcore", page_icon=":material/troubleshoot:", layout="wide")

from dashboard import access_ui  # noqa: E402 - after the path above is set

access_ui.gate()  # with sign-in configured: nobody sees a page before signing in (and being on a list)

# The Overview is served at the root; its own name in Streamlit's registry is empty too, so no typed path is
# answered as the default page's own name (which Streamlit would meet with "Page not found").
OVERVIEW = st.Page("views/overview.py", title="Overview", icon=":material/leaderboard:", url_path="", default=True)


def _overview_by_name() -> None:
    """``/overview``, ``/home`` or any path that names no page: the Overview, at the root where Streamlit serves it,
    same selections."""
    st.switch_page(OVERVIEW, query_params={name: st.query_params.get_all(name) for name in st.query_params})


def _unknown_path(pages: list) -> list:
    """A hidden page for the path this visit asks for when no page has it (``/home``): the Overview by name, instead
    of Streamlit's "Page not found" dialog over it. No page for a known path, the root, or a path Streamlit cannot
    name a page after (``/a/b``)."""
    ctx = get_script_run_ctx()
    asked = str(getattr(getattr(ctx, "pages_manager", None), "intended_page_name", None) or "").strip("/")
    known = {page.url_path for page in pages}
    if not asked or "/" in asked or asked in known:
        return []
    return [st.Page(_overview_by_name, title="Overview", url_path=asked, visibility="hidden")]


PAGES = [
    st.Page("views/data.py", title="Data", icon=":material/upload_file:", url_path="data"),
    OVERVIEW,
    st.Page("views/choose_k.py", title="Choose k", icon=":material/tune:", url_path="choose-k"),
    st.Page("views/failures.py", title="Failures", icon=":material/search_insights:", url_path="failures"),
    st.Page("views/answers.py", title="Answers", icon=":material/grading:", url_path="answers"),
    st.Page("views/present.py", title="Present", icon=":material/co_present:", url_path="present"),
    st.Page("views/history.py", title="History", icon=":material/history:", url_path="history"),
    st.Page("views/sources.py", title="Sources", icon=":material/record_voice_over:", url_path="sources"),
    st.Page("views/index_size.py", title="Index size", icon=":material/compress:", url_path="index-size"),
    st.Page("views/integrity.py", title="Integrity", icon=":material/verified:", url_path="integrity"),
    st.Page("views/real_queries.py", title="Real queries", icon=":material/query_stats:", url_path="real-queries"),
    st.Page("views/judge.py", title="Blind judging", icon=":material/gavel:", url_path="judge"),
    st.Page("views/activity.py", title="Who did what", icon=":material/manage_history:", url_path="activity"),
    st.Page(_overview_by_name, title="Overview", url_path="overview", visibility="hidden"),
]

st.navigation(PAGES + _unknown_path(PAGES), position="top").run()

from dashboard import warming  # noqa: E402 - after the path above is set

warming.visit_every_page(ROOT / "dashboard" / "views", shown="overview.py")  # the start script's warm-up run only
