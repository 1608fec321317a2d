"""Choose k in a real browser (Chromium via Playwright against `streamlit run`, 1400 x 900, the sample data): the
answer, the chart and the person's price are in the first screen; hovering any k tells every run's numbers there;
a click on the chart picks k: the k control, the numbers at k and the URL follow."""

from __future__ import annotations

import time

from playwright.sync_api import Page, expect

from tests.dashboard.browser_helpers import no_exceptions, open_page, params, settle, shoot

WIDTH, HEIGHT = 1400, 900


def _k_field(page: Page):
    return page.locator('[data-testid="stNumberInputField"]').first


def _plot(page: Page):
    """The chart's drawing (canvas or svg) and its box."""
    chart = page.locator('[data-testid="stVegaLiteChart"]').first
    expect(chart).to_be_visible()
    drawn = chart.locator("canvas, svg").first
    expect(drawn).to_be_visible()
    page.wait_for_timeout(500)  # vega-embed lays the chart out after it appears
    return drawn, drawn.bounding_box()


def _in_first_screen(locator) -> None:
    box = locator.bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= HEIGHT, box


def _at_k(page: Page, k: int):
    return page.get_by_text(f"At k = {k}:", exact=False).first


def test_the_chart_is_on_the_first_screen_and_a_click_picks_k(screen: Page, server: str) -> None:
    open_page(screen, f"{server}/choose-k?k=10")
    expect(_at_k(screen, 10)).to_be_visible()
    headline = screen.locator(".st-key-choose_k-headline")
    expect(headline).to_contain_text("Recall flattens at k = 9 for base")
    _in_first_screen(headline)  # the answer, not only its text, is on the first screen
    price = screen.get_by_role("spinbutton", name="LLM input price ($ per million tokens)")
    expect(price).to_be_visible()
    _in_first_screen(price)  # the price is set without opening anything
    drawn, box = _plot(screen)
    assert box["y"] >= 0 and box["x"] >= 0
    assert box["y"] + box["height"] <= HEIGHT, f"the chart ends at {box['y'] + box['height']:.0f} px, below the first screen"
    assert box["x"] + box["width"] <= WIDTH
    no_exceptions(screen)
    shoot(screen, "choose_k_first_screen")

    # The recall panel's plot: find k = 5 by hovering across it until the tooltip says so; it tells each run's
    # recall with its interval, tokens, dollars per 1,000 requests and what that chunk added.
    target, told = None, ""
    y = box["y"] + box["height"] * 0.35
    for i in range(80):
        x = box["x"] + box["width"] * (0.05 + 0.9 * i / 80)
        screen.mouse.move(x, y)
        screen.wait_for_timeout(60)
        tip = screen.locator("#vg-tooltip-element")
        if tip.count() and tip.is_visible() and "click to choose" in tip.inner_text():
            told = tip.inner_text()
            if told.split("click to choose)")[1].split()[0] == "5":
                target = x
                break
    assert target is not None, f"no column of the chart says it picks k = 5 (last: {told!r})"
    for words in ("base", "recall 0.", " – ", "tokens", "per 1,000 requests", "points for this chunk"):
        assert words in told, (words, told)
    started = time.monotonic()
    screen.mouse.click(target, y)
    expect(_at_k(screen, 5)).to_be_visible()
    settle(screen)
    took = time.monotonic() - started
    expect(_k_field(screen)).to_have_value("5")
    assert params(screen)["k"] == ["5"]
    expect(screen.get_by_text("k = 5 · n = 224 queries").first).to_be_visible()
    no_exceptions(screen)
    print(f"click to k = 5 drawn in {took:.2f} s")
    shoot(screen, "choose_k_clicked")

    # The control still moves k after a click; a click on the k picked before picks it again.
    screen.locator('[data-testid="stNumberInputStepUp"]').first.click()
    settle(screen)
    expect(_at_k(screen, 6)).to_be_visible()
    assert params(screen)["k"] == ["6"]
    screen.mouse.click(target, y)
    expect(_at_k(screen, 5)).to_be_visible()
    settle(screen)
    assert params(screen)["k"] == ["5"]
    screen.goto(screen.url)  # a copied link opens the same k
    settle(screen)
    expect(_k_field(screen)).to_have_value("5")
    no_exceptions(screen)
