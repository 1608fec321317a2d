"""Opening the dashboard in Streamlit's AppTest, and small files to upload: shared by the AppTest modules.

A plain module (not a test module): the tests import it as ``tests.dashboard.apptest_helpers``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dashboard" / "app.py"
TIMEOUT = 180

LABELS_CSV = (
    "query,doc_id,grade,query_text,source\n"
    "q1,d1,1,**bold** <b>reset</b> [link](http://x),support_ticket\n"
    "q1,d9,0,**bold** <b>reset</b> [link](http://x),support_ticket\n"
    "q2,d2,1,=HYPERLINK(\"http://x\"),search_log\n"
    "q3,d3,1,cancel plan,search_log\n"
    "q3,d4,2,cancel plan,search_log\n"
    "q4,d5,1,export data,team_written\n"
)
RUN_A = "".join(f"{q} Q0 {d} {r} {10 - r} a\n" for q, docs in
                {"q1": ["d9", "d1", "x1"], "q2": ["x1", "x2", "x3"], "q3": ["d3", "d4"], "q4": ["d5"]}.items()
                for r, d in enumerate(docs, start=1))
RUN_B = "\n".join(json.dumps({"query": q, "ranked": docs}) for q, docs in
                  {"q1": ["d1"], "q2": ["d2", "x1"], "q3": ["x9", "d3"], "q4": ["x1", "x2", "d5"]}.items()) + "\n"
DOCS_JSONL = "\n".join(json.dumps({"doc_id": d, "text": f"text of {d}"}) for d in ["d1", "d2", "d3", "d4", "d5", "d9"])


def plain(markdown: str) -> str:
    """Markdown as a reader sees it: backslash escapes removed."""
    return re.sub(r"\\(.)", r"\1", markdown)


def texts(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [e.value for e in at.error]
    parts += [w.value for w in at.warning] + [i.value for i in at.info] + [t.value for t in at.title]
    parts += [s.value for s in at.subheader]
    return plain("\n".join(parts)) + "\n" + "\n".join(t.value for t in at.text)  # st.text: plain already


def no_exceptions(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def app(page: str | None = None, **params: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.query_params.update(params)
    at.run()
    no_exceptions(at)
    if page:
        at.switch_page(page).run()
        no_exceptions(at)
    return at


def charts(at: AppTest) -> list:
    return at.get("vega_lite_chart")
