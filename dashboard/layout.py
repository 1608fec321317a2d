"""What every page shows around its content: the data set it is about, the shared controls, errors.

Text from users' files (names, models, query text, messages quoting a bad line) is never
given to Markdown as is: it goes through `evalcore.safe_text.md_text` (special characters escaped)
or into elements that show plain text (``st.text``, ``st.code``, ``st.dataframe``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

import pandas as pd
import streamlit as st

from evalcore import glossary, timestamps
from evalcore.errors import EvalcoreError
from evalcore.metrics.measures import check_k
from evalcore.safe_text import md_text
from evalcore.metrics.dataset import Dataset
from evalcore.warning_log import plural

from dashboard import loading, state
from dashboard.warming import stop  # noqa: F401 - pages end their run with layout.stop()


DEPTH = loading.DEPTH
"""The deepest k any page shows: every run is scored to it."""


@dataclass(frozen=True)
class View:
    """What a page is about: the data set, its evaluation, and the shared selections, all validated."""

    dataset: Dataset
    evaluation: Any  # evalcore.Evaluation, or None when the files cannot be scored
    error: str | None
    runs: list[str]  # the runs shown, in data set order
    baseline: str | None
    k: int

    @property
    def all_runs(self) -> list[str]:
        return self.dataset.run_names

    @property
    def labels_ref(self) -> str:
        if self.evaluation is None:
            return self.dataset.labels.name
        labels = self.evaluation.labels
        return f"{labels.name}#{labels.fingerprint}"

    @property
    def n(self) -> int:
        return self.evaluation.results[0].n_queries if self.evaluation is not None else 0

    def model(self, run: str) -> str:
        return self.evaluation[run].model if self.evaluation is not None else run

    @property
    def split(self) -> str:
        """Which split the numbers are on (``tune split (exploratory) · 224 holdout queries sealed``); empty when
        the labels carry none."""
        split = getattr(self.evaluation, "split", None)
        return split.headline if split is not None else ""


EMPTY_CELL = "—"
"""What an empty cell of a table reads as (Streamlit would write "None"): the column's help says what it means."""


def viewer_zone() -> str | None:
    """The time zone of the visitor's browser (None when unknown, as in tests: times are then shown in UTC)."""
    try:
        return st.context.timezone
    except Exception:  # noqa: BLE001 - no browser behind this run (bare or test mode): UTC
        return None


def is_time_column(name: Any) -> bool:
    """Columns holding a stored time: ``*_at`` and ``at``."""
    return str(name) == "at" or str(name).endswith("_at")


def table(frame: Any, **kwargs: Any) -> Any:
    """``st.dataframe`` for a person: an empty cell reads `EMPTY_CELL`, never "None"; times read to the minute in
    the visitor's time zone, named ("2026-12-01 09:30 CET"); no index column unless asked."""
    times = [c for c in frame.columns if is_time_column(c)] if isinstance(frame, pd.DataFrame) else []
    if times:
        zone = viewer_zone()
        frame = frame.assign(**{str(c): timestamps.minutes(frame[c], zone) for c in times})
    kwargs.setdefault("hide_index", True)
    kwargs.setdefault("placeholder", EMPTY_CELL)
    return st.dataframe(frame, **kwargs)


def when(value: Any) -> str:
    """One stored time as `table` shows times: to the minute, in the visitor's time zone."""
    return timestamps.minute(value, viewer_zone())


def words(*terms: str) -> None:
    """A closed panel under the page's title: each term the page uses, in one plain sentence (`evalcore.glossary`,
    the same sentences as the README's glossary)."""
    with st.expander("What the words on this page mean", icon=":material/menu_book:"):
        st.markdown(glossary.as_markdown(list(terms)))


def error(message: str) -> None:
    """A message beside the action or upload it is about (user text in it made inert; the server's workspace path
    said as "the server's workspace", `dashboard.loading.unnamed`)."""
    st.error(md_text(loading.unnamed(message)), icon=":material/error:")


def failed(loaded: loading.Loaded) -> bool:
    """Whether ``loaded`` (what a page model or `dashboard.saved` returned) carries an error, shown here with
    `error` when it does: the one way a page turns the core's typed errors into a message beside the action."""
    if loaded.ok:
        return False
    error(loaded.error)
    return True


def view(page: str, own: tuple[str, ...] = ()) -> View:
    """Start a page: read the URL, resolve the data set, score it, validate the shared selections."""
    state.start(page, own)
    dataset, note = loading.resolve(state.get("data"))
    if note:
        st.warning(md_text(note), icon=":material/link_off:")
        state.set("data", None)
    elif not dataset.sample or dataset.key != loading.current_dataset().key:
        state.set("data", dataset.key)  # the sample is named once the root address opens on other data
    loaded = loading.evaluation(dataset)
    names = dataset.run_names
    wanted = state.get("runs", [])
    runs, baseline, k = selections(names)
    if wanted and (set(runs) != set(wanted) or len(runs) == len(names)):
        state.set("runs", runs if len(runs) < len(names) else None)  # all runs: no parameter
    return View(dataset, loaded.value if loaded.ok else None, loaded.error, runs, baseline, k)


