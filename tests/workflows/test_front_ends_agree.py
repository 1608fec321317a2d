"""The command line and the dashboard do the same thing to the workspace: each of the four workflows a person runs
from either front end (save an evaluation, reveal the holdout, flag for re-judging, save a blind judging round) is
driven once through ``evalcore`` (in-process) and once through the dashboard (Streamlit's AppTest on
dashboard/app.py), each in its own temporary workspace, on the sample data (a tune/holdout split, three runs).
Then what landed in the two workspaces is compared: everything but what must differ (ids, timestamps, paths).
"""

from __future__ import annotations

import contextlib
import csv
import io
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from evalcore.access import login_name
from evalcore.cli import main
from evalcore.store.workspace import ENV_VAR, Workspace

ROOT = Path(__file__).resolve().parents[2]
S = ROOT / "sample_data"
APP = str(ROOT / "dashboard" / "app.py")
RUNS = ("base.trec", "tuned.trec", "tuned-256d.trec")
INPUTS = ["--labels", str(S / "labels.tsv"), *(arg for run in RUNS for arg in ("--run", str(S / run)))]
K = 5
QUERY = "q006"  # a tune query every run misses at k = 5 while all agree on another doc: an audit suspect
DEPTH = 10  # the judging pool's depth, the dashboard's default
WHO = login_name()  # the same person on both sides (the dashboard without sign-in names the server's login name)


@pytest.fixture
def workspaces(tmp_path, monkeypatch):
    """``use(name)``: point ``EVALCORE_WORKSPACE`` at a fresh folder (the CLI and the dashboard both read it)."""
    def use(name: str) -> Path:
        folder = tmp_path / name
        monkeypatch.setenv(ENV_VAR, str(folder))
        return folder
    return use


