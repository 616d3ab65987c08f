"""The playground in a real browser: Debian's chromium and chromium-driver drive `sourcerer serve` at `/` (upload,
ask, click a citation, see the cited words highlighted, see a refusal in plain words). Screenshots go to
`test-artifacts/`. Skipped, with how to install, where no browser is installed; nothing is ever downloaded."""

from __future__ import annotations

import os
import shutil
import sys
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
    key = issue_key(SQLiteLedger(home / "ledger.db"), "acme", ["acme"], ["read", "write"], tier="pro").key
    yield url, key, process
    process.terminate()
    process.wait(timeout=10)


def _wait(driver, condition, timeout=60):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(condition)


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
                    if li.text.startswith(n) and "uploading" not in li.text
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
    browser.save_screenshot(str(ARTIFACTS / "playground-refusal.png"))
    past = browser.find_elements(By.CSS_SELECTOR, "#past li")
    assert len(past) == 3
