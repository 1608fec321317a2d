"""The meeting report: numbers with their context, charts embedded, user text escaped, formula-safe CSV, and
the `evalcore report` command."""

from __future__ import annotations

import base64
import csv
import io
import re
from pathlib import Path

import pandas as pd
import pytest

import evalcore
from evalcore.report.meeting import FAILURE_COLUMNS, build_report, report_from_workspace
from evalcore.readers.runs import read_run
from evalcore.store.workspace import ENV_VAR, Workspace

from cli_runner import run_cli

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
SEED = SAMPLE / "seed_example"


def test_html_report_carries_every_number_with_its_context_and_embeds_charts(tmp_path) -> None:
    ws = Workspace(tmp_path)
    labels_file = ws._put_file(SAMPLE / "labels.tsv")
    run_files = {name: ws._put_file(SAMPLE / f"{name}.trec") for name in ("base", "tuned")}
    evaluation = evalcore.evaluate_runs([SAMPLE / "base.trec", SAMPLE / "tuned.trec"], SAMPLE / "labels.tsv",
                                        k=(1, 5))
    saved = ws._save_evaluation(evaluation, k=5, labels_file=labels_file, run_files=run_files)
    report = report_from_workspace(ws, saved.id, docs=SAMPLE / "docs.jsonl")
    page = report.to_html()

    summary = evaluation.summary.set_index(["run", "metric"])
    for run in ("base", "tuned"):
        for metric in ("recall@1", "recall@5", "hit@5", "mrr"):
            mean, low, high = summary.loc[(run, metric), ["mean", "ci_low", "ci_high"]]
            assert f"{mean:.4f} ({low:.4f} to {high:.4f})" in page, (run, metric)
        assert evaluation[run].model in page
    fingerprint = evaluation.labels.fingerprint
    assert f"labels v1 #{fingerprint}" in page
    assert "n = 320 evaluated queries" in page and "report at k = 5" in page and "seed 0" in page
    assert "95% intervals" in page
    assert labels_file.sha256[:12] in page and run_files["tuned"].sha256[:12] in page  # provenance of the inputs
    assert "Paired comparison" in page and "tuned beats base on recall@1" in page
    assert "The k to take, and the cost at k = 5" in page and "o200k_base" in page
    assert "Top open failures" in page
    pngs = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(pngs) == 2 and all(base64.b64decode(p).startswith(b"\x89PNG\r\n\x1a\n") for p in pngs)
    assert 'alt="Recall against k with 95% bands, the report&#x27;s k and each run&#x27;s k to take"' in page
    assert "<script" not in page.lower() and "http" not in page.replace(
        "https://vega.github.io", "")  # self-contained: nothing fetched

    leader = report.leaderboard
    assert leader["run"].tolist() == ["tuned", "base"]  # best recall@5 first
    assert (leader["fingerprint"] == fingerprint).all() and (leader["n"] == 320).all()


def _hostile_workspace(tmp_path: Path) -> tuple[Workspace, int]:
    labels = pd.DataFrame({
        "query": ["q1", "q2", "q3", "q4"],
        "doc_id": ["d1", "d2", "d3", "d4"],
        "query_text": ["<script>alert('x')</script>", "=cmd|' /C calc'!A0", "+SUM(A1:A9)", "plain words"],
    })
    ws = Workspace(tmp_path)

    def save(name: str, ranked: dict) -> int:
        run = read_run(ranked, name=name, model="m<i>odel</i>")
        return ws._save_evaluation(evalcore.evaluate_runs([run], labels, k=(1, 3), n_resamples=200), k=1).id

    save("v1", {"q1": ["x", "d1"], "q2": ["x", "y", "d2"], "q3": ["d3"], "q4": ["d4"]})
    latest = save("v2", {"q1": ["x", "d1"], "q2": ["x", "y", "d2"], "q3": ["x", "d3"], "q4": ["d4"]})
    ws.archive._set_note("m<i>odel</i>", "q1", "<img src=x onerror=alert(1)>")
    ws.archive._add_tag("m<i>odel</i>", "q2", "label wrong")
    return ws, latest


