"""Hostile input, round three, item 7: the Index size page builds an approximate index only for a person who may,
only within the ranges ``evalcore vectors --index`` takes, and only within the index memory budget. A link such as
``/index-size?part=approximate&ann_kind=hnsw&ann_m=400000`` once added 1.6 GB to the server for any visitor."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from evalcore.store.workspace import ENV_VAR
from evalcore.vectors.ann_faiss import FaissEngine

from tests.dashboard.apptest_helpers import APP, TIMEOUT, plain, texts

SECRETS = {
    "auth": {"redirect_uri": "https://evalcore.example.com/oauth2callback", "cookie_secret": "x" * 32,
             "client_id": "evalcore", "client_secret": "s",
             "server_metadata_url": "https://sso.example.com/.well-known"},
    "evalcore": {"viewers": ["@example.com"], "editors": ["ed@example.com"], "owners": ["ow@example.com"]},
}
HOSTILE = {"part": "approximate", "ann_kind": "hnsw", "ann_m": "400000"}


@pytest.fixture
def builds(tmp_path, monkeypatch) -> list:
    """Every index build the page starts (none should be, in these tests), on a workspace of its own."""
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "ws"))
    started: list = []
    real = FaissEngine.build

    def build(self, spec, *args, **kwargs):
        started.append(spec.canonical)
        return real(self, spec, *args, **kwargs)
    monkeypatch.setattr(FaissEngine, "build", build)
    return started


def read(markdown: str) -> str:
    """Markdown as a person reads it: escapes and the invisible joiners that keep an email from linking removed."""
    return plain(markdown).replace("\u2060", "")


def opened(user: dict | None, **params: str) -> AppTest:
    """The Index size page opened with ``params`` in its URL, signed in as ``user`` (None: no sign-in, the owner)."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    if user is not None:
        at.secrets = SECRETS
        at.user = user
    at.query_params.update(params)
    at.run()
    at.switch_page("views/index_size.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_viewer_opening_the_hostile_link_builds_nothing_and_is_told_why(builds) -> None:
    at = opened({"is_logged_in": True, "email": "bo@example.com", "email_verified": True}, **HOSTILE)
    assert builds == []  # nothing built, nothing kept
    m = at.number_input(key="index-size.ann_m")
    assert m.value == 256 and m.max == 256  # the link's 400,000 brought into the range the CLI takes
    [warning] = [w for w in at.warning if "400,000" in w.value]
    assert plain(warning.value) == ("The link's m = 400,000 is over the most this page builds, 256 (links per doc; "
                                    "each takes 8 bytes of every doc's memory): 256 is used.")
    button = at.button(key="index_size.build")
    assert button.disabled and "bo@example.com is a viewer here and may not build approximate indexes" in button.help
    said = [read(e.value) for e in at.error]
    assert said == ["Nothing was built: bo@example.com is a viewer here and may not build approximate indexes on "
                    "this server (each takes its memory): that needs the editor role. Ask the server's owner to "
                    "change your role."]
    assert "loses the answer for" not in texts(at)  # no sweep measured
    assert not [d for d in at.dataframe if "lost queries" in d.value.columns]


def test_an_index_over_the_memory_budget_is_refused_with_the_estimate_before_it_is_built(builds,
                                                                                         monkeypatch) -> None:
    monkeypatch.setenv("EVALCORE_INDEX_MEMORY_MB", "0.5")
    at = opened(None, **HOSTILE)  # no sign-in: the owner, who may build; the first model (base, 128 dims)
    assert builds == []
    said = [read(e.value) for e in at.error]
    assert said == ["The index 'hnsw:m=256:ef=8' on 503 docs x 128 dims would need about 2.5 MB of memory (HNSW: "
                    "docs x (2 x (4 x dims + 8 x m) + 24) bytes), over the budget of 0.5 MB (EVALCORE_INDEX_MEMORY_MB): "
                    "use a smaller m or fewer dims (:dims=D), or raise the budget."]
    assert not [b for b in at.button if b.key == "index_size.build"]  # an owner may build: no role to explain


def test_an_editor_gets_the_link_brought_into_range_and_the_index_built_once(builds) -> None:
    at = opened({"is_logged_in": True, "email": "ed@example.com", "email_verified": True}, **HOSTILE)
    assert builds == ["hnsw:m=256:ef=8:efc=40"]  # one build serves the sweep of ef; m within 2..256
    assert at.query_params["ann_m"] in ("256", ["256"])  # a copied link now asks for what was built
    assert "HNSW m = 256, ef = 8 " in texts(at) and not at.error
    assert not [b for b in at.button if b.key == "index_size.build"]
