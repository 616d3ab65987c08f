"""The playground in a real browser: Debian's chromium and chromium-driver drive `sourcerer serve` at `/` (upload,
ask, click a citation, see the cited words highlighted, see a refusal in plain words). Screenshots go to
`test-artifacts/`. Skipped, with how to install, where no browser is installed; nothing is ever downloaded."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from fakes import server_log, start_serve
from sourcerer.ledger.sqlite import SQLiteLedger
from sourcerer.service.admin import issue_key

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")

pytestmark = pytest.mark.skipif(
    not (CHROMIUM and DRIVER),
    reason="no browser: apt-get install -y chromium chromium-driver (.ci/run does) to run the playground tests",
)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager must not fetch a driver or a browser
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,1400"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    driver.implicitly_wait(0)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    home = tmp_path_factory.mktemp("playground-home")
    env = {**os.environ, "SOURCERER_HOME": str(home), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    process, url = start_serve(env)
    process.home = home  # type: ignore[attr-defined]  # where its index and ledger live
    key = issue_key(SQLiteLedger(home / "ledger.db"), "acme", ["acme"], ["read", "write"], tier="pro").key
    yield url, key, process
    process.terminate()
    process.wait(timeout=10)


def _wait(driver, condition, timeout=60):
    """Until `condition` holds. It finds its elements afresh at each try: an element the page redraws between
    finding it and reading it (a PDF canvas on zoom) is tried again, not an error."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, ignored_exceptions=(NoSuchElementException, StaleElementReferenceException)).until(condition)


def _embedded(url: str, key: str) -> None:
    """Wait until the tenant's documents are searchable by meaning: their vectors are read in the background, and a
    question asked before reads them by their words alone."""
    deadline = time.time() + 60
    while time.time() < deadline:
        request = urllib.request.Request(url + "/v1/documents", headers={"Authorization": f"Bearer {key}"})
        with urllib.request.urlopen(request, timeout=30) as reply:
            if not json.loads(reply.read())["embedding_backlog"]:
                return
        time.sleep(0.3)


def _ask(driver, question):
    from selenium.webdriver.common.by import By

    box = driver.find_element(By.ID, "q")
    box.clear()
    box.send_keys(question)
    driver.find_element(By.CSS_SELECTOR, "#ask button").click()
    return _wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, "#answer .answer"))


def test_upload_ask_click_a_citation_and_see_a_refusal(browser, served):
    from selenium.webdriver.common.by import By

    url, key, process = served
    ARTIFACTS.mkdir(exist_ok=True)
    browser.get(url + "/")
    browser.find_element(By.ID, "key").send_keys(key)
    upload = browser.find_element(By.ID, "files")
    for name in ("handbook/operations.md", "security-policy.pdf"):
        upload.send_keys(str(ROOT / "examples" / name))
        file_name = name.rsplit("/", 1)[-1]
        status = _wait(
            browser,
            lambda d, n=file_name: next(
                (
                    li
                    for li in d.find_elements(By.CSS_SELECTOR, "#uploads li")
                    if li.text.startswith(n) and (li.get_attribute("data-ready") == "true" or li.get_attribute("class") == "err")
                ),
                None,
            ),
        )
        assert status.get_attribute("class") == "ok" and "ingested" in status.text, f"{status.text}\n{server_log(process)}"

    answer = _ask(browser, "How long did the failover cutover take?")
    assert "42 seconds" in answer.text
    browser.find_element(By.CSS_SELECTOR, "#answer .chip").click()
    highlight = _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#source mark"))
    assert "42 seconds" in highlight.text
    browser.save_screenshot(str(ARTIFACTS / "playground-answer.png"))

    answer = _ask(browser, "How quickly must a security incident be reported?")
    assert "1 hour" in answer.text, answer.text
    browser.find_element(By.CSS_SELECTOR, "#answer .chip").click()
    _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#source .pdfpage canvas + .cited-box"))  # page rendered
    assert "page 2" in browser.find_element(By.CSS_SELECTOR, "#source .where").text
    browser.save_screenshot(str(ARTIFACTS / "playground-pdf-box.png"))

    refusal = _ask(browser, "What is our parental leave policy?")
    assert refusal.text.startswith("Not answered:") and "refusal" in refusal.get_attribute("class")
    # what to do next, and what the documents say that comes closest
    assert refusal.find_element(By.CSS_SELECTOR, ".next").text.startswith(("Upload", "Ask in", "The documents"))
    closest = refusal.find_elements(By.CSS_SELECTOR, ".closest li")
    assert closest and all(": " in li.text for li in closest)  # each a labelled passage
    browser.save_screenshot(str(ARTIFACTS / "playground-refusal.png"))
    past = browser.find_elements(By.CSS_SELECTOR, "#past li")
    assert len(past) == 3

    key_box = browser.find_element(By.ID, "key")  # no key: an error a person can act on, not the API's wording
    key_box.clear()
    key_box.send_keys(" ")
    box = browser.find_element(By.ID, "q")
    box.clear()
    box.send_keys("How long did the failover cutover take?")
    browser.find_element(By.CSS_SELECTOR, "#ask button").click()
    error = _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#answer .error"))
    assert "paste one above" in error.text and "Bearer" not in error.text
    key_box.clear()
    key_box.send_keys(key)


