"""Judging by several people from the command line (in-process, `cli_runner.run_cli`): two judges pool the queries of
a sampled queries file and keep their marks apart (``judge save --keep-apart``), ``judge agreement`` prints the
numbers the core and the Integrity page's model give, ``judge disagreements`` lists the pairs they differ on, an owner
adjudicates the ties and ``judge freeze`` makes one version whose queries carry their source and stratum. A person
whose role does not allow a step, and bad input, are refused in one line with nothing written."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest

from cli_runner import run_cli

from evalcore.access import Actor, Role, login_name
from evalcore.analyses.panel import agreement_sentence, disagreements, panel_agreement
from evalcore.store.workspace import Workspace

from dashboard.page_models import integrity, judge as judge_model

DOCS = [f"d{i}" for i in range(10)]
CUSTOMER = [f"c{i}" for i in range(6)]
ANA, LEE, OWNER = "ana", "lee", "ow"


def who(name: str) -> str:
    """How the workspace records a person named with --who (a claim, beside the login name)."""
    return name if name == login_name() else f"{name} (--who; login {login_name()})"


def one_line_refusal(done, *words: str) -> None:
    assert done.returncode == 2, done.stderr
    assert done.stdout == "" and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith("evalcore: error: ") and "Traceback" not in done.stderr
    for word in words:
        assert word in done.stderr, done.stderr


def written(ws: Path) -> tuple:
    """Everything a refused command must leave as it was."""
    store = Workspace(ws)
    return store.counts(), len(store.events()), len(store.panel_marks())


@pytest.fixture
def panel(tmp_path):
    """Labels of two team-written queries saved in a workspace, a run over them and six customer-log queries, and
    the sampled queries file (c0 with a clicked doc the run does not rank)."""
    gen = np.random.default_rng(4)
    ranked = {q: list(gen.permutation(DOCS[:9])[:5]) for q in ["t1", "t2", *CUSTOMER]}
    (tmp_path / "labels.csv").write_text("query,doc_id,grade,query_text,source\nt1,d1,1,words of t1,team_written\n"
                                         "t2,d2,1,words of t2,team_written\n", encoding="utf-8")
    (tmp_path / "base.trec").write_text("".join(f"{q} Q0 {d} {r} {100 - r} base\n" for q, docs in ranked.items()
                                                for r, d in enumerate(docs, start=1)), encoding="utf-8")
    (tmp_path / "sample.csv").write_text("query_id,query_text,source,stratum,count,clicked_doc_ids\n" + "".join(
        f"{q},words of {q},customer log,{'head' if i < 3 else 'tail'},{9 - i},{'d9' if q == 'c0' else ''}\n"
        for i, q in enumerate(CUSTOMER)), encoding="utf-8")
    ws = tmp_path / "ws"
    saved = cli(tmp_path, ws, "evaluate", "--labels", "labels.csv", "--run", "base.trec", "--k", "1", "--save")
    assert saved.returncode == 0, saved.stderr
    return tmp_path, ws


def cli(folder: Path, ws: Path, *args: object):
    return run_cli(*args, env={"EVALCORE_WORKSPACE": str(ws)}, cwd=folder)


def pool_rows(folder: Path, ws: Path, query: str) -> list[dict]:
    out = folder / f"{query}.pool.csv"
    made = cli(folder, ws, "judge", "pool", "--labels", "labels.csv", "--run", "base.trec", "--queries", "sample.csv",
               "--query", query, "--depth", "3", "--output", out)
    assert made.returncode == 0, made.stderr
    with out.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def filled(folder: Path, name: str, rows: list[dict], marks: dict[str, str]) -> Path:
    path = folder / name
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows({**row, "relevant": marks[row["doc_id"]]} for row in rows)
    return path


def judged_by_two(folder: Path, ws: Path) -> None:
    """Ana and Lee mark every customer query's pool, each with their own --keep-apart save."""
    gen = np.random.default_rng(0)
    for query in CUSTOMER:
        rows = pool_rows(folder, ws, query)
        for person in (ANA, LEE):
            marks = {r["doc_id"]: "yes" if gen.random() < 0.5 else "no" for r in rows}
            kept = cli(folder, ws, "judge", "save", "labels", filled(folder, f"{query}.{person}.csv", rows, marks),
                       "--keep-apart", "--judge", person)
            assert kept.returncode == 0, kept.stderr
            assert f"kept the marks of {who(person)} on {query}" in kept.stderr and "no version" in kept.stderr


