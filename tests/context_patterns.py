"""What "a number with its context" looks like, for the checks of every surface: the command line's outputs and
exports (tests/cli/test_number_context.py) and the dashboard's pages (tests/dashboard/test_dashboard_number_context.py).

A metric value (a decimal next to a metric name) must be read with its k, its n, the model behind it and the
label-set fingerprint. These are the patterns that find each, and the check of one table's rows. A plain module
(not a test module), so both test files import it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from evalcore.metrics.measures import DESCRIPTIONS
from evalcore.safe_text import md_text

S = Path(__file__).resolve().parents[1] / "sample_data"
MODELS = {json.loads((S / f"{stem}.meta.json").read_text())["model"] for stem in ("base", "tuned", "tuned-256d")}

METRIC = r"(?:recall|hit|precision|ndcg|judged)@\d+|\bmrr\b|\brr\b"
FAMILY = re.compile(r"^(recall|hit|precision|ndcg|judged)$")
GENERIC = re.compile(r"^(mean|low|high|ci_low|ci_high|diff|\d+% CI|CI)$")
SHARE = re.compile(r"share$")
DECIMAL = re.compile(r"(?<![\w.\\])\d+\\?\.\d+(?![\w.])")
FINGERPRINT = re.compile(r"#\s*[0-9a-f]{12}\b|\\#[0-9a-f]{12}\b")
N_TEXT = re.compile(r"\bn = \d|\b\d[\d,]* (?:evaluated |labeled )?queries\b")
K_TEXT = re.compile(rf"{METRIC}|\bk = \d+|\btop \d+")


def has_model(text: str) -> bool:
    plain = text.replace("\\", "")
    return any(model in plain for model in MODELS)


METRIC_KEY = re.compile(rf"^(?:{METRIC}|(?:recall|hit|precision|ndcg|judged)(?:_ci_low|_ci_high|_at_k|_at_max_k|_lost)?|"
                        r"mean|ci_low|ci_high|diff|low|high|recall_lost|blind_share|blind_judgment_share)$")


def table_problems(title: str, header: list[str], rows: list[list[str]], doc: str, where: str) -> list[str]:
    problems = []
    head = [h.replace("\\", "") for h in header]
    k_column = next((c for c, h in enumerate(head) if h == "k"), None)
    n_column = next((c for c, h in enumerate(head) if h == "n"), None)
    for row in rows:
        row_text = " ".join(row)
        for c, (name, cell) in enumerate(zip(head, row)):
            if not DECIMAL.search(cell):
                continue
            metric_name = re.match(rf"^({METRIC})", name)
            if not (metric_name or FAMILY.match(name.split(" ")[0]) or GENERIC.match(name) or SHARE.search(name)):
                continue  # not a metric column (tokens, prices, ids)
            place = f"{where}: {title[:60]!r} column {name!r} row {row_text[:80]!r}"
            if not SHARE.search(name):
                has_k = bool(metric_name) or (k_column is not None and row[k_column].strip().isdigit()) or \
                    bool(re.search(METRIC, row_text)) or bool(re.search(METRIC, title))
                if not has_k:
                    problems.append(f"{place}: no metric name with k")
            has_n = (n_column is not None and row[n_column].strip().replace(",", "").isdigit()) or \
                bool(N_TEXT.search(title)) or bool(N_TEXT.search(doc))
            if not has_n:
                problems.append(f"{place}: no n")
            if not (has_model(row_text) or has_model(title)):
                problems.append(f"{place}: no model")
            if not (FINGERPRINT.search(row_text) or FINGERPRINT.search(title) or FINGERPRINT.search(doc)):
                problems.append(f"{place}: no label-set fingerprint")
    return problems


def without_descriptions(text: str) -> str:
    """The text minus the metric descriptions it quotes ("one of two found = 0.5" is an example, not a value)."""
    for description in DESCRIPTIONS.values():
        text = text.replace(description, "").replace(md_text(description), "")
    return text
