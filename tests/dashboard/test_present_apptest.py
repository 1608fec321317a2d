"""The presenter view through Streamlit's AppTest: one failure at a time, in the Failures page's order, the query in
the URL, plain words first and the numbers one click away; the Failures page's link to it and its way back; a run
of chunks told by each chunk's text, never its id; a long query in smaller type, cut past three lines."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from dashboard.page_models import present
from tests.dashboard.apptest_helpers import app, no_exceptions, plain, texts
from tests.dashboard.test_chunk_uploads_apptest import chunking_sample
from tests.dashboard.test_dashboard_apptest import upload_everything

CHUNKING = Path(__file__).resolve().parents[2] / "sample_data" / "chunking"
CHUNK_ID = re.compile(r"[a-z]+(?:-[a-z]+)*-\d\d#[sw]\d")  # the sample's chunk ids: security-scim-01#s3, ...#w2


def markdown(at) -> str:
    return "\n".join(plain(m.value).replace("**", "") for m in at.markdown)


def test_present_walks_the_failures_in_the_failures_page_order() -> None:
    failures = app("views/failures.py", k="5", sort="query")
    order = list(dict.fromkeys(failures.dataframe[0].value["query"]))

    at = app("views/present.py", k="5", sort="query")
    assert at.query_params["query"] == order[0]  # no query asked for: the first failure, and the URL says which
    words = texts(at)
    assert f"Failure 1 of {len(order)} at k = 5" in words
    assert "The customer typed" in words and "What was relevant" in words
    told = markdown(at)
    assert "found nothing relevant at k = 5." in told  # the failures, as the Failures page opens on them
    for run in ("base", "tuned", "tuned-256d"):
        assert f"{run} " in told
    assert "Came instead, in the top 5:" in told or "Nothing else in the top 5" in told
    assert at.button(key="present.previous").disabled

    at.button(key="present.next").click().run()
    no_exceptions(at)
    assert at.query_params["query"] == order[1]
    assert f"Failure 2 of {len(order)}" in texts(at)
    at.button(key="present.previous").click().run()
    assert at.query_params["query"] == order[0]

    # The numbers behind it: per-run scores, with the context every number carries, and no raw None.
    scores = at.dataframe[0].value
    assert {"recall@5", "hit@5", "rr", "first_rank"} <= set(scores.columns)
    assert not scores["first_rank"].isna().any() and "None" not in scores["first_rank"].astype(str).tolist()
    assert "n = 1 query (this one's own scores)" in texts(at)


def test_present_follows_a_copied_link_and_explains_an_unknown_query() -> None:
    at = app("views/present.py", query="q097", k="10")
    assert at.query_params["query"] == "q097"
    told = markdown(at)
    assert "where is the setting to enable video call" in told
    # Three relevant docs, named by their titles from the documents file; where each landed in each run's list.
    for title in ("Calls and huddles: set up and enable", "Calls and huddles: plans and pricing",
                  "Calls and huddles: permissions: who can manage it"):
        assert f"✔ {title}" in told
    # Several relevant docs: each landing is its rank beside its title (red below the top k, green in it).
    assert "2 of 3 relevant in its top 10" in told and ":red[#18] :gray[Calls and huddles: " in told

    unknown = app("views/present.py", query="no-such-query")
    no_exceptions(unknown)
    assert "not an evaluated query" in texts(unknown) and unknown.query_params["query"] != "no-such-query"


def test_present_on_uploaded_files_without_titles() -> None:
    at = app("views/data.py")
    upload_everything(at)
    at.switch_page("views/failures.py").run()
    at.number_input(key="failures.k").set_value(1).run()
    at.selectbox(key="failures.query").set_value("q1").run()
    no_exceptions(at)
    link = [p for p in at.get("page_link") if "Present" in p.proto.label][0]
    assert link.proto.page.endswith("present") or "present" in link.proto.page
    assert "query=q1" in link.proto.query_string and "k=1" in link.proto.query_string

    at.switch_page("views/present.py").run()
    no_exceptions(at)
    assert at.query_params["query"] == "q1"
    told = markdown(at)
    # User text shown as text: the query's Markdown and HTML arrive as characters, never as markup.
    shown = "\n".join(plain(m.value) for m in at.markdown).replace("\u2060", "")  # the joiner that keeps links out
    assert "**bold** <b>reset</b> [link](http://x)" in shown
    assert "✔ d1" in told  # no titles in this documents file: the doc id names the doc
    assert "#1 d9" in told  # run a put d9 (judged not relevant) first


def back_link(at):
    """The page link labelled "Back to Failures" (the presenter layout's way out)."""
    found = [p for p in at.get("page_link") if p.proto.label == "Back to Failures"]
    assert len(found) == 1, [p.proto.label for p in at.get("page_link")]
    return found[0].proto


def test_present_has_a_way_back_to_failures_with_the_same_selections() -> None:
    at = app("views/present.py", k="5", sort="query", query="q097")
    link = back_link(at)
    assert "failures" in link.page
    shared = dict(part.split("=", 1) for part in link.query_string.split("&"))
    assert shared["k"] == "5" and shared["query"] == "q097" and shared["sort"] == "query"
    at.button(key="present.next").click().run()
    assert f"query={at.query_params['query']}" in back_link(at).query_string  # follows the walk


def chunk_text(run: str, chunk_id: str) -> str:
    with open(CHUNKING / f"{run}.chunks.csv", newline="", encoding="utf-8") as f:
        return next(row["text"] for row in csv.DictReader(f) if row["chunk_id"] == chunk_id)


def test_present_tells_a_run_of_chunks_by_their_text_not_their_ids() -> None:
    at = chunking_sample()
    at.query_params.update(k="5", miss="fragment", query="q308")
    at.switch_page("views/present.py").run()
    no_exceptions(at)
    assert at.query_params["query"] == "q308"
    told = markdown(at)
    assert "got only a fragment at k = 5." in told
    assert not CHUNK_ID.findall(told), CHUNK_ID.findall(told)  # no chunk id anywhere on the screen
    # What came instead in sent1's top 5: its first chunk (integrations-zapier-05#s3) told by its own text.
    first = " ".join(chunk_text("sent1", "integrations-zapier-05#s3").split()[:4])
    assert f"#1 “{first}" in told, told
    # Its chunk of the relevant document (rank 4), the evidence marked inside its text.
    assert re.search(r"#4 :orange-background\[", told), told
    assert "Its relevant chunk · " in told and "% of the evidence" in told
    assert back_link(at).query_string.count("miss=fragment") == 1


def test_a_long_query_shrinks_and_a_very_long_one_is_cut() -> None:
    assert present.shown_query("reset my password") == ("reset my password", "large", False)
    claim = ("Antiretroviral therapy reduces rates of tuberculosis across a broad range of CD4 strata in "
             "adults living with HIV in low income countries")  # a two-line SciFact-like claim
    assert present.shown_query(claim).size in ("medium", "small") and not present.shown_query(claim).cut
    ticket = "word " * 200
    shown = present.shown_query(ticket)
    assert shown.cut and shown.size == "smaller" and len(shown.text) <= present.QUERY_CHARS + 1
    assert shown.text.endswith("…")