def test_a_sampled_queries_file_gives_the_pool_its_text_logged_docs_source_and_stratum(panel) -> None:
    folder, ws = panel
    rows = pool_rows(folder, ws, "c0")
    assert list(rows[0])[:4] == ["query", "query_text", "source", "stratum"]
    assert {(r["query_text"], r["source"], r["stratum"]) for r in rows} == {("words of c0", "customer log", "head")}
    assert "d9" in {r["doc_id"] for r in rows} and len(rows) == 4  # the run's top 3 and the clicked doc
    plain = cli(folder, ws, "judge", "pool", "--labels", "labels.csv", "--run", "base.trec", "--query", "t1",
                "--depth", "3")
    assert plain.returncode == 0 and plain.stdout.splitlines()[0] == \
        "query,query_text,doc_id,pool_depth,labels,fingerprint,relevant"  # without a sample: the pool as before


def test_two_judges_their_agreement_as_the_page_shows_it_adjudication_and_a_frozen_version(panel) -> None:
    folder, ws = panel
    rows = pool_rows(folder, ws, "c0")
    cli(folder, ws, "judge", "save", "labels", filled(folder, "alone.csv", rows, {r["doc_id"]: "no" for r in rows}),
        "--keep-apart", "--judge", ANA)
    alone = cli(folder, ws, "judge", "agreement", "labels")
    assert alone.returncode == 0 and alone.stdout.startswith("No two judges have marked the same pair")
    assert json.loads(cli(folder, ws, "judge", "agreement", "labels", "--format", "json").stdout)["sentence"] is None

    judged_by_two(folder, ws)
    store = Workspace(ws)
    log = store.panel_marks("labels")
    events = store.events(action="judge marks")
    assert set(events["who"]) == {who(ANA), who(LEE)} and not events["detail"].str.contains("relevant").any()

    found = panel_agreement(log, rng=0)
    shown = integrity.judges_agreement("labels", log)  # the Integrity page's model
    assert shown.sentence == judge_model.panel_status("labels", log).sentence  # and the adjudicator's
    data = json.loads(cli(folder, ws, "judge", "agreement", "labels", "--format", "json").stdout)
    assert data["sentence"] == agreement_sentence(found) == shown.sentence
    assert data["judges"] == list(found.judges) == list(shown.judges) == sorted([who(ANA), who(LEE)])
    assert data["n_judges"] == 2 and data["statistic"] == found.headline.statistic == "Cohen's kappa"
    assert (data["n_pairs"], data["n_queries"], data["n_single"]) == (found.n_pairs, found.n_queries, found.n_single)
    assert [s["statistic"] for s in data["statistics"]] == list(found.statistics) == list(shown.statistics["statistic"])
    for got, (name, stat), page_row in zip(data["statistics"], found.statistics.items(),
                                           shown.statistics.to_dict("records")):
        for number, core in (("value", stat.value), ("ci_low", stat.low), ("ci_high", stat.high)):
            assert got[number] == (core if math.isfinite(core) else None)
            assert got[number] == (page_row[number] if math.isfinite(page_row[number]) else None)
        assert (got["pairs"], got["queries"], got["level"], got["resamples"], got["seed"]) == \
            (stat.n_units, stat.n_groups, 0.95, stat.n_resamples, 0) == \
            (page_row["pairs"], page_row["queries"], page_row["level"], page_row["resamples"], page_row["seed"])
    differ = disagreements(log)
    assert not differ.empty and differ["tied"].all()  # two judges: every disagreement is a tie
    assert data["disagreements"] == {"open": len(differ), "tied": len(differ), "decided": 0}
    assert (data["open_queries"], data["open_pairs"], data["unresolved"]) == \
        (shown.open_queries, shown.open_pairs, shown.unresolved) == (len(CUSTOMER), shown.open_pairs, len(differ))

    table = cli(folder, ws, "judge", "agreement", "labels")
    assert table.returncode == 0, table.stderr
    first = table.stdout.split("\n\n")[0]
    assert " ".join(first.split()) == shown.sentence  # the sentence first, word for word (wrapped like a headline)
    cohen = found.statistics["Cohen's kappa"]
    kappa = next(line for line in table.stdout.splitlines() if line.startswith("Cohen's kappa"))
    assert kappa.split()[2:5] == [f"{cohen.value:.4f}", f"{cohen.low:.4f}", f"{cohen.high:.4f}"]
    assert f"{len(differ)} open pairs the judges disagree on ({len(differ)} tied, 0 decided" in " ".join(
        table.stdout.split())
    reseeded = json.loads(cli(folder, ws, "judge", "agreement", "labels", "--seed", "7", "--format", "json").stdout)
    assert reseeded["statistics"][1]["ci_low"] == panel_agreement(log, rng=7).statistics["Cohen's kappa"].low

    listed = json.loads(cli(folder, ws, "judge", "disagreements", "labels", "--format", "json").stdout)
    assert [(p["query"], p["doc_id"]) for p in listed["pairs"]] == list(zip(differ["query"], differ["doc_id"]))
    assert listed["open"] == len(differ) and all(p["tied"] and p["decided"] == "" for p in listed["pairs"])
    assert all(who(ANA) in p["marks"] and who(LEE) in p["marks"] for p in listed["pairs"])
    as_csv = list(csv.DictReader(io.StringIO(cli(folder, ws, "judge", "disagreements", "labels", "--format",
                                                 "csv").stdout)))
    assert [(r["query"], r["doc_id"]) for r in as_csv] == list(zip(differ["query"], differ["doc_id"]))
    text = cli(folder, ws, "judge", "disagreements", "labels").stdout
    assert text.startswith(f"{len(differ)} open pairs the judges of label set labels disagree on")

    before = written(ws)
    refused = cli(folder, ws, "judge", "freeze", "labels")
    one_line_refusal(refused, "tied", "decide them first")
    assert written(ws) == before  # nothing written
    for pair in differ.itertuples():
        decided = cli(folder, ws, "judge", "adjudicate", "labels", "--query", pair.query, "--doc", pair.doc_id,
                      "--relevant", "yes", "--note", "the doc answers it", "--who", OWNER)
        assert decided.returncode == 0 and "as relevant" in decided.stderr, decided.stderr
    after = json.loads(cli(folder, ws, "judge", "agreement", "labels", "--format", "json").stdout)
    assert after["disagreements"]["decided"] == len(differ) and after["unresolved"] == 0
    assert after["freeze"].startswith("evalcore judge freeze labels makes one new label-set version with 6 queries")

    frozen = cli(folder, ws, "judge", "freeze", "labels", "--who", OWNER)
    assert frozen.returncode == 0, frozen.stderr
    assert "label set labels v2" in frozen.stderr and "6 queries" in frozen.stderr
    labels = Workspace(ws).load_labels("labels")
    assert labels.field("source")[CUSTOMER].tolist() == ["customer log"] * 6
    assert labels.field("stratum")[CUSTOMER].tolist() == ["head"] * 3 + ["tail"] * 3
    assert labels.field("source")["t1"] == "team_written" and labels.field("query_text")["c4"] == "words of c4"
    assert labels.field("blind")[CUSTOMER].astype(bool).all()
    events = Workspace(ws).events()
    assert set(events.loc[events["action"].isin(["adjudicate", "freeze judging panel"]), "who"]) == {who(OWNER)}
    done = json.loads(cli(folder, ws, "judge", "agreement", "labels", "--format", "json").stdout)
    assert done["open_pairs"] == 0 and done["sentence"] == data["sentence"]  # agreement spans frozen marks too
    one_line_refusal(cli(folder, ws, "judge", "freeze", "labels"), "Nothing to freeze")