def test_user_text_is_escaped_and_regressions_come_first(tmp_path) -> None:
    ws, latest = _hostile_workspace(tmp_path)
    report = report_from_workspace(ws, latest)
    page = report.to_html(charts=False)
    assert "<script>" not in page and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<i>odel" not in page and "m&lt;i&gt;odel&lt;/i&gt;" in page
    text = report.to_markdown()
    assert not re.search(r"(?<!\\)<(script|img|i>)", text)  # every < of user text is escaped in Markdown
    assert "\\<script\\>" in text and "\\<img src=x" in text and "m\\<i\\>odel" in text

    failures = report.failures
    assert failures["query"].tolist() == ["q3", "q2", "q1"]  # q3 regressed in v2: first
    assert failures.iloc[0]["status"] == "regressed" and failures.iloc[0]["regressed"]
    assert failures.iloc[1]["since"] == "#1 v1"
    rows = text[text.index("## Top open failures"):]
    assert rows.index("| v2 | q3 |") < rows.index("| v2 | q2 |") < rows.index("| v2 | q1 |")


def test_failures_csv_neutralises_formulas(tmp_path) -> None:
    ws, latest = _hostile_workspace(tmp_path)
    rows = list(csv.DictReader(io.StringIO(report_from_workspace(ws, latest).failures_csv())))
    assert list(rows[0]) == FAILURE_COLUMNS
    texts = {r["query"]: r["query_text"] for r in rows}
    assert texts["q2"] == "'=cmd|' /C calc'!A0" and texts["q3"] == "'+SUM(A1:A9)"
    assert all(r["k"] == "1" and r["n"] == "4" and r["fingerprint"] and r["labels_version"] == "1" for r in rows)
    assert {r["tags"] for r in rows if r["query"] == "q2"} == {"label wrong"}


def test_report_without_a_workspace_lists_untracked_failures() -> None:
    evaluation = evalcore.evaluate_runs([SEED / "run.json"], SEED / "labels.json", k=(1, 3), n_resamples=200)
    report = build_report(evaluation, k=1)
    assert set(report.failures["status"]) == {"untracked"}
    assert set(report.failures["query"]) == {"reset my password", "enterprise sso"}
    assert report.comparison is None
    # No documents: the cost of k counts every chunk at the core's default size, and says so.
    assert report.budget is not None and "chunk_size_assumed" in {w.code for w in report.budget.warnings}
    text = report.to_markdown()
    assert "0.1667 (" in text
    import hashlib

    assert report.provenance["labels"]["sha256"] == hashlib.sha256((SEED / "labels.json").read_bytes()).hexdigest()
    assert hashlib.sha256((SEED / "labels.json").read_bytes()).hexdigest()[:12] in text
    with pytest.raises(evalcore.UsageError, match="'k' parameter"):
        build_report(evaluation, k=7)


def test_cli_report_from_files_and_from_the_workspace(tmp_path) -> None:
    out = run_cli("report", "--labels", SEED / "labels.json", "--run", SEED / "run.json", "--k", "1",
                  "--output", tmp_path / "seed.md", "--failures-csv", tmp_path / "failures.csv")
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "seed-leaderboard.png").read_bytes().startswith(b"\x89PNG")
    markdown = (tmp_path / "seed.md").read_text()
    assert "](seed-leaderboard.png)" in markdown and "untracked" in markdown
    assert len(list(csv.DictReader((tmp_path / "failures.csv").open()))) == 2

    env = {ENV_VAR: str(tmp_path / "ws")}
    assert run_cli("evaluate", "--labels", SEED / "labels.json", "--run", SEED / "run.json", "--k", "1,3", "--save",
                   env=env).returncode == 0
    page = run_cli("report", "--format", "html", "--no-charts", env=env)
    assert page.returncode == 0, page.stderr
    assert page.stdout.startswith("<!DOCTYPE html>") and "evaluation 1, the latest" in page.stderr
    assert "Evaluation 1, saved" in page.stdout

    both = run_cli("report", "--evaluation", "1", "--labels", SEED / "labels.json", "--run", SEED / "run.json",
                   env=env)
    assert both.returncode == 2 and "not both" in both.stderr


