"""The workbench's HTML report, opened in a real headless browser (Chromium from the system's
packages, driven by Selenium): it loads without console errors and without the network, every
chart renders, and the per-call view shows the messages each strategy sent. The browser is
required: without it this test fails, saying what to install (.ci/run installs it)."""

import json
import os
import re
import shutil

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

import agentmsg
import transcripts
from agentmsg import run_workbench, write_html
from agentmsg.cli import main

STRATEGIES = ["trim", "mask-tool-outputs", "summarize", "trim+clear25"]
BUDGETS = [4000, 8000]


@pytest.fixture(scope="module")
def report():
    return run_workbench(agentmsg.iter_transcripts(transcripts.TRAJECTORY_DIR), STRATEGIES, BUDGETS, keep_prompts=True)


@pytest.fixture(scope="module")
def browser():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not (chromium and driver_path):
        # .ci/run installs the browser and sets AGENTMSG_REQUIRE_BROWSER=1, so CI never skips this;
        # a fresh machine without root still passes the README's test command.
        message = "the HTML report test needs Chromium: apt-get install chromium chromium-driver"
        if os.environ.get("AGENTMSG_REQUIRE_BROWSER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def page(report, browser, tmp_path_factory):
    path = tmp_path_factory.mktemp("html") / "report.html"
    write_html(report, path)
    browser.get(path.as_uri())
    return path


def test_the_page_is_self_contained(page):
    html = page.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "@import" not in html and "fetch(" not in html


def test_the_page_loads_without_console_errors(page, browser):
    assert browser.title == "agentmsg workbench"
    errors = [entry for entry in browser.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")]
    assert errors == []
    rows = browser.find_elements(By.CSS_SELECTOR, "#table tr")
    assert len(rows) == 1 + len(STRATEGIES) * len(BUDGETS)


def test_every_chart_renders_for_every_measure(page, browser, report):
    measure = Select(browser.find_element(By.ID, "measure"))
    keys = [option.get_attribute("value") for option in measure.options]
    assert len(keys) == 11
    for key in keys:
        measure.select_by_value(key)
        panels = browser.find_elements(By.CSS_SELECTOR, "#charts .panel")
        assert [p.get_attribute("data-budget") for p in panels] == [str(b) for b in BUDGETS], key
        for panel in panels:
            bars = panel.find_elements(By.CSS_SELECTOR, "rect.bar")
            assert [b.get_attribute("data-strategy") for b in bars] == STRATEGIES, key
            assert any(float(b.get_attribute("width")) > 0 for b in bars) or key == "over_budget", key
    measure.select_by_value("cost")
    panel = browser.find_elements(By.CSS_SELECTOR, "#charts .panel")[0]
    title = panel.find_elements(By.CSS_SELECTOR, "rect.bar title")[0].get_attribute("textContent")
    trim = next(r for r in report.overall if (r.strategy, r.budget) == ("trim", 4000))
    assert title == f"trim at 4000: ${trim.cost:.4f}"
    assert browser.get_log("browser") == []


def test_the_per_call_view_shows_what_each_strategy_sent(page, browser, report):
    seen = set()
    for name, budget, call in (("gpt4_pydicom", 4000, 6), ("function_calling_marshmallow", 8000, 4),
                               ("function_calling_marshmallow", 8000, 5)):
        seen |= set(shown_call(browser, report, name, budget, call))
    # the calls chosen show every mark: new, kept, masked now and before, a summary
    assert seen == {"new", "kept", "masked", "masked kept", "summary"}
    assert browser.get_log("browser") == []


def shown_call(browser, report, name, budget, call):
    """Chooses a call in the page, checks each strategy's column against the replay; the marks."""
    marks = []
    Select(browser.find_element(By.ID, "transcript")).select_by_value(name)
    Select(browser.find_element(By.ID, "budget")).select_by_value(str(budget))
    box = browser.find_element(By.ID, "call")
    box.clear()
    box.send_keys(str(call))
    history = browser.find_elements(By.CSS_SELECTOR, "#history .msg")
    for strategy in STRATEGIES:
        row = next(r for r in report.rows if (r.transcript, r.strategy, r.budget) == (name, strategy, budget))
        sent = row.prompts[call - 1]
        assert len(history) == sent.answered
        column = browser.find_element(By.CSS_SELECTOR, f'.strategy[data-strategy="{strategy}"]')
        shown = [(m.get_attribute("data-origin"), m.get_attribute("data-status"))
                 for m in column.find_elements(By.CSS_SELECTOR, ".msg")]
        kept = [item for item in shown if item[1] != "dropped"]
        assert [origin for origin, _ in kept] == ["" if o is None else str(o) for o in sent.origin], strategy
        assert [origin for origin, status in shown if status == "dropped"] == [
            str(o) for o in sent.dropped_origins if o is not None], strategy
        # marks: the history's own messages are new since the previous call or kept; a changed one is
        # masked (or a summary), "kept" added when it was already so in the previous prompt
        previous = row.prompts[call - 2].answered if call > 1 else 0
        history_messages = report.histories[name]
        expected = []
        for message, status, origin in zip(sent.messages, sent.status, sent.origin):
            if origin is not None and message is history_messages[origin]:
                expected.append("new" if origin >= previous else "kept")
            else:
                kind = "summary" if origin is None else "masked"
                expected.append(kind if status != "kept" else f"{kind} kept")
        assert [status for _, status in kept] == expected, strategy
        marks += expected
        header = column.find_element(By.TAG_NAME, "h4").text
        assert header == f"{strategy}: {sent.tokens} tokens, {sent.cached} from the previous prompt"
    return marks


def test_the_cli_writes_the_page(tmp_path, capsys):
    path = tmp_path / "wb.html"
    assert main(["workbench", str(transcripts.TRAJECTORY_DIR / "function_calling_simple.traj"), "--strategy", "trim",
                 "--budget", "1000", "--html", str(path)]) == 0
    data = json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>', path.read_text(),
                                re.S).group(1))
    assert list(data["transcripts"]) == ["function_calling_simple"]
    assert data["strategies"] == ["trim"] and data["budgets"] == [1000]
