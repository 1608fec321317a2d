"""Two teams on one server never see each other's data: a link that names team A's uploaded vector models opens
nothing for team B, even after team A has opened it (nothing of A's is held server-wide under a key B can send)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from evalcore.store.workspace import Workspace

from tests.dashboard.apptest_helpers import APP, TIMEOUT

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "sample_data" / "vectors"
KEY = "abcdef123456"


def _ref(workspace: Workspace, name: str) -> dict:
    data = (VECTORS / name).read_bytes()
    stored = workspace._put_file(data, name)
    return {"name": name, "sha256": stored.sha256, "size": len(data)}


def _secrets(a: Path, b: Path) -> dict:
    return {"auth": {"redirect_uri": "https://e.example.com/oauth2callback", "cookie_secret": "x" * 32,
                     "client_id": "c", "client_secret": "s", "server_metadata_url": "https://sso.example.com/.well-known"},
            "evalcore": {"teams": {"a": {"workspace": str(a), "viewers": ["ana@a.example"]},
                                   "b": {"workspace": str(b), "viewers": ["bo@b.example"]}}}}


def _models_seen(email: str, secrets: dict) -> list[str]:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.secrets = secrets
    at.user = {"is_logged_in": True, "email": email, "email_verified": True}
    at.query_params["vectors"] = KEY
    at.run()
    at.switch_page("views/index_size.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return list(at.multiselect[0].options) if at.multiselect else []


def test_a_team_never_sees_another_teams_uploaded_models(tmp_path):
    a, b = tmp_path / "team-a", tmp_path / "team-b"
    with Workspace(a) as team_a:  # team A uploaded a model: its manifest is kept in team A's workspace
        manifest = [{"name": "a-private-model", "model": "acme/private-embed-v9",
                     **{part: _ref(team_a, f"base.{name}") for part, name in (("queries", "queries.npy"),
                                                                              ("docs", "docs.npy"),
                                                                              ("query_ids", "queries.ids.txt"),
                                                                              ("doc_ids", "docs.ids.txt"))}}]
        team_a._put_manifest("vector_models", KEY, manifest)
    secrets = _secrets(a, b)
    assert "a-private-model" in _models_seen("ana@a.example", secrets)  # team A's own link works
    assert "a-private-model" not in _models_seen("bo@b.example", secrets)  # the same link from team B: nothing
