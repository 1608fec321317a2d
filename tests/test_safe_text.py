"""`md_text`: user text inside Markdown reads exactly as written (no LaTeX, emoji, link, HTML or emphasis)."""

from __future__ import annotations

import re

import pytest

from evalcore.safe_text import md_text

WORD_JOINER = "\u2060"


def shown(markdown: str) -> str:
    """What a reader sees: backslash escapes resolved, the invisible word joiner dropped."""
    return re.sub(r"\\(.)", r"\1", markdown).replace(WORD_JOINER, "")


@pytest.mark.parametrize("text", [
    "$x^2$", ":smile:", "www.example.com", "<b>bold</b>", "http://example.com/a?b=c", "HTTPS://Example.com",
    "mail me@example.com", ":material/home:", ":red[alert]", "**strong** _em_ `code` [a](b) ![i](j) # h ~~s~~ | t",
    "$x^2$ :smile: www.example.com <b>bold</b>", "recall@10", "a\\b", "",
])
def test_shows_the_same_characters(text: str) -> None:
    assert shown(md_text(text)) == text


def test_latex_emoji_and_html_are_escaped() -> None:
    out = md_text("$x^2$ :smile: <b>bold</b> :material/home:")
    assert "$" not in out.replace("\\$", "")
    assert "\\:smile\\:" in out  # no shortcode can open or close
    assert "<" not in out.replace("\\<", "") and ">" not in out.replace("\\>", "")
    assert ":material/" not in out  # Streamlit's icon rewrite never matches


@pytest.mark.parametrize("text", [":red[alert]", "x :small y", ":help", ":green-badge[ok]", ":gray-background"])
def test_streamlit_directives_are_escaped(text: str) -> None:
    # Streamlit draws :red, :small, :help... even without brackets (the name then vanishes into an empty span).
    assert md_text(text).startswith("\\:") or " \\:" in md_text(text)
    assert shown(md_text(text)) == text


@pytest.mark.parametrize("text", ["Retrieval quality: labels:tune, k = 10", "Saved: evaluation 3", "a = b; c: d",
                                  "x:reddish"])
def test_a_colon_that_opens_nothing_stays_as_it_is(text: str) -> None:
    assert md_text(text) == text


@pytest.mark.parametrize("text, broken", [
    ("www.example.com", "www" + WORD_JOINER + "\\."),
    ("see http://example.com", "http" + WORD_JOINER + ":"),
    ("see https://example.com", "https" + WORD_JOINER + ":"),
    ("me@example.com", "me" + WORD_JOINER + "@"),
])
def test_bare_addresses_cannot_become_links(text: str, broken: str) -> None:
    # GFM links bare addresses after escapes are resolved, so the escaped dot alone would not stop it: a word
    # joiner sits where the link would start.
    assert broken in md_text(text)


@pytest.mark.parametrize("text", ["recall@10", "ndcg@5", "x@5.0", "labels:tune#abc", "a.b"])
def test_text_that_cannot_be_a_link_gets_no_word_joiner(text: str) -> None:
    assert WORD_JOINER not in md_text(text)


def test_newlines_are_flattened() -> None:
    assert md_text("a\nb\r\nc") == "a b  c"


@pytest.mark.parametrize("text", ["a -> b", "x >= 1", "y <= 2", "bge -- large", "a <- b", "x ~= y", ":streamlit:",
                                  ":material_home:"])
def test_what_streamlit_rewrites_after_escapes_is_kept_apart(text: str) -> None:
    """Streamlit turns these into arrows, signs, dashes, its logo or an icon after escapes are resolved: a word
    joiner keeps them apart; the characters are the same."""
    shown = md_text(text)
    assert WORD_JOINER in shown and shown.replace(WORD_JOINER, "").replace("\\", "") == text


def test_html_entities_show_as_written() -> None:
    assert md_text("R&amp;D") == "R\\&amp;D"


def test_one_line_escapes_everything_that_could_start_a_line_or_reorder_text() -> None:
    from evalcore.safe_text import has_control, one_line, text_table

    assert one_line("ana\nlee\r\tx\x1b[2K\u2028\u202eabc") == "ana\\nlee\\r\\tx\\x1b[2K\\u2028\\u202eabc"
    assert not has_control("ana@example.com (--who; login lee)") and has_control("ana\u2066")
    table = text_table(["who", "what"], [["ana\nlee reveal holdout", "x"]])
    assert len(table.splitlines()) == 3 and "ana\\nlee reveal holdout" in table


def test_a_terminal_shows_line_separators_and_bidi_overrides_escaped_as_written() -> None:
    """Query text on stdout: U+2028 would start a new line and U+202E reverse what follows on some terminals; both
    are shown as their escapes (as ESC and BEL always were), newlines and tabs kept."""
    from evalcore.safe_text import terminal_safe

    assert terminal_safe("a\u2028b\u202ec\u2066d\x1be\x07f\ng\th") == "a\\u2028b\\u202ec\\u2066d\\x1be\\x07f\ng\th"
