"""The headlines the presented pages open on say the same sentence everywhere: the Overview's in ``evalcore
evaluate`` and ``evalcore compare`` (text and JSON), in the meeting report and on the dashboard, from the same
numbers; and the checks the Overview keeps behind "Show every check" are said in words on the Integrity page."""

from __future__ import annotations

import json

import evalcore
from cli_runner import run_cli
from evalcore.analyses.coverage import number_caveats
from evalcore.analyses.headline import best_run
from evalcore.metrics.split import scoring_labels
from evalcore.report.checks import check_sentence
from evalcore.report.headlines import overview_headline
from evalcore.report.meeting import build_report
from tests.dashboard.apptest_helpers import ROOT, app, texts

SAMPLE = ROOT / "sample_data"
RUNS = ("base", "tuned", "tuned-256d")


def _tune_evaluation(ks=(1, 10)):
    """The sample scored as every surface scores it by default: the tune split."""
    labels = scoring_labels(evalcore.read_labels(SAMPLE / "labels.tsv"))
    return labels.evaluate([evalcore.read_run(SAMPLE / f"{r}.trec") for r in RUNS], ks)


def test_the_overview_headline_is_one_sentence_on_every_surface() -> None:
    files = ["--labels", SAMPLE / "labels.tsv"] + [a for r in RUNS for a in ("--run", SAMPLE / f"{r}.trec")]
    table = run_cli("evaluate", *files, "--k", "1,10")
    assert table.returncode == 0, table.stderr
    cli_text = " ".join(table.stdout.split("\n\n")[0].split("\n"))  # the first paragraph, its lines joined
    as_json = json.loads(run_cli("evaluate", *files, "--k", "1,10", "--format", "json").stdout)["headline"]
    compared = run_cli("compare", *files)
    compare_text = " ".join(compared.stdout.split("\n\n")[0].split("\n"))
    compare_json = json.loads(run_cli("compare", *files, "--format", "json").stdout)["headline"]

    report = build_report(_tune_evaluation(), k=10)
    expected = overview_headline(best_run(_tune_evaluation()))
    assert expected.startswith("Best run: tuned (") and "puts a relevant document first for 66% of queries" in expected
    assert cli_text == as_json == compare_text == compare_json == report.headline == expected
    assert expected in report.to_html(charts=False).replace("&#x27;", "'")

    at = app()  # the Overview, on the sample data (the tune split)
    shown = texts(at)
    best, evidence = expected.split(". ", 1)
    assert f"{best}." in shown and evidence in shown
    assert at.subheader[0].value.replace("\\", "") == f"{best}."  # the first thing under the page's header

    # The chart and the table under the headline show the headline's own metric, with its numbers: the same word.
    found = best_run(_tune_evaluation())
    assert "(hit@1)" in json.loads(at.get("vega_lite_chart")[0].proto.spec)["title"]["text"]
    table = at.dataframe[0].value.set_index("run")  # the chart's numbers, as a table
    assert {r: round(table.loc[r, "hit@1"], 6) for r in RUNS} == {r: round(i.point, 6) for r, i in found.means.items()}
    assert table.loc[found.best, "hit@1 95% CI"] == f"{found.means[found.best].low:.3f} – {found.means[found.best].high:.3f}"


def test_every_check_is_behind_a_toggle_on_the_overview_and_said_in_words_on_integrity() -> None:
    at = app()
    columns = set(at.dataframe[0].value.columns)
    assert "blind share" not in columns and "recall@10 judged depth" not in columns
    at.toggle[1].set_value(True).run()
    assert {"blind share", "recall@10 judged depth", "recall@10 bounds"} <= set(at.dataframe[0].value.columns)
    assert at.query_params["checks"] == "1"

    integrity = app("views/integrity.py", k="10")
    words = texts(integrity)
    for row in number_caveats(_tune_evaluation(), 10).to_dict("records"):
        assert check_sentence(row) in words