def _post(url, key, path, body):
    import json
    import urllib.error
    import urllib.request

    request = urllib.request.Request(
        url + path,
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status, json.loads(reply.read()), dict(reply.headers)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read()), dict(error.headers)


HOSTILE = "javascript:document.title=sessionStorage.getItem('sourcerer-key')+localStorage.getItem('sourcerer-key')//a.md"


def test_a_javascript_source_uri_is_refused_and_never_runs_on_click(browser, served):
    import sqlite3

    from selenium.webdriver.common.by import By

    url, key, process = served
    for uri in (HOSTILE, "JaVaScRiPt:alert(1)//a.md", " java\tscript:alert(1)", "data:text/html,<script>alert(1)</script>"):
        status, body, _ = _post(url, key, "/v1/documents", {"source_uri": uri, "text": "The vault code rotates every 90 days."})
        assert status == 400 and body["error"]["code"] == "unsupported_document", (uri, body)
        assert "relative path or an http(s)" in body["error"]["message"]

    # a document stored before the check (or by a store written to some other way) still cannot run its link:
    # the playground builds every href from an allow-list
    status, body, _ = _post(url, key, "/v1/documents", {"source_uri": "vault.md", "text": "The vault code rotates every 90 days."})
    assert status == 200, body
    with sqlite3.connect(process.home / "index.db") as db:
        for table in ("documents", "chunks"):
            columns = [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
            if "source_uri" in columns:
                db.execute(f"UPDATE {table} SET source_uri = ? WHERE source_uri = 'vault.md'", (HOSTILE,))

    browser.get(url + "/")
    browser.execute_script("localStorage.setItem('sourcerer-key', 'stale-key-from-an-old-playground')")
    browser.get(url + "/")
    assert browser.execute_script("return localStorage.getItem('sourcerer-key')") is None  # cleared, never used
    box = browser.find_element(By.ID, "key")
    box.clear()
    box.send_keys(key)
    browser.execute_script("document.getElementById('key').dispatchEvent(new Event('change'))")
    title = browser.title
    answer = _ask(browser, "How often does the vault code rotate?")
    assert "90 days" in answer.text, answer.text
    browser.find_element(By.CSS_SELECTOR, "#answer .chip").click()
    _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#source .where"))
    cited = [e for e in browser.find_elements(By.CSS_SELECTOR, "#source a, #source span") if "javascript:" in e.text]
    assert cited, "the citation's source_uri is shown"
    assert all(e.tag_name == "span" for e in cited)  # shown as text, not a link
    for element in cited:
        element.click()
    assert browser.title == title and browser.current_url.startswith(url)  # nothing ran, nothing navigated
    assert browser.execute_script("return [...document.querySelectorAll('a')].filter(a => !/^(https?:|#)/.test(a.href) && a.href).length") == 0


def test_pages_and_api_answers_carry_the_security_headers(browser, served):
    import urllib.request

    from selenium.webdriver.common.by import By

    url, key, _ = served
    for page in ("/", "/docs", "/playground.js", "/docs/swagger-init.js"):
        with urllib.request.urlopen(url + page, timeout=30) as reply:
            csp = reply.headers["Content-Security-Policy"]
            assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and "unsafe-eval" not in csp, page
            assert reply.headers["X-Content-Type-Options"] == "nosniff" and reply.headers["X-Frame-Options"] == "DENY"
            assert reply.headers["Referrer-Policy"] == "no-referrer"
            if page in ("/", "/docs"):
                assert b"<script>" not in reply.read()  # no inline script: the CSP would block it
    status, body, headers = _post(url, key, "/v1/search", {"q": "failover"})
    assert status == 200 and headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Content-Security-Policy"].startswith("default-src 'none'") and headers["X-Frame-Options"] == "DENY"
    status, body, headers = _post(url, "not-a-key", "/v1/search", {"q": "failover"})
    assert status == 401 and headers["X-Content-Type-Options"] == "nosniff"

    browser.get(url + "/docs")  # Swagger UI still works under the CSP, and does not persist a key
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#swagger-ui .opblock"))
    assert browser.execute_script("return window.ui.getConfigs().persistAuthorization") is False


def test_transcript_times_past_an_hour_read_as_a_player_shows_them(browser, served):
    url, _, _ = served
    browser.get(url + "/")
    assert browser.execute_script("return [clock(760000), clock(3750000), clock(36000000)]") == ["12:40", "1:02:30", "10:00:00"]


def test_a_partial_answer_shows_its_kept_claims_and_marked_gaps(browser, tmp_path):
    """verify "keep only supported claims": a model that adds a rule its source lacks; the playground shows the
    kept sentence with its citation chip, the removed one as a marked gap, and every verdict."""
    import json

    from fakes import ScriptedServer, chat_completion
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    model = ScriptedServer()

    def embellishing(body):
        prompt = body["messages"][-1]["content"]
        if "Claims:" in prompt:  # never asked: the local judge rules below
            return 500, {"error": "unexpected"}, {}
        answer = "The failover cutover completed in 42 seconds [1]. The drill is repeated every week [1]."
        return 200, chat_completion(json.dumps({"refused": False, "citations": [1], "answer": answer})), {}

    model.responder = embellishing
    home = tmp_path / "home"
    env = {
        **os.environ,
        "SOURCERER_HOME": str(home),
        "SOURCERER_EMBEDDER": "none",
        "SOURCERER_API_KEY": "sk-test",
        "SOURCERER_ENDPOINT": model.url + "/v1/chat/completions",
        "SOURCERER_MODEL": "test-model",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    process, url = start_serve(env)
    try:
        key = issue_key(SQLiteLedger(home / "ledger.db"), "acme", ["acme"], ["read", "write"], tier="pro").key
        text = "# Failover\n\nDuring the March drill, the failover cutover completed in 42 seconds.\n"
        assert _post(url, key, "/v1/documents", {"source_uri": "runbook.md", "text": text})[0] == 200
        other = "# Support\n\nSupport is available by chat from 8 am to 8 pm Eastern.\n"  # BM25 weighs terms across documents
        assert _post(url, key, "/v1/documents", {"source_uri": "support.md", "text": other})[0] == 200
        browser.get(url + "/")
        browser.find_element(By.ID, "key").send_keys(key)
        Select(browser.find_element(By.ID, "verify")).select_by_value("partial")
        answer = _ask(browser, "How long did the failover cutover take?")
        gap = answer.find_element(By.CSS_SELECTOR, ".gap")
        assert gap.text.startswith("removed: ") and "every week" not in answer.text.split("Verified")[0]
        assert "42 seconds" in answer.text and answer.find_elements(By.CSS_SELECTOR, ".chip")
        verdicts = [li.get_attribute("class") for li in answer.find_elements(By.CSS_SELECTOR, ".claims li")]
        assert verdicts == ["ok", "bad"] and "1 unsupported claim(s) were removed" in answer.text
        ARTIFACTS.mkdir(exist_ok=True)
        browser.save_screenshot(str(ARTIFACTS / "playground-partial.png"))
    finally:
        process.terminate()
        process.wait(timeout=10)
        model.close()


def test_a_conversation_thread_a_document_panel_and_a_favicon(browser, served):
    """Follow-ups are sent with the conversation (the answer shows the question it was searched as), the
    documents the key can see are listed with a delete button, and the page has an icon."""
    import urllib.request

    from selenium.webdriver.common.by import By

    url, key, _ = served
    text = "# Drills\n\nThe backup drill restored the database in 14 minutes.\nThe replica lag stayed under one second.\n"
    assert _post(url, key, "/v1/documents", {"source_uri": "drills.md", "text": text})[0] == 200
    _embedded(url, key)
    browser.get(url + "/")
    browser.execute_script("sessionStorage.removeItem('sourcerer-turns')")
    browser.get(url + "/")
    key_box = browser.find_element(By.ID, "key")
    key_box.clear()  # the tab may remember an earlier key
    key_box.send_keys(key)
    browser.find_element(By.ID, "refresh-docs").click()

    def drills(d):  # the panel re-renders as it refreshes: find the item afresh each time
        try:
            return [li for li in d.find_elements(By.CSS_SELECTOR, "#documents li") if li.text.startswith("drills.md")]
        except Exception:  # noqa: BLE001 - an element replaced while it was read: look again
            return []

    assert re.search(r"\d+ chunks? in acme", _wait(browser, drills)[0].text)
    status = _wait(browser, lambda d: d.find_element(By.ID, "embedding-status").text)  # the status of embedding
    assert "searchable by meaning" in status or "waiting for their meaning" in status

    first = _ask(browser, "How long did the backup drill take to restore the database?")
    assert "14 minutes" in first.text
    assert "1 question(s)" in browser.find_element(By.ID, "conversation").text
    _ask(browser, "And what about the replica lag?")
    rewrite = _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#answer .rewrite"))
    assert rewrite.text.startswith("Searched as:") and "replica lag" in rewrite.text
    browser.save_screenshot(str(ARTIFACTS / "playground-conversation.png"))

    browser.refresh()  # past answers and the conversation survive a reload of the tab
    past = _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#past li"))
    assert past[0].text.startswith("And what about the replica lag? — answered")
    assert "2 question(s)" in browser.find_element(By.ID, "conversation").text
    past[0].click()
    _wait(browser, lambda d: "audit: not audited yet" in d.find_element(By.CSS_SELECTOR, "#past li").text)
    assert "replica lag stayed under one second" in browser.find_element(By.CSS_SELECTOR, "#past li").text

    _wait(browser, drills)[0].find_element(By.TAG_NAME, "button").click()  # delete it
    _wait(browser, lambda d: not drills(d) and d.find_elements(By.CSS_SELECTOR, "#documents li"))
    with urllib.request.urlopen(url + "/favicon.ico", timeout=30) as reply:
        assert reply.status == 200 and reply.headers["Content-Type"] == "image/svg+xml"


def test_a_transcript_citation_shows_its_cue_on_a_timeline_and_no_dead_link(browser, served):
    """A cited cue is marked on the chunk's stretch of the recording, with its times; a relative source (the
    transcript's file name) is text, not a link to a 404 on this server."""
    from selenium.webdriver.common.by import By

    url, _, process = served
    # a tenant of its own: only the transcript can answer
    key = issue_key(SQLiteLedger(process.home / "ledger.db"), "media", ["media"], ["read", "write"], tier="pro").key
    text = (ROOT / "examples" / "drill-review.vtt").read_text(encoding="utf-8")
    media = {"media_url": "https://media.example.com/drill-review.mp4"}  # the recording the transcript is of
    assert _post(url, key, "/v1/documents", {"source_uri": "drill-review.vtt", "text": text, "metadata": media})[0] == 200
    _embedded(url, key)
    browser.get(url + "/")
    key_box = browser.find_element(By.ID, "key")
    key_box.clear()
    key_box.send_keys(key)
    answer = _ask(browser, "How long did the failover cutover take in the drill review?")
    chips = [c for c in answer.find_elements(By.CSS_SELECTOR, ".chip") if "drill-review" in (c.get_attribute("title") or "")]
    assert chips, answer.text
    chips[0].click()
    cue = _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#source .timeline .cited-cue"))
    times = browser.find_element(By.CSS_SELECTOR, "#source .timeline-times").text
    assert times.startswith("12:40 — cited 12:") and "–12:55" in times  # the cue that says 42 seconds ends at 12:55
    assert cue.get_attribute("title").startswith("cited: 12:") and float(cue.value_of_css_property("width")[:-2]) > 0
    assert not browser.find_elements(By.CSS_SELECTOR, "#source .where a")  # "drill-review.vtt#t=767" is not a link here
    player = browser.find_element(By.CSS_SELECTOR, "#source video.player")  # the recording, cued to the cited words
    assert player.get_attribute("src").startswith("https://media.example.com/drill-review.mp4#t=76")
    cards = answer.find_elements(By.XPATH, "preceding-sibling::div[@class='cards']//button")  # above the answer
    assert cards and any("drill-review" in c.text for c in cards)
    browser.save_screenshot(str(ARTIFACTS / "playground-transcript.png"))


def test_a_pdf_citation_after_a_reload_renders_the_page_from_the_kept_original(browser, served):
    """The tab that uploaded a PDF is gone: the page is drawn from the original the server kept, at the panel's
    width (readable, not a 420 px thumbnail), zoomable, and a past answer's citation opens it too."""
    import base64

    from selenium.webdriver.common.by import By

    url, key, _ = served
    pdf = (ROOT / "examples" / "security-policy.pdf").read_bytes()
    status, body, _ = _post(
        url, key, "/v1/documents", {"source_uri": "policy-from-cli.pdf", "content_base64": base64.b64encode(pdf).decode()}
    )
    assert status == 200, body
    browser.set_window_size(1600, 1300)
    browser.get(url + "/")
    browser.execute_script("sessionStorage.removeItem('sourcerer-turns')")
    browser.refresh()  # nothing uploaded in this tab: only the server's original can show the page
    key_box = browser.find_element(By.ID, "key")
    key_box.clear()
    key_box.send_keys(key)
    answer = _ask(browser, "How quickly must a security incident be reported?")
    assert "1 hour" in answer.text, answer.text
    answer.find_element(By.CSS_SELECTOR, ".chip").click()
    canvas = _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#source .pdfpage canvas"))
    box = browser.find_element(By.CSS_SELECTOR, "#source .pdfpage .cited-box")
    width = canvas.size["width"]
    assert width >= 560 and box.size["width"] > 20 and box.size["height"] > 5  # readable, the box on the page
    source, answered = browser.find_element(By.ID, "source"), browser.find_element(By.ID, "answer")
    assert source.location["x"] > answered.location["x"] + 200  # the evidence beside the answer on a wide screen
    browser.save_screenshot(str(ARTIFACTS / "playground-pdf-original-1600.png"))
    browser.find_element(By.CSS_SELECTOR, "#source .zoom button[title='zoom in']").click()
    _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#source .pdfpage canvas").size["width"] > width * 1.2)
    browser.find_element(By.CSS_SELECTOR, "#source .zoom button:last-child").click()  # back to the panel's width

    browser.refresh()
    browser.find_elements(By.CSS_SELECTOR, "#past li")[0].click()  # a past answer's citation opens the page too
    chip = _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#past li .chip"))
    chip.click()
    _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#source .pdfpage canvas + .cited-box"))
    assert "page 2" in browser.find_element(By.CSS_SELECTOR, "#source .where").text

    browser.set_window_size(420, 1300)  # a phone's width: the panel below the answer, the page still whole
    answer = _ask(browser, "How quickly must a security incident be reported?")
    answer.find_element(By.CSS_SELECTOR, ".chip").click()
    canvas = _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#source .pdfpage canvas"))
    assert 250 <= canvas.size["width"] <= 420
    wide = browser.execute_script(
        "const w = document.documentElement.clientWidth; return [...document.querySelectorAll('body *')]"
        ".filter((e) => e.getBoundingClientRect().right > w + 1).map((e) => e.tagName + '#' + e.id + '.' + e.className + ':' + Math.round(e.getBoundingClientRect().right))"
    )
    over = browser.execute_script("const w = document.documentElement.clientWidth; return [w, document.documentElement.scrollWidth, ...[...document.querySelectorAll('body *')].filter((e) => e.scrollWidth > w).map((e) => e.tagName + '#' + e.id + '.' + e.className + ':' + e.scrollWidth)]")
    assert wide == [] and over[1] <= over[0], over
    browser.save_screenshot(str(ARTIFACTS / "playground-pdf-original-420.png"))
    assert browser.execute_script("return localStorage.getItem('sourcerer-key')") is None
    browser.set_window_size(1200, 1400)


def test_the_first_hour_in_one_walk(browser, served):
    """The whole first hour, in order, in one tab of a tenant of its own: upload Markdown, a PDF and a transcript;
    ask; follow up in the thread; open each kind of citation; reload and open a PDF citation again; see a refusal
    with its closest passages; delete a document. Screenshots of each step go to test-artifacts/first-hour-*."""
    from selenium.webdriver.common.by import By

    url, _, process = served
    key = issue_key(SQLiteLedger(process.home / "ledger.db"), "firsthour", ["firsthour"], ["read", "write"], tier="pro").key
    ARTIFACTS.mkdir(exist_ok=True)
    browser.set_window_size(1600, 1300)
    browser.get(url + "/")
    browser.execute_script("sessionStorage.clear()")
    browser.refresh()
    browser.find_element(By.ID, "key").send_keys(key)
    for name in ("handbook/operations.md", "security-policy.pdf", "drill-review.vtt"):
        browser.find_element(By.ID, "files").send_keys(str(ROOT / "examples" / name))
        file_name = name.rsplit("/", 1)[-1]
        item = _wait(
            browser,
            lambda d, n=file_name: next(
                (li for li in d.find_elements(By.CSS_SELECTOR, "#uploads li") if li.text.startswith(n) and li.get_attribute("data-ready") == "true"),
                None,
            ),
            timeout=120,
        )
        assert item.get_attribute("class") == "ok", f"{item.text}\n{server_log(process)}"
    browser.save_screenshot(str(ARTIFACTS / "first-hour-1-uploaded.png"))

    def open_citation(answer, title_part):
        chips = [c for c in answer.find_elements(By.CSS_SELECTOR, ".chip") if title_part in (c.get_attribute("title") or "")]
        assert chips, answer.text
        chips[0].click()
        return _wait(browser, lambda d: d.find_element(By.ID, "source") if d.find_element(By.ID, "source").is_displayed() else None)

    answer = _ask(browser, "How fast does the on-call engineer acknowledge a page?")  # Markdown
    assert "5 minutes" in answer.text, answer.text
    source = open_citation(answer, "operations.md")
    assert "5 minutes" in source.find_element(By.TAG_NAME, "mark").text and "line" in source.find_element(By.CSS_SELECTOR, ".where").text
    follow = _ask(browser, "And how often does it post an update?")  # a follow-up in the thread
    assert "30 minutes" in follow.text and "2 question(s)" in browser.find_element(By.ID, "conversation").text
    browser.save_screenshot(str(ARTIFACTS / "first-hour-2-thread.png"))
    browser.find_element(By.CSS_SELECTOR, "#conversation button").click()  # a new conversation for a new topic

    answer = _ask(browser, "How quickly must a security incident be reported?")  # PDF
    open_citation(answer, "Security policy")
    _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#source .pdfpage canvas + .cited-box"))
    answer = _ask(browser, "How long did the failover cutover take in the drill review?")  # transcript
    open_citation(answer, "drill-review")
    _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#source .timeline .cited-cue"))
    browser.save_screenshot(str(ARTIFACTS / "first-hour-3-transcript.png"))

    browser.refresh()  # the tab's uploads are gone: the PDF page comes from the server's original
    answer = _ask(browser, "How quickly must a security incident be reported?")
    open_citation(answer, "Security policy")
    _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#source .pdfpage canvas + .cited-box"))
    browser.save_screenshot(str(ARTIFACTS / "first-hour-4-pdf-after-reload.png"))

    refusal = _ask(browser, "What is our parental leave policy?")
    assert refusal.text.startswith("Not answered:") and refusal.find_elements(By.CSS_SELECTOR, ".closest li")
    browser.save_screenshot(str(ARTIFACTS / "first-hour-5-refusal.png"))

    browser.find_element(By.ID, "refresh-docs").click()

    def listed(d, name="drill-review.vtt"):
        try:
            return [li for li in d.find_elements(By.CSS_SELECTOR, "#documents li") if li.text.startswith(name)]
        except Exception:  # noqa: BLE001 - the panel re-rendered while it was read: look again
            return []

    _wait(browser, listed)[0].find_element(By.TAG_NAME, "button").click()
    _wait(browser, lambda d: not listed(d) and listed(d, "operations.md"))
    browser.save_screenshot(str(ARTIFACTS / "first-hour-6-deleted.png"))
    assert browser.execute_script("return localStorage.getItem('sourcerer-key')") is None
    browser.set_window_size(1200, 1400)