def test_a_person_whose_role_does_not_allow_a_step_is_refused_in_one_line(panel, monkeypatch) -> None:
    """The command line acts as the workspace's owner; a viewer (or a judge who may not adjudicate) is refused by the
    session, before anything is written, in one line."""
    folder, ws = panel
    rows = pool_rows(folder, ws, "c1")
    marks = filled(folder, "marks.csv", rows, {r["doc_id"]: "yes" for r in rows})
    before = written(ws)
    viewer = Actor("vi@example.com", Role.VIEWER, "signed in")
    monkeypatch.setattr("evalcore.cli.judge.local_actor", lambda name=None: viewer)
    one_line_refusal(cli(folder, ws, "judge", "save", "labels", marks, "--keep-apart"),
                     "vi@example.com is a viewer here and may not judge blind")
    editor = Actor("ed@example.com", Role.EDITOR, "signed in")
    monkeypatch.setattr("evalcore.cli.judge_panel.local_actor", lambda name=None: editor)
    one_line_refusal(cli(folder, ws, "judge", "adjudicate", "labels", "--query", "c1", "--doc", rows[0]["doc_id"],
                         "--relevant", "no"), "ed@example.com is an editor here", "needs the owner role")
    one_line_refusal(cli(folder, ws, "judge", "freeze", "labels"), "needs the owner role")
    assert written(ws) == before