def test_the_reports_k_table_takes_the_same_k_as_its_headline() -> None:
    # No trade-off given (the report has no value per recall point): each run's k is its elbow, as the Choose k
    # headline at the top says, not the placeholder lambda's pick.
    from evalcore.analyses.k_decision import k_decision

    evaluation = evalcore.evaluate_runs([SAMPLE / "base.trec", SAMPLE / "tuned.trec"], SAMPLE / "labels.tsv",
                                        k=(1, 5))
    report = build_report(evaluation, k=5, docs=SAMPLE / "docs.jsonl")
    text = report.to_markdown()
    assert "k to take (rule)" in text and "recommended k" not in text
    for run in report.budget:
        decided = k_decision(run)
        assert decided.basis == "elbow" and f"{decided.k} (elbow: no trade-off given)" in text
        assert f"k = {decided.k} for {run.name}" in text  # the headline's k for this run
        # the stability sentence is the elbow's, never the placeholder lambda's pick
        assert f"k = {decided.k} \\(the elbow\\)" in text and "rule_k" in run.rule
    assert "trade-off" not in text.replace("no trade-off given", "")


def test_the_answers_come_first_and_the_details_in_an_appendix_on_a_page_of_its_own() -> None:
    evaluation = evalcore.evaluate_runs([SAMPLE / "base.trec", SAMPLE / "tuned.trec"], SAMPLE / "labels.tsv",
                                        k=(1, 5))
    report = build_report(evaluation, k=5, docs=SAMPLE / "docs.jsonl")
    text = report.to_markdown()
    order = ["## The answer", "## Leaderboard at k = 5", "## Top open failures at k = 5", "## Appendix: details",
             "### Paired comparison", "### The k to take, and the cost at k = 5",
             "### The leaderboard at k = 5 drawn, and what its metrics mean", "### Provenance"]
    assert [text.index(h) for h in order] == sorted(text.index(h) for h in order)
    answers = text[:text.index("## Appendix: details")]
    assert report.headline.split(" (")[0].replace("Best run: ", "") in answers and "base: " in answers
    assert "recall@1: Share of" not in answers and "Planner" not in answers  # details wait in the appendix

    page = report.to_html(charts=False)
    appendix = page.index('<section class="appendix">')
    assert "break-before:page" in page and "@page{size:A4" in page
    assert page.index("<h2>The answer</h2>") < page.index("<h2>Top open failures at k = 5") < appendix
    assert page.index("Appendix: details") > appendix and page.count("Appendix: details") == 1
    assert page.index("<h3>Paired comparison</h3>") > appendix and page.index("<h3>Provenance</h3>") > appendix


def test_page_one_cuts_long_failures_and_the_appendix_lists_them_in_full(tmp_path) -> None:
    ws, latest = _hostile_workspace(tmp_path)
    note = "<b>bold</b> " * 12  # long, and markup
    ws.archive._set_note("m<i>odel</i>", "q1", note)
    report = report_from_workspace(ws, latest)
    page = report.to_html(charts=False)
    answers, appendix = page.split('<section class="appendix">')
    assert "<b>" not in page and "&lt;b&gt;bold&lt;/b&gt; &lt;b&gt;bold" in answers
    assert "…" in answers and "Cut to fit the page" in answers
    assert "&lt;b&gt;bold&lt;/b&gt; " * 11 not in answers and "&lt;b&gt;bold&lt;/b&gt; " * 11 in appendix
    assert "Top open failures at k = 1 in full" in appendix
    text = report.to_markdown()
    assert "\\<b\\>bold\\</b\\> " * 11 in text[text.index("## Appendix: details"):]

    # With top failures that fit, nothing is cut and the appendix has no second list.
    ws.archive._set_note("m<i>odel</i>", "q1", "short")
    page = report_from_workspace(ws, latest).to_html(charts=False)
    assert "Cut to fit" not in page and "in full" not in page


