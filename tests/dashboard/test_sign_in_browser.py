"""Sign-in and roles in a real browser: a real OpenID Connect exchange against a provider the test starts on
127.0.0.1 (tests/dashboard/oidc_provider.py: Authlib-signed RS256 ID tokens for two test users), the dashboard
(`streamlit run`) configured against it by a temporary secrets.toml with roles. The viewer sees the pages but
cannot delete or reveal (the controls are disabled, and the same call forged through the workflow layer is
refused and changes nothing); the owner reveals the holdout, and the reveal is listed under the owner's email on
the "Who did what" page."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from evalcore.access import Actor, Role, login_name
from evalcore.cli import main
from evalcore.errors import NotPermitted
from evalcore.readers.labels import read_labels
from evalcore.store.workspace import Workspace
from evalcore.workflows import delete, reveal_holdout
from tests.dashboard.browser_helpers import (
    WAIT_MS,
    Server,
    no_exceptions,
    open_page,
    settle,
    shoot,
)
from tests.dashboard.oidc_provider import CLIENT_ID, CLIENT_SECRET, Provider

ROOT = Path(__file__).resolve().parents[2]
S = ROOT / "sample_data"
VIEWER, OWNER = "viewer@example.test", "owner@example.test"
KIM = "kim@other.example.test"  # the owner of another team, with a workspace of its own

SECRETS = """
[auth]
redirect_uri = "http://127.0.0.1:{{port}}/oauth2callback"
cookie_secret = "a-long-random-cookie-secret-for-the-sign-in-test"
client_id = "{client_id}"
client_secret = "{client_secret}"
server_metadata_url = "{metadata}"

[evalcore]
viewers = ["{viewer}"]
owners = ["{owner}"]

