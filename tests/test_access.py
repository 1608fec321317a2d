"""Roles and the roles configuration (evalcore.access): who may do what, and which team's workspace they use."""

from __future__ import annotations

from pathlib import Path

import tomllib

import pytest

from evalcore.access import ACTIONS, Actor, Role, local_actor, login_name, parse_access, require, secrets_problem
from evalcore.errors import AccessConfigError, NotPermitted

CONFIG = """
[auth]
redirect_uri = "https://evalcore.example.com/oauth2callback"

[evalcore]
viewers = ["@example.com"]
editors = ["ana@example.com"]
owners = ["Lee@Example.com"]

[evalcore.teams.search]
workspace = "/srv/evalcore/search"
viewers = ["@search.example.org"]
owners = ["kim@search.example.org"]
"""


def test_each_role_may_what_the_issue_lists() -> None:
    viewer, editor, owner = (Actor("x", role) for role in Role)
    assert [a for a in ACTIONS if viewer.may(a)] == []
    assert [a for a in ACTIONS if editor.may(a)] == ["upload", "save_evaluation", "edit_ledger", "judge",
                                                     "build_index"]
    assert all(owner.may(a) for a in ACTIONS)
    assert viewer.summary() == "x (viewer): may read every page and download"


def test_a_refusal_is_a_plain_sentence_naming_person_role_and_what_it_needs() -> None:
    with pytest.raises(NotPermitted) as refused:
        require(Actor("ana@example.com", Role.EDITOR), "reveal_holdout")
    assert str(refused.value) == ("ana@example.com is an editor here and may not reveal the holdout: that needs the "
                                  "owner role. Ask the server's owner to change your role.")
    with pytest.raises(NotPermitted, match="no person is named"):
        require(None, "delete")  # type: ignore[arg-type]
    require(Actor("lee", Role.OWNER), "delete")  # an owner passes


def test_the_command_line_acts_as_owner_named_by_who_or_the_login_name() -> None:
    assert local_actor() == Actor(login_name(), Role.OWNER, "the login name")
    assert local_actor("  ana ") == Actor(f"ana (--who; login {login_name()})", Role.OWNER, "--who")  # a claim


def test_roles_come_from_addresses_and_domains_the_highest_role_wins(tmp_path: Path) -> None:
    config = parse_access(tomllib.loads(CONFIG)["evalcore"])
    assert config.membership("bo@example.com").role == Role.VIEWER  # by domain
    assert config.membership("ANA@example.com").role == Role.EDITOR  # address beats domain; case does not matter
    assert config.membership("lee@example.com").role == Role.OWNER
    assert config.membership("lee@example.com").workspace is None  # the server's own workspace
    kim = config.membership("kim@search.example.org")
    assert (kim.team, kim.role, kim.workspace) == ("search", Role.OWNER, Path("/srv/evalcore/search"))
    assert config.membership("eve@elsewhere.net") is None  # on no list: not let in
    assert config.membership("bo@sub.example.com") is None  # a domain is exact, not its subdomains


def test_no_roles_configured_lets_nobody_in() -> None:
    assert parse_access(None).empty and parse_access({}).membership("ana@example.com") is None


def test_one_person_in_two_teams_is_refused_with_both_names() -> None:
    config = parse_access({"viewers": ["@example.com"],
                           "teams": {"search": {"workspace": "/srv/a", "editors": ["ana@example.com"]}}})
    with pytest.raises(NotPermitted, match="more than one team .*'search'"):
        config.membership("ana@example.com")