def test_page_one_shares_its_room_among_the_runs() -> None:
    from evalcore.report.meeting_tables import page_one_room

    assert [page_one_room(runs, 5) for runs in (1, 2, 3, 4, 6, 12)] == [5, 5, 5, 3, 1, 1]
    assert page_one_room(1, 40) == 15 and page_one_room(2, 40) == 7 and page_one_room(3, 0) == 0


def test_compact_png_is_the_same_image_smaller() -> None:
    import struct
    import zlib

    from evalcore.report.meeting_render import compact_png

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    width, height = 64, 32
    pixels = b"".join(b"\x01" + bytes([200, 30, 30, 255]) + b"\x00" * (4 * (width - 1)) for _ in range(height))
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
           + chunk(b"pHYs", struct.pack(">IIB", 2835, 2835, 1)) + chunk(b"IDAT", zlib.compress(pixels, 0))
           + chunk(b"IEND", b""))
    small = compact_png(png)
    assert len(small) < len(png) / 4 and small[:8] == png[:8] and small[8:33] == png[8:33]  # signature, IHDR
    chunks, at = {}, 8
    while at < len(small):
        size, kind = struct.unpack(">I4s", small[at:at + 8])
        body = small[at + 8:at + 8 + size]
        assert struct.unpack(">I", small[at + 8 + size:at + 12 + size])[0] == zlib.crc32(kind + body)
        chunks[kind] = body
        at += 12 + size
    assert list(chunks) == [b"IHDR", b"pHYs", b"IDAT", b"IEND"] and zlib.decompress(chunks[b"IDAT"]) == pixels
    assert compact_png(b"not a png") == b"not a png" and compact_png(png[:40]) == png[:40]


def test_control_characters_in_user_text_are_shown_escaped_in_the_markdown_report(tmp_path) -> None:
    # ESC, BEL, a line separator and a bidi override in what the customer typed: visible and harmless in the
    # Markdown page, as written, never raw.
    labels = tmp_path / "labels.csv"
    labels.write_text("query,doc_id,grade,query_text\nq1,d1,1,\"red \x1b[31mALERT\x07 line\u2028two \u202eevil\"\n"
                      "q2,d2,1,plain\n", encoding="utf-8")
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 x 1 9 r\nq2 Q0 d2 1 9 r\n", encoding="utf-8")
    evaluation = evalcore.evaluate_runs([run], labels, k=(1, 5))
    text = build_report(evaluation, k=5).to_markdown()
    assert not any(c in text for c in "\x1b\x07\u2028\u202e")
    assert "\\\\x1b" in text and "\\\\x07" in text and "\\\\u202e" in text  # (the reader makes U+2028 a space)


def test_the_failure_table_says_where_the_relevant_doc_landed_as_the_failures_page_does(tmp_path) -> None:
    """A relevant doc below k is "rank N", one the run did not return "not in its top N" (N: how many it returned),
    a query the run has no list for "query not in run": in the report from files and from the workspace."""
    labels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}, "q4": {"d4": 1}}
    run = {"q1": ["x1", "x2", "d1"], "q2": ["x1", "x2", "x3"], "q3": ["d3"]}  # q4: not in the run
    evaluation = evalcore.evaluate_runs([run], labels, k=(1,), n_resamples=200)
    ws = Workspace(tmp_path)
    saved = ws._save_evaluation(evaluation, k=1)
    for report in (build_report(evaluation, k=1), report_from_workspace(ws, saved.id)):
        assert dict(zip(report.failures["query"], report.failures["n_returned"])) == {"q1": 3, "q2": 3, "q4": 0}
        text = report.to_markdown().replace("\\", "")
        rows = {line.split(" | ")[1]: line for line in text.splitlines() if re.match(r"\| \S+ \| q\d \|", line)}
        assert "| rank 3 |" in rows["q1"] and "| not in its top 3 |" in rows["q2"]
        assert "| query not in run |" in rows["q4"] and "not in its list" not in text
