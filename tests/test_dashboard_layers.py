"""The dashboard's rooms: each page is a view (`dashboard/views/NAME.py`) and a page model
(`dashboard/page_models/NAME.py`) named after it; views lay out, page models compute from the core.

Read from the imports (all of them, also those inside functions), so a wrong-way import fails on the commit that
adds it: views import page models and the drawing helpers, never the loading underneath; page models import the core
and the loading, never a view or the drawing helpers; nothing imports a view (Streamlit runs them by path); the
infrastructure below the pages imports no page. Page models are plain functions: none imports Streamlit, and what is
kept between reruns is kept by one module, `dashboard.caching`. Page state goes through one module, and the dashboard
writes no files of its own (saved state lives in the workspace, through `evalcore.store`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DASHBOARD = ROOT / "dashboard"

VIEW_MAY_IMPORT = {"dashboard.layout", "dashboard.state", "dashboard.charts", "dashboard.k_charts", "dashboard.saved",
                   "dashboard.fragments", "dashboard.doc_cards", "dashboard.access_ui", "dashboard.caching"}
"""What a view may import besides its page model (and the core): drawing, page state, writes, sign-in, and the cache
that keeps what its page model returns."""
MODEL_MAY_IMPORT = {"dashboard.loading", "dashboard.computed", "dashboard.jobs", "dashboard.charts",
                    "dashboard.k_charts", "dashboard.saved", "dashboard.uploads", "dashboard.caching"}
"""What a page model may import besides other page models (and the core): the files, shared results (computed, and
kept by the cache), the store."""
CACHING = "dashboard.caching"
"""The one dashboard module that keeps computed results in Streamlit's caches."""
DEFERRED_OK = ("altair", "vl_convert", "streamlit.runtime", "evalcore.report.meeting")
"""Imports allowed inside a function: Altair and its PNG export and the meeting report (slow to import: a page that
never draws them should not wait for them), Streamlit's run context."""


def _module(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def _imports(path: Path) -> list[tuple[str, int, bool]]:
    """(module imported, line, inside a function) for every import of ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    inside = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
              for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno, id(node) in inside) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            out += [(f"{base}.{a.name}", node.lineno, id(node) in inside) for a in node.names]
            out.append((base, node.lineno, id(node) in inside))
    return out


def _dashboard_targets(path: Path) -> list[tuple[str, int]]:
    """The dashboard modules ``path`` imports (``from dashboard import layout`` counts as dashboard.layout)."""
    known = {_module(p) for p in DASHBOARD.rglob("*.py")}
    found = []
    for name, line, _ in _imports(path):
        if name in known and name not in ("dashboard", "dashboard.page_models"):
            found.append((name, line))
    return found


def test_every_page_is_a_view_and_a_page_model_named_after_it():
    views = {p.stem for p in (DASHBOARD / "views").glob("*.py")}
    models = {p.stem for p in (DASHBOARD / "page_models").glob("*.py")} - {"__init__"}
    assert views == models, f"pages without a model: {views - models}; models without a page: {models - views}"
    app = (DASHBOARD / "app.py").read_text(encoding="utf-8")
    assert set(re.findall(r'"views/(\w+)\.py"', app)) == views, "app.py lists every page, and only pages"


def test_views_import_page_models_and_drawing_never_the_loading_underneath():
    wrong = []
    for path in (DASHBOARD / "views").glob("*.py"):
        for target, line in _dashboard_targets(path):
            if target not in VIEW_MAY_IMPORT and not target.startswith("dashboard.page_models."):
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not wrong, "a view lays out what its page model returns:\n" + "\n".join(sorted(wrong))


def test_page_models_import_the_core_and_the_loading_never_a_view_or_the_page_state():
    wrong = []
    for path in (DASHBOARD / "page_models").glob("*.py"):
        for target, line in _dashboard_targets(path):
            if target not in MODEL_MAY_IMPORT and not target.startswith("dashboard.page_models"):
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not wrong, "a page model computes from the core and the loaded files:\n" + "\n".join(sorted(wrong))


def _plain_modules() -> list[Path]:
    """The page models and the shared results they reach through the cache (`dashboard.computed`)."""
    return [*(DASHBOARD / "page_models").glob("*.py"), DASHBOARD / "computed.py"]


def test_page_models_are_plain_functions_that_never_import_streamlit():
    wrong = [f"{p.relative_to(ROOT)}:{line} imports {name}" for p in _plain_modules()
             for name, line, _ in _imports(p) if name.split(".")[0] == "streamlit"]
    assert not wrong, ("a page model is plain Python: it is tested without a running app, and what is kept goes "
                       f"through {CACHING}:\n" + "\n".join(sorted(wrong)))
    cached = [f"{p.relative_to(ROOT)}:{n}" for p in _plain_modules()
              for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
              if re.search(r"\bst\.|cache_(resource|data)\b", line)]
    assert not cached, (f"page models keep nothing themselves (no st.*, no Streamlit cache), {CACHING} does:\n"
                        + "\n".join(cached))


def test_streamlit_caches_live_in_the_caching_module():
    """Computed results are kept in one place; `dashboard.loading` keeps the files it reads (one read per content)."""
    keepers = {"dashboard.caching", "dashboard.loading"}
    found = [f"{p.relative_to(ROOT)}:{n}" for p in DASHBOARD.rglob("*.py") if _module(p) not in keepers
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"\bcache_(resource|data)\b", line)]
    assert not found, f"Streamlit's caches are used by {CACHING} (and the files' reading) only:\n" + "\n".join(found)


def test_nothing_imports_a_view_and_the_infrastructure_imports_no_page():
    wrong = []
    for path in DASHBOARD.rglob("*.py"):
        under_pages = path.parent.name in ("views", "page_models")
        for target, line in _dashboard_targets(path):
            if target.startswith("dashboard.views"):
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports the page {target}")
            elif not under_pages and target.startswith("dashboard.page_models"):
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports the page model {target}")
    assert not wrong, "\n".join(sorted(wrong))


def test_the_core_never_imports_the_dashboard():
    wrong = [f"{p.relative_to(ROOT)}:{line}" for p in (ROOT / "evalcore").rglob("*.py")
             for name, line, _ in _imports(p) if name.split(".")[0] in ("dashboard", "streamlit", "altair")]
    assert not wrong, "evalcore stays usable without the dashboard:\n" + "\n".join(wrong)


def test_no_import_hidden_in_a_function_but_the_slow_optional_ones():
    hidden = [f"{p.relative_to(ROOT)}:{line} imports {name}" for p in DASHBOARD.rglob("*.py")
              for name, line, inside in _imports(p)
              if inside and not any(name == ok or name.startswith(ok + ".") for ok in DEFERRED_OK)]
    assert not hidden, "imports belong at the top of the module:\n" + "\n".join(sorted(hidden))


def test_page_state_goes_through_one_module_and_the_dashboard_writes_no_files():
    session = [f"{p.relative_to(ROOT)}:{n}" for p in DASHBOARD.rglob("*.py") if p.name != "state.py"
               for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if "session_state" in line]
    assert not session, "st.session_state is read and written by dashboard/state.py only:\n" + "\n".join(session)
    writes = re.compile(r"\.write_text\(|\.write_bytes\(|json\.dump\(|open\([^)]*['\"][wa]|mkstemp|os\.replace\(")
    files = [f"{p.relative_to(ROOT)}:{n}" for p in DASHBOARD.rglob("*.py")
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if writes.search(line)]
    assert not files, "saved state lives in the workspace's database (evalcore.store):\n" + "\n".join(files)