def selections(names: Sequence[str]) -> tuple[list[str], str | None, int]:
    """The shared selections as they are now (runs shown, baseline, k), each checked against ``names``."""
    wanted = state.get("runs", [])
    runs = [r for r in names if r in wanted] or list(names)
    baseline = state.get("baseline")
    if baseline not in names:
        baseline = names[0] if names else None
    return runs, baseline, _valid_k(state.get("k"))


def _valid_k(value: Any) -> int:
    """``value`` (from the URL or the session) as k when `evalcore.metrics.measures.check_k` takes it for the depth
    every run is scored to, else the default k."""
    try:
        return check_k(int(str(value)), loading.DEPTH)
    except (TypeError, ValueError, EvalcoreError):
        return loading.DEFAULT_K


def link_params(names: Sequence[str]) -> dict[str, Any]:
    """The current values of the selections ``names`` (those set), as a link to another page carries them."""
    values = {name: state.get(name) for name in names}
    return {name: (list(map(str, value)) if isinstance(value, list) else str(value))
            for name, value in values.items() if value not in (None, "", [])}


FIRST_SCREEN = "<style>.stMainBlockContainer { padding-top: 3.2rem; }</style>"
"""Less empty space above a page's title, so its answer and chart fit the first screen of a 1400 x 900 display
(the top navigation bar is about 3 rem high)."""


def header(title: str, v: View | None, what: str) -> None:
    """Title, one sentence about the page, and the context every number on it carries (``v`` None: a page of the
    workspace or the files, with no numbers of one data set; it is not stopped when the files cannot be scored)."""
    st.html(FIRST_SCREEN)
    st.title(title)
    st.caption(what)
    if v is None:
        return
    if v.evaluation is None:
        error(v.error or "The files cannot be scored.")
        st.page_link("views/data.py", label="Fix the files on the Data page", icon=":material/upload_file:")
        stop()
    source = "sample data" if v.dataset.sample else "uploaded data"
    st.markdown(
        f"**Labels** {md_text(v.labels_ref)} · **n** = {plural(v.n, 'query', 'queries')} · **runs** "
        + ", ".join(f"{md_text(r)} ({md_text(v.model(r))})" for r in v.runs)
        + f" · {source}" + (f" · {md_text(v.split)}" if v.split else "")
    )


def headline(text: str | None, v: View | None = None, k: int | None = None) -> None:
    """The sentence a page opens on (`evalcore.report.headlines`): its first sentence as a title, the rest as text,
    then (given the page's view ``v``) the context its numbers are read with, in a container keyed ``headline`` (the
    browser tests find it there)."""
    if not text:
        return
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z0-9])", text, maxsplit=1)
    with st.container(key="headline"):
        st.subheader(md_text(parts[0]), anchor=False)
        if len(parts) > 1:
            st.markdown(md_text(parts[1]))
        if v is not None:
            context(v, k=k)


def controls(page: str, v: View, *, k: bool = True, runs: bool = True, baseline: bool = False) -> View:
    """The shared selections as widgets (k, runs shown, baseline); returns the view they select."""
    columns = st.columns([1, 3, 2] if baseline else [1, 4])
    new_k, new_runs, new_base = v.k, v.runs, v.baseline
    if k:
        unit = "chunks" if any(spec.chunks is not None for spec in v.dataset.runs if spec.name in v.runs) else "docs"
        with columns[0]:
            new_k = st.number_input(f"k ({unit} retrieved)", min_value=1, max_value=loading.DEPTH, step=1,
                                    help=f"The cutoff: how many retrieved {unit} count. Shared by every page.",
                                    **state.bind(page, "k", v.k, int))
    if runs:
        with columns[1]:
            new_runs = st.multiselect("Runs shown", options=v.all_runs, help="Runs on this page (all by default).",
                                      **state.bind(page, "runs", v.runs, list)) or v.all_runs
            new_runs = [r for r in v.all_runs if r in new_runs]
    if baseline and len(v.all_runs) > 1:
        with columns[2]:
            new_base = st.selectbox("Baseline", options=v.all_runs,
                                    help="The run every other run is compared with.",
                                    **state.bind(page, "baseline", v.baseline))
    return View(v.dataset, v.evaluation, v.error, new_runs, new_base, int(new_k))


def context(v: View, *, k: int | None = None, runs: list[str] | None = None, extra: str = "") -> None:
    """A caption naming k, n, the models and the label set of the numbers right above or below it."""
    shown = runs if runs is not None else v.runs
    parts = []
    if k is not None:
        parts.append(f"k = {k}")
    parts.append(f"n = {v.n:,} queries")
    parts.append("models: " + "; ".join(f"{r} = {v.model(r)}" for r in shown))
    parts.append(f"labels {v.labels_ref}")
    if v.split:
        parts.append(v.split)
    if extra:
        parts.append(extra)
    st.caption(md_text(" · ".join(parts)))