[evalcore.teams.other]
workspace = "{other}"
owners = ["{kim}"]
"""


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    """The provider, a workspace holding one saved evaluation, and the dashboard signed in through the provider."""
    folder = tmp_path_factory.mktemp("team")
    workspace = folder / "ws"
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["evaluate", "--labels", str(S / "labels.tsv"), "--run", str(S / "base.trec"), "--k", "1,5",
                     "--save", "--workspace", str(workspace), "--who", "setup"])
    assert code == 0, err.getvalue()
    provider = Provider([VIEWER, OWNER, KIM])
    secrets = folder / "secrets.toml"
    secrets.write_text(SECRETS.format(client_id=CLIENT_ID, client_secret=CLIENT_SECRET,
                                      metadata=provider.metadata_url, viewer=VIEWER, owner=OWNER,
                                      other=folder / "other", kim=KIM))
    server = Server(workspace, folder / "server.log", ("--secrets.files", str(secrets)))
    yield server.url, workspace, provider, folder / "other"
    server.stop()
    provider.stop()


def sign_in(page: Page, url: str, email: str) -> None:
    open_page(page, url)
    expect(page.get_by_text("Sign in to see this team's evaluations", exact=False)).to_be_visible()
    assert page.get_by_role("link", name="Data").count() == 0  # no page before signing in
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("button", name=f"Sign in as {email}").click()  # the provider's page
    page.wait_for_url(f"{url}/**", timeout=WAIT_MS)
    page.wait_for_selector('[data-testid="stApp"]')
    settle(page)
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    assert f"Signed in as {email}" in main_text(page)


def main_text(page: Page) -> str:
    """The page's text as a person reads it (without the invisible joiners that keep an email from becoming a
    link)."""
    return page.locator('[data-testid="stMain"]').inner_text().replace("\u2060", "")


def fresh(browser: Browser) -> Page:
    context = browser.new_context(viewport={"width": 1500, "height": 2000})
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    return page


def test_a_viewer_reads_but_cannot_delete_or_reveal(browser: Browser, team) -> None:
    url, workspace, provider, _ = team
    page = fresh(browser)
    try:
        sign_in(page, url, VIEWER)
        assert f"Signed in as {VIEWER} (viewer): may read every page and download." in main_text(page)
        assert provider.issued[-1] == VIEWER

        open_page(page, f"{url}/data")
        tab = page.get_by_role("tab", name="Label sets")
        tab.click()
        settle(page)
        expect(page.get_by_role("button", name="Delete…").first).to_be_disabled()
        uploads = page.locator('[data-testid="stFileUploader"] input[type="file"]')
        # Labels, runs, documents, queries and a chunk map per sample run: none may be used by a viewer.
        assert uploads.count() == 10 and all(uploads.nth(i).is_disabled() for i in range(10))

        open_page(page, f"{url}/integrity")
        page.get_by_role("tab", name="Tune and holdout").click()
        settle(page)
        reveal = page.get_by_role("button", name="Reveal the holdout numbers (recorded in the workspace)")
        expect(reveal).to_be_disabled()
        no_exceptions(page)
        shoot(page, "sign_in_viewer")

        # What the button would have done, forged through the workflow layer as the viewer: refused, nothing changed.
        ws = Workspace(workspace)
        before = (ws.counts(), len(ws.reveals()), len(ws.events()))
        viewer = Actor(VIEWER, Role.VIEWER, "signed in")
        with pytest.raises(NotPermitted, match="viewer here and may not reveal the holdout"):
            reveal_holdout(ws, read_labels(S / "labels.tsv"), [("base", "acme-embed-base-v2")], actor=viewer)
        with pytest.raises(NotPermitted, match="may not delete"):
            delete(ws, "labels", "labels:tune", actor=viewer)
        assert (ws.counts(), len(ws.reveals()), len(ws.events())) == before

        page.get_by_role("button", name="Sign out").click()
        page.wait_for_selector('[data-testid="stApp"]')
        settle(page)
        expect(page.get_by_role("button", name="Sign in")).to_be_visible()
    finally:
        page.context.close()


def test_the_owner_reveals_the_holdout_and_the_reveal_is_listed_under_their_email(browser: Browser, team) -> None:
    url, workspace, _, _ = team
    page = fresh(browser)
    try:
        sign_in(page, url, OWNER)
        open_page(page, f"{url}/integrity")
        page.get_by_role("tab", name="Tune and holdout").click()
        settle(page)
        reveal = page.get_by_role("button", name="Reveal the holdout numbers (recorded in the workspace)")
        expect(reveal).to_be_enabled()
        reveal.click()
        settle(page)
        expect(page.get_by_text("Holdout revealed in this session", exact=False)).to_be_visible()
        assert f"by {OWNER}" in main_text(page)
        no_exceptions(page)

        ws = Workspace(workspace)
        assert ws.reveals()["who"].tolist() == [OWNER]
        assert ws.events(action="reveal holdout")["who"].tolist() == [OWNER]

        open_page(page, f"{url}/activity?who={OWNER}")  # a link to one person's changes
        expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible()
        text = main_text(page)
        assert f"1 change by {OWNER}, newest first; times in your time zone, to the minute." in text
        shoot(page, "sign_in_owner_activity")
        rows = ws.events()
        assert rows.iloc[0]["who"] == OWNER and rows.iloc[0]["action"] == "reveal holdout"
        assert f"setup (--who; login {login_name()})" in rows["who"].tolist()  # the command line's --who: a claim
    finally:
        page.context.close()


def test_another_team_signs_in_to_its_own_workspace_and_sees_none_of_the_first(browser: Browser, team) -> None:
    url, workspace, _, other = team
    page = fresh(browser)
    try:
        sign_in(page, url, KIM)
        assert f"Signed in as {KIM} (owner)" in main_text(page) and "team other" in main_text(page)
        open_page(page, f"{url}/data")
        expect(page.get_by_text("No label sets saved yet.")).to_be_visible()  # the first team's set is not here
        open_page(page, f"{url}/activity")
        expect(page.get_by_text("Nothing recorded yet", exact=False)).to_be_visible()
        no_exceptions(page)
        assert (other / "workspace.sqlite").is_file()  # the team's own folder, opened for it
        assert "labels:tune" in Workspace(workspace).label_sets()["name"].tolist()
        assert KIM not in Workspace(workspace).events()["who"].tolist()
    finally:
        page.context.close()