def test_bad_input_is_one_line_naming_the_file_line_and_value(panel) -> None:
    folder, ws = panel
    rows = pool_rows(folder, ws, "c2")
    marks = {r["doc_id"]: "yes" for r in rows}
    marks[rows[1]["doc_id"]] = "maybe"
    bad = filled(folder, "bad.csv", rows, marks)
    before = written(ws)
    one_line_refusal(cli(folder, ws, "judge", "save", "labels", bad, "--keep-apart"),
                     "bad.csv, line 3: expected a mark of relevant", "got 'maybe'")
    marks[rows[1]["doc_id"]] = ""
    one_line_refusal(cli(folder, ws, "judge", "save", "labels", filled(folder, "empty.csv", rows, marks),
                         "--keep-apart"), "empty.csv, line 3: expected a mark")
    one_line_refusal(cli(folder, ws, "judge", "save", "labels", folder / "missing.csv", "--keep-apart"),
                     "missing.csv: expected an existing judging pool CSV")
    good = filled(folder, "good.csv", rows, {r["doc_id"]: "no" for r in rows})
    one_line_refusal(cli(folder, ws, "judge", "save", "lables", good, "--keep-apart"),
                     "No label set named 'lables'", "Label sets: labels")
    one_line_refusal(cli(folder, ws, "judge", "adjudicate", "labels", "--query", "c2", "--doc", rows[0]["doc_id"],
                         "--relevant", "perhaps"), "--relevant: expected a mark", "got 'perhaps'")
    one_line_refusal(cli(folder, ws, "judge", "adjudicate", "labels", "--query", "c2", "--doc", rows[0]["doc_id"],
                         "--relevant", "yes"), "the judges do not disagree on it")
    one_line_refusal(cli(folder, ws, "judge", "agreement", "labels", "--level", "1.5"), "1.5")
    assert written(ws) == before


def test_ids_that_look_like_formulas_are_formula_safe_in_csv_and_exact_elsewhere(tmp_path) -> None:
    (tmp_path / "labels.jsonl").write_text('{"query": "q1", "doc_id": "plain", "grade": 1}\n', encoding="utf-8")
    (tmp_path / "run.jsonl").write_text('{"query": "q1", "ranked": ["=cmd", "-minus", "plain"]}\n', encoding="utf-8")
    ws = tmp_path / "ws"
    assert cli(tmp_path, ws, "evaluate", "--labels", "labels.jsonl", "--run", "run.jsonl", "--save").returncode == 0
    rows = list(csv.DictReader(io.StringIO(cli(tmp_path, ws, "judge", "pool", "--labels", "labels.jsonl", "--run",
                                               "run.jsonl", "--query", "q1", "--depth", "3").stdout)))
    for person, yes in ((ANA, "'=cmd"), (LEE, "plain")):
        marks = {r["doc_id"]: "yes" if r["doc_id"] in (yes, "plain") else "no" for r in rows}
        saved = cli(tmp_path, ws, "judge", "save", "labels", filled(tmp_path, f"{person}.csv", rows, marks),
                    "--keep-apart", "--judge", person)
        assert saved.returncode == 0, saved.stderr
    shown = cli(tmp_path, ws, "judge", "disagreements", "labels", "--format", "csv").stdout
    assert [r["doc_id"] for r in csv.DictReader(io.StringIO(shown))] == ["'=cmd"]  # formula-safe
    exact = json.loads(cli(tmp_path, ws, "judge", "disagreements", "labels", "--format", "json").stdout)
    assert [p["doc_id"] for p in exact["pairs"]] == ["=cmd"]
    decided = cli(tmp_path, ws, "judge", "adjudicate", "labels", "--query", "q1", "--doc", "=cmd", "--relevant", "no")
    assert decided.returncode == 0, decided.stderr
    assert cli(tmp_path, ws, "judge", "freeze", "labels").returncode == 0
    judged = Workspace(ws).load_labels("labels").judgments.set_index("doc_id")["grade"].to_dict()
    assert judged == {"=cmd": 0.0, "-minus": 0.0, "plain": 1.0}