@pytest.mark.parametrize(("section", "expected"), [
    ({"owner": ["a@b.c"]}, "unknown key 'owner'"),
    ({"viewers": ["not-an-address"]}, "expected an email address (ana@example.com) or a domain"),
    ({"viewers": 3}, "viewers: expected a list"),
    ({"workspace": "relative/folder"}, "expected an absolute folder path"),
    ({"teams": {"a": {"viewers": ["@x.io"]}}}, "teams.a: expected a workspace folder of its own"),
    ({"teams": {"a": {"workspace": "/srv/w"}, "b": {"workspace": "/srv/w"}}}, "two teams name the workspace"),
])
def test_a_mistake_in_the_roles_names_the_key_and_what_was_expected(section, expected) -> None:
    with pytest.raises(AccessConfigError) as bad:
        parse_access(section, "secrets.toml [evalcore]")
    assert expected in str(bad.value) and str(bad.value).startswith("secrets.toml [evalcore]")


def test_unreadable_toml_names_the_file() -> None:
    assert secrets_problem(b"[evalcore\n", "secrets.toml").startswith("secrets.toml: not valid TOML")


def test_the_server_default_workspace_counts_as_a_team_folder() -> None:
    config = parse_access({"viewers": ["@example.com"], "teams": {"b": {"workspace": "/srv/b", "owners": ["@b.io"]}}})
    assert config.with_default(Path("/srv/a")).membership("x@example.com").workspace == Path("/srv/a")
    with pytest.raises(AccessConfigError, match="two teams would use the workspace /srv/b"):
        config.with_default(Path("/srv/b"))


# ----------------------------------------------------------------------------- look-alike addresses (issue 24)

KELVIN_KIM = "\u212aim@example.test"  # KELVIN SIGN, not the letter K: another address that looks like kim's


def test_a_look_alike_address_does_not_take_another_persons_role() -> None:
    config = parse_access({"owners": ["kim@example.test"], "viewers": ["@example.test"]})
    with pytest.raises(NotPermitted) as refused:
        config.membership(KELVIN_KIM)
    message = str(refused.value)
    assert "ambiguous" in message and "\\u212aim@example.test" in message and "kim@example.test" in message.lower()
    assert "\n" not in message
    assert config.membership("Kim@EXAMPLE.test").role == Role.OWNER  # ASCII case still does not matter


@pytest.mark.parametrize("address", [
    "kim\uff20example.test",  # FULLWIDTH COMMERCIAL AT
    "kim@exa\u2163mple.test",  # ROMAN NUMERAL FOUR
    "ki\u0301m@example.test",  # i + COMBINING ACUTE ACCENT: NFKC composes them into one letter
])
def test_an_address_that_unicode_normalisation_changes_is_refused_as_ambiguous(address) -> None:
    config = parse_access({"viewers": ["@example.test"]})
    with pytest.raises(NotPermitted, match="ambiguous"):
        config.membership(address)


def test_non_ascii_letters_are_compared_exactly_not_case_folded() -> None:
    config = parse_access({"owners": ["kim@example.test"]})
    assert config.membership("k\u0131m@example.test") is None  # dotless i: a different address, on no list
    assert parse_access({"owners": ["\u00fcnal@example.test"]}).membership("\u00dcnal@example.test") is None


def test_a_look_alike_address_in_the_roles_is_a_configuration_error() -> None:
    with pytest.raises(AccessConfigError) as bad:
        parse_access({"owners": [KELVIN_KIM]}, "secrets.toml [evalcore]")
    message = str(bad.value)
    assert message.startswith("secrets.toml [evalcore].owners: ") and "ambiguous" in message and "\n" not in message


@pytest.mark.parametrize("entry", [["a@x.com"], 7, True, {"email": "a@x.com"}])
def test_a_roles_entry_that_is_not_text_is_a_configuration_error_not_a_rule_matching_nobody(entry) -> None:
    with pytest.raises(AccessConfigError) as bad:
        parse_access({"owners": [entry]}, "secrets.toml [evalcore]")
    assert str(bad.value) == ("secrets.toml [evalcore].owners: expected each entry to be an email address or @domain "
                              f"in quotes (\"ana@example.com\"), got {entry!r}.")
    with pytest.raises(AccessConfigError, match=r"teams\.a\.viewers: expected each entry"):
        parse_access({"teams": {"a": {"workspace": "/srv/a", "viewers": [entry]}}}, "secrets.toml [evalcore]")
