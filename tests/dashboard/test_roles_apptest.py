"""Roles in the dashboard (AppTest, signed-in users seeded with ``at.user``, the server's secrets with
``at.secrets``): a sign-in screen before any page, a person on no list sees why and nothing else, and each control
that changes the workspace is disabled, with the reason as its help, for a role that may not use it."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from evalcore.store.workspace import ENV_VAR

from tests.dashboard.apptest_helpers import APP, TIMEOUT, plain

SECRETS = {
    "auth": {"redirect_uri": "https://evalcore.example.com/oauth2callback", "cookie_secret": "x" * 32,
             "client_id": "evalcore", "client_secret": "s", "server_metadata_url": "https://sso.example.com/.well-known"},
    "evalcore": {"viewers": ["@example.com"], "editors": ["ed@example.com"], "owners": ["ow@example.com"]},
}


@pytest.fixture(autouse=True)
def workspace(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "ws"))


def app(user: dict, path: str | None = None, **params: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.secrets = SECRETS
    at.user = user
    for name, value in params.items():
        at.query_params[name] = value
    if path:
        at.switch_page(path)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def read(markdown: str) -> str:
    """Markdown as a person reads it: escapes and the invisible joiners that keep an email from linking removed."""
    return plain(markdown).replace("\u2060", "")


def signed_in(email: str, **extra) -> dict:
    return {"is_logged_in": True, "email": email, "email_verified": True, **extra}


def test_nobody_sees_a_page_before_signing_in() -> None:
    at = app({"is_logged_in": False}, "views/overview.py")
    assert [b.label for b in at.button] == ["Sign in"]
    assert [t.value for t in at.title] == ["evalcore"] and not at.dataframe


@pytest.mark.parametrize(("user", "why"), [
    (signed_in("eve@elsewhere.net"), "it is on none of this server's lists"),
    (signed_in("bo@example.com", email_verified=False), "its email address is not verified"),
    ({"is_logged_in": True, "email": "bo@example.com"}, "its email address is not verified"),  # claim left out
])
def test_a_person_on_no_list_is_told_why_and_sees_nothing(user, why) -> None:
    at = app(user, "views/data.py")
    [warning] = at.warning
    assert why in plain(warning.value) and "Ask the server's owner to add you" in warning.value
    assert [b.label for b in at.button] == ["Sign out"] and not at.dataframe


def reveal_button(at: AppTest):
    return next(b for b in at.button if b.label.startswith("Reveal the holdout"))


def test_a_viewer_sees_every_control_that_changes_something_disabled_with_the_reason() -> None:
    at = app(signed_in("bo@example.com"), "views/integrity.py", k="5")
    assert "Signed in as bo@example.com (viewer): may read every page and download." in read(at.caption[0].value)
    reveal = reveal_button(at)
    assert reveal.disabled and "bo@example.com is a viewer here and may not reveal the holdout" in reveal.help
    at = app(signed_in("bo@example.com"), "views/failures.py", k="5")
    [save] = [b for b in at.button if b.label == "Save this evaluation to the workspace"]
    assert save.disabled and "may not save evaluations: that needs the editor role" in save.help
    at = app(signed_in("bo@example.com"))
    at.switch_page("views/index_size.py").run()
    add = next(b for b in at.button if b.label == "Add to the loaded runs")
    assert add.disabled and "may not upload" in add.help
    upload = next(b for b in at.get("button") + at.get("form_submit_button") if "Use these vectors" in str(b.proto))
    assert upload.proto.disabled


def test_an_editor_may_save_but_not_reveal_and_an_owner_may_reveal() -> None:
    at = app(signed_in("ed@example.com"), "views/failures.py", k="5")
    [save] = [b for b in at.button if b.label == "Save this evaluation to the workspace"]
    assert not save.disabled
    reveal = reveal_button(app(signed_in("ed@example.com"), "views/integrity.py", k="5"))
    assert reveal.disabled and "that needs the owner role" in reveal.help
    at = app(signed_in("OW@example.com"), "views/integrity.py", k="5")
    reveal = reveal_button(at)
    assert not reveal.disabled and reveal.help == "The reveal is recorded as ow@example.com."
    reveal.click().run()
    assert "by ow@example.com" in read(" ".join(s.value for s in at.success))


def test_a_mistake_in_the_roles_is_shown_as_one_sentence_and_no_page_opens() -> None:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.secrets = {**SECRETS, "evalcore": {"viewers": ["not an address"]}}
    at.user = signed_in("bo@example.com")
    at.run()
    [error] = at.error
    assert read(error.value) == ("This server's sign-in is misconfigured: secrets.toml [evalcore].viewers: expected an "
                                 "email address (ana@example.com) or a domain (@example.com), got 'not an address'.")
    assert not at.dataframe


def test_sign_in_without_roles_lets_nobody_in_and_says_so() -> None:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.secrets = {"auth": SECRETS["auth"]}
    at.user = signed_in("lee@example.com")
    at.run()
    [warning] = at.warning
    assert "this server lists nobody yet" in read(warning.value) and not at.dataframe


def test_the_network_served_without_sign_in_shows_no_page(monkeypatch) -> None:
    """`streamlit run` by hand on 0.0.0.0, without [auth] and without the override: nobody becomes the owner."""
    from streamlit import config

    monkeypatch.delenv("EVALCORE_OPEN_TO_NETWORK_WITHOUT_SIGN_IN", raising=False)
    before = config.get_option("server.address")
    config.set_option("server.address", "0.0.0.0")
    try:
        at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
        at.run()
        assert [e.value for e in at.error] and "listens on the network but has no sign-in" in at.error[0].value
        assert not at.dataframe and not at.button
        monkeypatch.setenv("EVALCORE_OPEN_TO_NETWORK_WITHOUT_SIGN_IN", "1")  # the operator's loud choice
        at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
        at.run()
        assert not at.error and at.dataframe
    finally:
        config.set_option("server.address", before)


def test_a_look_alike_address_is_refused_and_never_signs_in_as_the_person_it_resembles() -> None:
    """Issue 24: ``\\u212aim@example.com`` (KELVIN SIGN) is another address; Unicode lower-casing made it kim's."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.secrets = {**SECRETS, "evalcore": {"viewers": ["@example.com"], "owners": ["kim@example.com"]}}
    at.user = signed_in("\u212aim@example.com")
    at.switch_page("views/integrity.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    [warning] = at.warning
    assert "is ambiguous" in read(warning.value) and "names no one here" in read(warning.value)
    assert [b.label for b in at.button] == ["Sign out"] and not at.dataframe and not at.caption


@pytest.mark.parametrize(("auth", "expected"), [
    ("yes", "secrets.toml [auth]: expected a table"),
    ([1, 2], "secrets.toml [auth]: expected a table"),
    ({**SECRETS["auth"], "client_secret": 12345}, "secrets.toml [auth].client_secret: expected text in quotes, got a "
                                                   "number"),
])
def test_a_wrongly_typed_auth_section_is_one_sentence_and_no_page(auth, expected) -> None:
    """Issue 24, item 8: ``auth = "yes"`` crashed the app with a traceback; a secret's value is never shown."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.secrets = {**SECRETS, "auth": auth}
    at.user = signed_in("ow@example.com")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    [error] = at.error
    assert expected in read(error.value) and "12345" not in error.value and "\n" not in error.value
    assert not at.dataframe and not at.button


def test_a_secrets_file_saved_as_utf16_is_named_with_what_to_do(tmp_path) -> None:
    from streamlit import config

    secrets = tmp_path / "secrets.toml"
    secrets.write_bytes('[auth]\nredirect_uri = "https://x.example/oauth2callback"\n'.encode("utf-16"))
    before = config.get_option("secrets.files")
    config.set_option("secrets.files", [str(secrets)])
    try:
        at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        [error] = at.error
        assert "secrets.toml: not UTF-8 text (it starts with bytes FF FE" in read(error.value)
        assert str(tmp_path) not in error.value and not at.dataframe  # the file by name, never the server's folders
    finally:
        config.set_option("secrets.files", before)