def cli(*args: str) -> str:
    """``evalcore ARGS`` in this process; its stdout (a non-zero exit fails with its stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    assert code == 0, err.getvalue()
    return out.getvalue()


def page(path: str, **params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    for name, value in params.items():
        at.query_params[name] = value
    at.switch_page(path)
    at.run()
    no_exceptions(at)
    return at


def no_exceptions(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


# ---------------------------------------------------------------------------------------------- what landed


def _rows(frame: pd.DataFrame, columns: list[str]) -> list[tuple]:
    if frame.empty:
        return []
    return [tuple(None if pd.isna(v) else v for v in row) for row in frame[columns].itertuples(index=False)]


def landed(folder: Path) -> dict[str, object]:
    """Everything a workflow can write, without ids, timestamps or paths."""
    ws = Workspace(folder)
    versions = []
    for name in ws.label_sets()["name"].tolist():
        for number in ws.label_versions(name)["version"].tolist():
            v = ws.label_version(name, int(number))
            versions.append((v.name, v.version, v.fingerprint, v.n_queries, v.n_judgments, v.change, v.note,
                             v.content_sha256, v.source_sha256, v.source_name, v.parent_version))
    evaluations = []
    for row in ws.evaluations().itertuples():
        saved = ws.evaluation(int(row.id))
        evaluations.append((saved.labels.name, saved.labels.version, saved.labels.fingerprint, saved.k, saved.ks,
                            saved.n_queries, saved.note, saved.labels_file_sha256, saved.settings,
                            tuple((r.name, r.model, r.line, r.file_sha256, r.file_name, r.price_per_mtok, r.dims,
                                   r.index_bytes, r.n_queries, r.n_rows) for r in saved.runs),
                            _rows(saved.summary, ["run", "metric", "mean", "ci_low", "ci_high", "n"])))
    return {
        "label versions": versions,
        "files": sorted(_rows(ws.files(), ["sha256", "name", "size"])),
        "reveals": _rows(ws.reveals(), ["label_set", "version", "fingerprint", "rule", "runs", "who"]),
        "re-judging queue": _rows(ws.rejudge_queue(open_only=False),
                                  ["label_set", "query", "doc_id", "reason", "flagged_by", "resolved_version"]),
        "judging rounds": _rows(ws.judging_rounds(), ["label_set", "version", "query", "depth", "n_docs",
                                                       "n_relevant", "judge"]),
        "evaluations": evaluations,
        "runs": sorted(_rows(ws.runs(), ["name", "model", "line", "file_name", "price_per_mtok", "dims"])),
    }


def assert_same(cli_folder: Path, dashboard_folder: Path) -> dict[str, object]:
    by_cli, by_dashboard = landed(cli_folder), landed(dashboard_folder)
    differ = [part for part in by_cli if by_cli[part] != by_dashboard[part]]
    assert not differ, "\n".join(f"{part}:\n  CLI:       {by_cli[part]}\n  dashboard: {by_dashboard[part]}"
                                 for part in differ)
    return by_cli


# ---------------------------------------------------------------------------------------------- the workflows


def test_saving_an_evaluation(workspaces) -> None:
    workspaces("cli")
    cli("evaluate", *INPUTS, "--k", f"1,{K}", "--save")

    folder = workspaces("dashboard")
    at = page("views/failures.py", k=str(K))
    at.button(key="FormSubmitter:failures.save_form-Save this evaluation to the workspace").click().run()
    no_exceptions(at)
    assert any("Saved: evaluation" in s.value for s in at.success)

    kept = assert_same(folder.parent / "cli", folder)
    [evaluation] = kept["evaluations"]
    assert evaluation[0] == "labels:tune" and evaluation[3] == K and evaluation[4] == (1, K)
    assert evaluation[6] and "tune" in evaluation[6]  # the note names the split the numbers are on
    assert evaluation[7] is not None  # the labels file is attached
    assert [v[0] for v in kept["label versions"]] == ["labels:tune"] and kept["label versions"][0][8] is not None


def test_revealing_the_holdout(workspaces) -> None:
    workspaces("cli")
    cli("evaluate", *INPUTS, "--k", f"1,{K}", "--split", "holdout", "--reveal", "--who", WHO)

    folder = workspaces("dashboard")
    at = page("views/integrity.py", k=str(K))
    [reveal] = [b for b in at.button if b.label.startswith("Reveal the holdout")]
    reveal.click().run()
    no_exceptions(at)

    kept = assert_same(folder.parent / "cli", folder)
    [recorded] = kept["reveals"]
    assert recorded[:2] == ("labels", 1) and recorded[5] == WHO
    [version] = kept["label versions"]
    assert version[3] == 320 and version[8] is not None  # the whole set, with the file it was read from


def test_flagging_for_rejudging(workspaces) -> None:
    workspaces("cli")
    cli("audit", *INPUTS, "--k", f"1,{K}", "--flag", QUERY)

    folder = workspaces("dashboard")
    at = page("views/integrity.py", k=str(K))
    at.multiselect(key="integrity.flag").set_value([QUERY]).run()
    [flag] = [b for b in at.button if b.label == "Flag for blind re-judging"]
    flag.click().run()
    no_exceptions(at)

    kept = assert_same(folder.parent / "cli", folder)
    [entry] = kept["re-judging queue"]
    assert entry[:2] == ("labels", QUERY) and entry[2] is not None  # the doc every run agreed on
    assert [(v[0], v[1]) for v in kept["label versions"]] == [("labels", 1)] and kept["label versions"][0][8]


def test_saving_a_blind_judging_round(workspaces, tmp_path) -> None:
    """The command line judges a saved label set (``audit --flag`` saves it, queued); the dashboard judges the labels
    it loaded, saving them first. Both end with the labels as read (v1, with their file) and the round (v2)."""
    workspaces("cli")
    cli("audit", *INPUTS, "--k", f"1,{K}", "--flag", QUERY)
    pool = tmp_path / "pool.csv"
    cli("judge", "pool", *INPUTS, "--query", QUERY, "--depth", str(DEPTH), "--output", str(pool))
    with pool.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    docs = sorted(row["doc_id"] for row in rows)
    relevant = docs[0]  # one doc marked relevant, every other not
    for row in rows:
        row["relevant"] = "yes" if row["doc_id"] == relevant else "no"
    with pool.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    cli("judge", "save", "labels", str(pool), "--judge", WHO)

    folder = workspaces("dashboard")
    at = page("views/judge.py", query=QUERY)
    assert at.selectbox(key="judge.query").value == QUERY
    shown = sorted(r.key.rsplit(".", 1)[1] for r in at.radio if r.key.startswith(f"judge.mark.{QUERY}.{DEPTH}."))
    assert shown == docs  # the same pool on both sides
    for doc in docs:
        at.radio(key=f"judge.mark.{QUERY}.{DEPTH}.{doc}").set_value("relevant" if doc == relevant else "not relevant")
    at.run()
    at.button(key="judge.save").click().run()
    no_exceptions(at)
    assert any("judged blind at depth 10" in s.value for s in at.success)

    by_cli, by_dashboard = landed(folder.parent / "cli"), landed(folder)
    for part in ("label versions", "judging rounds", "files"):
        assert by_cli[part] == by_dashboard[part], (f"{part}:\n  CLI:       {by_cli[part]}\n"
                                                    f"  dashboard: {by_dashboard[part]}")
    assert by_cli["judging rounds"] == [("labels", 2, QUERY, DEPTH, len(docs), 1, WHO)]
    assert [(v[1], v[8] is not None) for v in by_cli["label versions"]] == [(1, True), (2, False)]
    # What only the command line's path made: the flag that saved the set, resolved by the round.
    assert [(e[1], e[5]) for e in by_cli["re-judging queue"]] == [(QUERY, 2)] and not by_dashboard["re-judging queue"]
