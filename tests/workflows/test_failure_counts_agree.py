"""One word, one number: how many queries failed at k reads the same on the dashboard, the command line, the
meeting report and the failure ledger, and equals a slow count from the files.

Two named meanings (`evalcore.metrics.failure`): "missed a relevant doc" (some relevant doc outside the top k) and
"found nothing relevant" (none in the top k), the failures: what the Failures page opens on and every other surface
counts. Checked on the sample data (its tune split, three runs) and on a
generated set where every query has two to four relevant docs, so the two meanings give different counts.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from evalcore.store.workspace import ENV_VAR
from cli_runner import run_cli
from reference import order_scored

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
APP = str(ROOT / "dashboard" / "app.py")
K = 10


# ------------------------------------------------------------------------------------------- slow truth


def _slow_counts(labels: Path, runs: dict[str, Path], split: str | None) -> dict[str, dict[str, int]]:
    """Per run: {"any": queries missing some relevant doc in the top K, "none": queries with no relevant doc there}."""
    relevant: dict[str, set[str]] = {}
    with open(labels, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t" if labels.suffix == ".tsv" else ","):
            if split is not None and row.get("split") != split:
                continue
            relevant.setdefault(row["query"], set())
            if float(row["grade"]) >= 1:
                relevant[row["query"]].add(row["doc_id"])
    evaluated = {q: docs for q, docs in relevant.items() if docs}
    counts = {}
    for name, path in runs.items():
        scored: dict[str, list[tuple[str, float]]] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            query, _, doc, _, score, _ = line.split()
            scored.setdefault(query, []).append((doc, float(score)))
        any_missed = nothing_found = 0
        for query, docs in evaluated.items():
            found = len(set(order_scored(scored.get(query, []))[:K]) & docs)
            any_missed += found < len(docs)
            nothing_found += found == 0
        counts[name] = {"any": any_missed, "none": nothing_found}
    return counts


# ------------------------------------------------------------------------------------------- the surfaces


def _dashboard_counts(at: AppTest) -> dict[str, dict[str, int]]:
    """The Failures page's sentence per run, for each meaning (the ``miss`` toggle, in the URL)."""
    counts: dict[str, dict[str, int]] = {}
    for mode, words in (("none", "found nothing relevant"), ("any", "missed a relevant doc")):
        at.query_params["k"] = str(K)
        if mode == "any":  # the wider list, asked for; the page opens on the failures ("none")
            at.query_params["miss"] = "any"
        else:
            at.query_params.pop("miss", None)
        at.switch_page("views/failures.py").run()
        assert not at.exception, [e.value for e in at.exception]
        text = "\n".join(m.value for m in at.markdown).replace("\\", "")
        found = re.findall(rf"([\w-]+): ([\d,]+) of ([\d,]+) queries {words} at k = {K}", text)
        assert found, text[:2000]
        for run, count, _ in found:
            counts.setdefault(run, {})[mode] = int(count.replace(",", ""))
        table = next(d.value for d in at.dataframe if "query_text" in d.value.columns)
        if any("Showing the first" in c.value for c in at.caption):  # a long list is cut: its rows prove less
            continue
        for run, count in Counter(table["run"]).items():
            assert counts[run][mode] == count, f"the sentence and the table differ for {run} ({mode})"
    return counts


def _report_counts(args: list[str], tmp: Path, workspace: Path | None = None) -> dict[str, int]:
    """The meeting report's sentence per run, and the rows of its failures CSV per run (meaning "none")."""
    out_csv = tmp / f"failures-{len(list(tmp.iterdir()))}.csv"
    env = {ENV_VAR: str(workspace)} if workspace else None
    done = run_cli("report", *args, "--k", str(K), "--no-charts", "--failures-csv", out_csv, env=env)
    assert done.returncode == 0, done.stderr
    said = {run: int(n) for run, n in re.findall(
        rf"^- ([\w-]+): (\d+) of \d+ queries found nothing relevant at k = {K}", done.stdout.replace("\\", ""), re.M)}
    with open(out_csv, newline="", encoding="utf-8") as f:
        rows = Counter(row["run"] for row in csv.DictReader(f))
    assert said == {run: rows.get(run, 0) for run in said}, "the report's sentence and its CSV differ"
    return said


