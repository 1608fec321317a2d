"""Personal data in query text is masked before anything is kept or shown: emails, phone numbers, Luhn-valid card
numbers, IBANs, SSNs and IP addresses; the count is reported; none reaches the output, the queries file or a
message. Presidio, when installed, is used on what is shown (checked here with a stand-in analyzer)."""

from __future__ import annotations

import json
import types

import pyarrow as pa
import pytest
from cli_runner import run_cli

from evalcore.logs import personal_data
from evalcore.logs.personal_data import iban_ok, luhn_ok, mask_text, mask_texts


@pytest.mark.parametrize(("text", "masked", "kinds"), [
    ("reset for jane.doe+shop@example.co.uk", "reset for <email>", ("email",)),
    ("card 4111 1111 1111 1111 declined", "card <card> declined", ("card",)),
    ("card 4111-1111-1111-1111", "card <card>", ("card",)),
    ("order 4111 1111 1111 1112", "order 4111 1111 1111 1112", ()),  # fails Luhn, 16 digits: an order number
    ("order 12345678", "order 12345678", ()),  # eight digits, no separators: an order number
    ("call +44 20 7946 0958 please", "call <phone> please", ("phone",)),
    ("call 555-0142", "call <phone>", ("phone",)),
    ("call (030) 1234 5678", "call <phone>", ("phone",)),
    ("invoice 2024-01-15", "invoice 2024-01-15", ()),
    ("iban gb82 west 1234 5698 7654 32", "iban <iban>", ("iban",)),
    ("ssn 123-45-6789", "ssn <ssn>", ("ssn",)),
    ("blocked from 192.168.10.24", "blocked from <ip>", ("ip",)),
    ("error 404 on page 3", "error 404 on page 3", ()),
])
def test_each_kind_is_masked_and_ordinary_numbers_are_not(text: str, masked: str, kinds: tuple) -> None:
    assert mask_text(text) == (masked, kinds)


def test_luhn_and_iban_checks() -> None:
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")
    assert iban_ok("GB82WEST12345698765432") and not iban_ok("GB82WEST12345698765433")


def test_only_candidates_are_looked_at_and_the_rest_kept_as_they_are() -> None:
    texts = pa.array(["plain query", None, "mail a@b.io", "12 34 56 78 90 12", "x"], pa.large_string())
    masked, changed, kinds = mask_texts(texts)
    assert masked.to_pylist() == ["plain query", None, "mail <email>", "<phone>", "x"]
    assert changed.tolist() == [False, False, True, True, False]
    assert kinds == [("email",), ("phone",)]


LEAKS = ("jane.doe", "example.com", "4111", "7946", "0958")


def test_no_personal_data_reaches_the_output_or_the_queries_file(tmp_path) -> None:
    log = tmp_path / "log.csv"
    log.write_text("query,session\n"
                   "my email is jane.doe@example.com,s1\n"
                   "My Email is JANE.DOE@EXAMPLE.COM,s2\n"
                   "card 4111 1111 1111 1111 declined,s3\n"
                   "call +44 20 7946 0958,s4\n"
                   "refund policy,s5\n", encoding="utf-8")
    out = tmp_path / "queries.jsonl"
    for fmt in ("json", "table", "csv"):
        done = run_cli("sample", "--log", log, "--n", "10", "--format", fmt, "--output", out)
        assert done.returncode == 0, done.stderr
        for leak in LEAKS:
            assert leak not in done.stdout.lower() and leak not in done.stderr.lower()
            assert leak not in out.read_text(encoding="utf-8").lower()
    found = json.loads(run_cli("sample", "--log", log, "--n", "10", "--format", "json").stdout)
    assert found["pii"]["queries"] == 4 and found["pii"]["action"] == "masked"
    assert found["pii"]["kinds"] == {"email": 2, "card": 1, "phone": 1}
    assert "my email is <email>" in {r["query"] for r in found["sample"]}
    assert found["distinct"] == 4  # the two emails are one query once masked


def test_a_message_about_a_bad_line_masks_it_too(tmp_path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text('{"user_query": "a"}\nwrite to jane.doe@example.com\n', encoding="utf-8")
    done = run_cli("sample", "--log", log)
    assert done.returncode == 2 and "<email>" in done.stderr and "jane" not in done.stderr


def test_presidio_when_installed_masks_what_is_shown(tmp_path, monkeypatch) -> None:
    class Found(types.SimpleNamespace):
        pass

    class Analyzer:
        def analyze(self, text: str, language: str):
            at = text.find("alice")
            return [Found(start=at, end=at + 5, entity_type="PERSON")] if at >= 0 else []

    monkeypatch.setattr(personal_data, "stronger_recogniser",
                        lambda: lambda text: personal_data.presidio_mask(Analyzer(), text))
    monkeypatch.setattr("evalcore.logs.sampling.stronger_recogniser", personal_data.stronger_recogniser)
    log = tmp_path / "log.csv"
    log.write_text("query\nticket from alice smith\nrefund\n", encoding="utf-8")
    found = json.loads(run_cli("sample", "--log", log, "--n", "5", "--format", "json").stdout)
    assert {r["query"] for r in found["sample"]} == {"ticket from <person> smith", "refund"}
    assert found["pii"]["recogniser"] == "patterns + presidio" and found["pii"]["shown_masked"] == 1


def test_without_presidio_the_patterns_alone_apply() -> None:
    if personal_data.importlib.util.find_spec("presidio_analyzer") is None:
        assert personal_data.stronger_recogniser() is None
