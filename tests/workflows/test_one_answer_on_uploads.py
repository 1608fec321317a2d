"""One answer per question on a data set uploaded as a user would (not the sample): the Choose k page says, per run,
the k `evalcore budget` says at the same price; the report (`evalcore report --format json`) says the same k and
the same failure counts as the Failures page; the root address and History open on the upload."""

from __future__ import annotations

import json
import re

from streamlit.testing.v1 import AppTest

from cli_runner import run_cli
from evalcore.store.workspace import ENV_VAR
from tests.workflows.test_failure_counts_agree import APP, K, _generated_set, upload

PRICE = {"price": "3", "rpm": "100000", "vpp": "20"}
PRICE_FLAGS = ["--price-per-mtok", "3", "--requests-per-month", "100000", "--value-per-point", "20"]


def _headline(at: AppTest) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("##### ")).removeprefix("##### ").replace("\\", "")


def test_every_surface_gives_the_same_k_and_failures_on_an_upload(tmp_path, monkeypatch) -> None:
    workspace = tmp_path / "workspace"
    monkeypatch.setenv(ENV_VAR, str(workspace))
    labels, runs = _generated_set(tmp_path / "set")
    files = ["--labels", str(labels), *(a for path in runs.values() for a in ("--run", str(path)))]
    uploaded = upload(labels, runs)

    # A colleague opens the root address: the upload, not the sample.
    colleague = AppTest.from_file(APP, default_timeout=300)
    colleague.run()
    assert colleague.query_params["data"] == uploaded.query_params["data"]

    # Choose k at a price: one k per run (the trade-off's), the one `evalcore budget` takes with the same numbers.
    colleague.query_params.update(PRICE)
    colleague.switch_page("views/choose_k.py").run()
    assert not colleague.exception, [e.value for e in colleague.exception]
    said = _headline(colleague)
    page_ks = {run: int(k) for k, run in re.findall(r"k = (\d+) for ([\w-]+)", said)}
    budget = json.loads(run_cli("budget", *files, *PRICE_FLAGS, "--format", "json").stdout)
    assert page_ks == {r["name"]: r["recommended_k"] for r in budget["runs"]}
    assert {r["basis"] for r in budget["runs"]} == {"trade-off"} and said.startswith("With your numbers")
    assert colleague.number_input(key="choose_k.k").value == page_ks[next(iter(runs))]  # the k control says it too

    # The report at the same price: the same k per run, and the Failures page's counts at k.
    report = json.loads(run_cli("report", *files, *PRICE_FLAGS, "--k", str(K), "--format", "json").stdout)
    assert {r["name"]: r["k"] for r in report["runs"]} == page_ks
    colleague.query_params["k"] = str(K)
    colleague.switch_page("views/failures.py").run()
    text = "\n".join(m.value for m in colleague.markdown).replace("\\", "")
    shown = {run: int(n) for run, n in re.findall(rf"([\w-]+): (\d+) of \d+ queries found nothing relevant at k = {K}",
                                                   text)}
    assert shown == {r["name"]: r["failures"] for r in report["runs"]}

    # History opens on the upload's line and makes its report without a detour.
    colleague.switch_page("views/history.py").run()
    colleague.button(key="history.save_in_view").click().run()
    assert not colleague.exception, [e.value for e in colleague.exception]
    assert colleague.selectbox(key="history.line").value == next(iter(runs))
    captions = " ".join(c.value for c in colleague.caption)
    assert f"{sum(shown.values()):,} failures at k = {K}" in captions  # the report's rows: the page's counts