def _check_all_surfaces(labels: Path, runs: dict[str, Path], split: str | None, dashboard: AppTest, tmp: Path,
                        monkeypatch) -> None:
    truth = _slow_counts(labels, runs, split)
    tmp.mkdir(exist_ok=True)
    if split is None:  # the generated set: the two meanings must really differ, or the test proves little
        assert any(c["any"] > c["none"] for c in truth.values())

    assert _dashboard_counts(dashboard) == truth

    files = ["--labels", str(labels), *(a for path in runs.values() for a in ("--run", str(path)))]
    from_files = _report_counts(files, tmp)
    assert from_files == {run: c["none"] for run, c in truth.items()}

    workspace = tmp / "workspace"
    monkeypatch.setenv(ENV_VAR, str(workspace))
    saved = run_cli("evaluate", *files, "--k", f"1,{K}", "--save", env={ENV_VAR: str(workspace)})
    assert saved.returncode == 0, saved.stderr
    from_ledger = _report_counts(["--evaluation", "latest"], tmp, workspace)
    assert from_ledger == {run: c["none"] for run, c in truth.items()}


def test_failure_counts_agree_on_the_sample_data(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "dashboard-workspace"))
    runs = {name: SAMPLE / f"{name}.trec" for name in ("base", "tuned", "tuned-256d")}
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    _check_all_surfaces(SAMPLE / "labels.tsv", runs, "tune", at, tmp_path / "out", monkeypatch)


def _generated_set(folder: Path) -> tuple[Path, dict[str, Path]]:
    """120 queries with 2-4 relevant docs each; three runs of increasing skill, 30 docs deep."""
    rng = np.random.default_rng(7)
    folder.mkdir()
    labels = ["query,doc_id,grade"]
    relevant = {}
    for q in range(120):
        docs = [f"d{q:03d}-{j}" for j in range(int(rng.integers(2, 5)))]
        relevant[f"q{q:03d}"] = docs
        labels += [f"q{q:03d},{d},{int(rng.integers(1, 3))}" for d in docs] + [f"q{q:03d},n{q:03d},0"]
    (folder / "labels.csv").write_text("\n".join(labels) + "\n", encoding="utf-8")
    runs = {}
    for name, skill in (("weak", 0.15), ("middle", 0.35), ("strong", 0.6)):
        lines = []
        for query, docs in relevant.items():
            pool = [f"x{i}" for i in range(40)] + [f"n{query[1:]}"]
            ranked = list(rng.permutation(pool)[:30])
            for doc in docs:
                if rng.random() < skill * 2:
                    ranked.insert(int(rng.integers(0, 25 if rng.random() < skill * 1.5 else 30)), doc)
            lines += [f"{query} Q0 {doc} {r} {100 - r} {name}" for r, doc in enumerate(ranked[:30], start=1)]
        runs[name] = folder / f"{name}.trec"
        runs[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder / "labels.csv", runs


def upload(labels: Path, runs: dict[str, Path]) -> AppTest:
    """A dashboard session that uploaded ``labels`` and ``runs`` on the Data page, as a person does."""
    at = AppTest.from_file(APP, default_timeout=300)
    at.switch_page("views/data.py").run()
    at.file_uploader(key="data.labels.0").set_value(("labels.csv", labels.read_bytes(), "text/csv"))
    at.file_uploader(key="data.runs.0").set_value([(p.name, p.read_bytes(), "text/plain") for p in runs.values()])
    at.run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    return at


def test_failure_counts_agree_with_several_relevant_docs_per_query(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "dashboard-workspace"))
    labels, runs = _generated_set(tmp_path / "set")
    _check_all_surfaces(labels, runs, None, upload(labels, runs), tmp_path / "out", monkeypatch)
