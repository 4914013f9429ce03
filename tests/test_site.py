"""The catalogue site (``zoo site build``): the builder's output, then the built site in headless Chromium.

The browser tests drive Debian's ``chromium`` + ``chromium-driver`` through Selenium (``./dev`` installs both);
they are skipped, with the reason, only where that browser is absent. Screenshots of the home page, a paper page
and a leaderboard go to ``$ZOO_SITE_SCREENSHOTS`` (default: a temporary folder the test prints).
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml

from zoo.site import build_site, load_leaderboards, slug

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = ROOT / "registry.yaml"
HOSTILE_TITLE = '<script>alert("title")</script>'
HOSTILE_SUMMARY = '"><img src=x onerror=alert(1)>'

# --- a tiny registry ---------------------------------------------------------------------------------------


def _stat(mean: float) -> dict:
    return {"mean": mean, "std": 0.1, "ci95": [mean - 0.2, mean + 0.2], "n": 3}


TINY = {"version": 1, "papers": [
    {"catalog": 1, "id": "alpha-inr", "title": "Alpha INR", "summary": "A toy representation.", "class": "model",
     "family": "INR", "status": "reproduced", "distribution": "zoo-alpha-inr", "path": "plugins/alpha-inr",
     "models": {"alpha_net": {"task": "toy_task", "tags": ["v1"]}}, "tasks": ["toy_task"],
     "pretrained": {"alpha_net.v1": {"metrics": {"psnr": 30.5}, "date": "2026-12-01"}},
     "reproduction": {"claim": "Alpha beats the baseline by 0.5 dB", "verdict": "reproduced", "date": "2026-12-01",
                      "seeds": [0, 1, 2], "seconds": 12.0, "notes": "deviation: 300 steps instead of 5000",
                      "settings": {"task": "toy_task", "steps": 300, "optimizer": "Adam"},
                      "checks": [{"check": "psnr: Alpha - base >= 0.5", "mean": 1.2, "std": 0.1, "ci95": [0.9, 1.5],
                                  "n": 3, "margin": 0.5, "verdict": "reproduced"}],
                      "rows": {"Alpha": {"psnr": _stat(31.0), "steps": _stat(300)}, "base": {"psnr": _stat(29.8)}}}},
    {"catalog": 2, "id": "beta-planned", "title": "Beta", "summary": "Not done yet.", "class": "method",
     "family": "SSL", "status": "planned"},
    {"catalog": 3, "id": "gamma-theory", "title": "Gamma survey", "summary": "A survey.", "class": "theory",
     "family": "OTHER", "status": "theory", "reason": "a survey: no model to ship"},
    {"catalog": 4, "id": "evil", "title": HOSTILE_TITLE, "summary": HOSTILE_SUMMARY, "class": "model",
     "family": 'INR"><b>x</b>', "status": "not-reproduced", "distribution": "zoo-evil", "path": "plugins/evil",
     "models": {"evil_net": {"task": "toy_task", "tags": []}}, "tasks": ["toy_task"],
     "reproduction": {"claim": "<b>bold</b> claim", "verdict": "not reproduced", "date": "2026-12-01", "seeds": [0],
                      "seconds": 1.0, "notes": "</p><script>stolen()</script>",
                      "checks": [{"check": "psnr: <x> >= 0", "mean": -1.0, "std": 0.1, "ci95": [-1.2, -0.8], "n": 1,
                                  "margin": 0.0, "verdict": "not reproduced"}],
                      "rows": {"<i>row</i>": {"psnr": _stat(20.0)}}}},
    {"catalog": 6, "id": "delta-legacy", "title": "Delta", "summary": "An old record.", "class": "model", "family": "SSL",
     "status": "plugin", "distribution": "zoo-delta-legacy", "path": "plugins/delta-legacy", "models": {}, "tasks": [],
     "reproduction": {"passed": True, "date": "2026-11-01", "summary": "loss 0.1 < 0.2"}},
    {"catalog": 5, "id": "odd id/../x", "title": "Odd id", "summary": "", "class": "method", "family": "SSL",
     "status": "planned"},
]}

# numbers whose text order (10.25 < 100 < 9.5) differs from their numeric order: the sort must be numeric
BOARD = {"task": "toy_task", "protocol": {"steps": 300, "seeds": [0, 1, 2]}, "command": "zoo bench toy_task",
         "versions": {"zoo-core": "0.0"}, "date": "2026-12-02", "primary": "psnr", "higher_is_better": {"psnr": True},
         "rows": [{"model": "evil_net", "params": 1000, "seconds": 20.0, "metrics": {"psnr": {"mean": 10.25, "std": 0.5,
                                                                                             "interval": [9.8, 10.7], "n": 3}}},
                  {"model": "baseline-mlp", "params": 10000, "seconds": 1.0, "metrics": {"psnr": 100}},
                  {"model": "alpha_net", "params": 100, "seconds": 2.0, "metrics": {"psnr": {"mean": 9.5, "n": 3}}}]}


def _write_tiny(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "leaderboards").mkdir(exist_ok=True)
    (folder / "leaderboards" / "toy_task.yaml").write_text(yaml.safe_dump(BOARD), encoding="utf-8")
    path = folder / "registry.yaml"
    path.write_text(yaml.safe_dump(TINY, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def tiny_site(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("tiny")
    out = src / "site"
    build_site(out, registry=_write_tiny(src), installed=False)
    return out


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.scripts = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.scripts += tag == "script"
        self.links += [v for k, v in attrs if k in ("href", "src") and v is not None]


def _links(page: Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def _pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


# --- the builder ---------------------------------------------------------------------------------------------


def test_every_paper_has_a_page_and_every_link_is_relative_and_resolves(tiny_site):
    for paper in TINY["papers"]:
        assert (tiny_site / "papers" / f"{slug(paper['id'])}.html").is_file(), paper["id"]
    assert slug("odd id/../x") != "odd id/../x" and "/" not in slug("odd id/../x")
    assert (tiny_site / "models" / "alpha_net.html").is_file() and (tiny_site / "tasks" / "toy_task.html").is_file()
    pages = _pages(tiny_site)
    assert len(pages) == 1 + len(TINY["papers"]) + 2 + 1  # home, papers, models, task
    for page in pages:
        for link in _links(page).links:
            if link.startswith("data:"):
                continue
            parts = urlsplit(link)
            assert not parts.scheme and not parts.netloc and not link.startswith("/"), f"{page.name}: {link}"
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            assert target.is_file() and tiny_site.resolve() in target.parents, f"{page}: {link} -> {target}"


def test_strings_from_the_registry_are_escaped(tiny_site):
    for page in _pages(tiny_site):
        html = page.read_text(encoding="utf-8")
        assert _links(page).scripts == 1, page  # site.js only: no script injected from registry data
        for raw in ("<script>alert", "<img src=x", "<b>bold</b>", "<script>stolen", "<i>row</i>", '"><b>x</b>'):
            assert raw not in html, (page, raw)
    evil = (tiny_site / "papers" / "evil.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(&#34;title&#34;)&lt;/script&gt;" in evil and "&lt;b&gt;bold&lt;/b&gt; claim" in evil
    assert "&lt;/p&gt;&lt;script&gt;stolen()" in evil
    home = (tiny_site / "index.html").read_text(encoding="utf-8")
    assert 'data-family="INR&#34;&gt;&lt;b&gt;x&lt;/b&gt;"' in home


def test_paper_pages_show_status_reason_verdict_and_the_create_line(tiny_site):
    alpha = (tiny_site / "papers" / "alpha-inr.html").read_text(encoding="utf-8")
    assert 'data-verdict="reproduced"' in alpha and "deviation: 300 steps instead of 5000" in alpha
    assert 'zoo.create("alpha_net.v1")' in alpha and "pip install zoo-alpha-inr" in alpha
    assert re.search(r"<td[^>]*>31</td>|31 <small>\[30\.8, 31\.2\]", alpha)  # the reproduction table's row
    theory = (tiny_site / "papers" / "gamma-theory.html").read_text(encoding="utf-8")
    assert "a survey: no model to ship" in theory and 'data-status="theory"' in theory
    assert 'data-status="planned"' in (tiny_site / "papers" / "beta-planned.html").read_text(encoding="utf-8")
    legacy = (tiny_site / "papers" / "delta-legacy.html").read_text(encoding="utf-8")
    assert re.search(r"earlier\s+pass/fail rule \(passed\): loss 0\.1 &lt; 0\.2", legacy) and "data-verdict" not in legacy
    model = (tiny_site / "models" / "alpha_net.html").read_text(encoding="utf-8")
    assert '<code id="create-line">zoo.create("alpha_net")</code>' in model and "psnr 30.5" in model


def test_task_page_shows_the_leaderboard_file_with_its_plots(tiny_site):
    task = (tiny_site / "tasks" / "toy_task.html").read_text(encoding="utf-8")
    order = [m for m in re.findall(r">(evil_net|baseline-mlp|alpha_net)<", task.split('id="leaderboard"')[1])]
    assert order == ["evil_net", "baseline-mlp", "alpha_net"]  # the file's order until a header is clicked
    assert "zoo bench toy_task" in task
    assert "Protocol as recorded by the latest reproduction on this task (Alpha INR, 2026-12-01)" in task
    assert "optimizer: Adam" in task
    for axis in ("params", "seconds"):
        svg = tiny_site / "plots" / f"toy_task-{axis}.svg"
        assert f'src="../plots/toy_task-{axis}.svg"' in task
        assert "<svg" in svg.read_text(encoding="utf-8")[:2000]


def test_a_task_without_a_leaderboard_shows_the_recorded_reproduction_rows(tmp_path):
    src = _write_tiny(tmp_path)
    shutil.rmtree(tmp_path / "leaderboards")
    build_site(tmp_path / "site", registry=src, installed=False)
    task = (tmp_path / "site" / "tasks" / "toy_task.html").read_text(encoding="utf-8")
    assert "No leaderboard recorded yet" in task and not (tmp_path / "site" / "plots" / "toy_task-params.svg").exists()
    # one line per (plugin, row, metric a check uses): Alpha's psnr and the base row's, evil's row; not "steps"
    assert task.count("<td>psnr</td>") == 3 and "<td>steps</td>" not in task


def test_malformed_leaderboards_are_errors_that_name_the_file(tmp_path):
    (tmp_path / "a.yaml").write_text("rows: {model: x}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"a\.yaml.*'rows' list"):
        load_leaderboards(tmp_path)
    (tmp_path / "a.yaml").write_text("rows: [{params: 3}]\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"a\.yaml: each row needs a 'model'"):
        load_leaderboards(tmp_path)
    assert load_leaderboards(tmp_path / "missing") == {}


def test_a_build_replaces_its_previous_build_and_never_clears_a_foreign_folder(tmp_path):
    src = _write_tiny(tmp_path / "src")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(FileExistsError, match="not a zoo site"):
        build_site(foreign, registry=src, installed=False)
    assert (foreign / "notes.txt").read_text(encoding="utf-8") == "mine"
    out = tmp_path / "site"
    build_site(out, registry=src, installed=False)
    (out / "papers" / "stale.html").write_text("old", encoding="utf-8")
    build_site(out, registry=src, installed=False)
    assert not (out / "papers" / "stale.html").exists() and (out / "papers" / "alpha-inr.html").is_file()


# --- the project's own registry, built by the command -----------------------------------------------------------


@pytest.fixture(scope="module")
def registry_copy(tmp_path_factory) -> Path:
    """A snapshot of registry.yaml: `zoo reproduce --record` may rewrite the file while these tests run."""
    path = tmp_path_factory.mktemp("registry") / "registry.yaml"
    shutil.copyfile(REGISTRY, path)
    return path


@pytest.fixture(scope="module")
def registry_data(registry_copy) -> dict:
    return yaml.safe_load(registry_copy.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def real_site(tmp_path_factory, registry_copy) -> Path:
    """``zoo site build`` on registry.yaml in a fresh process: under a minute, and torch is never imported."""
    out = tmp_path_factory.mktemp("real") / "site"
    code = ("import sys; from zoo.cli import main; "
            "rc = main(['site', 'build', sys.argv[1], '--registry', sys.argv[2], '--leaderboards', sys.argv[3]]); "
            "assert 'torch' not in sys.modules, 'the site build imported torch'; sys.exit(rc)")
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code, str(out), str(registry_copy), str(ROOT / "leaderboards")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert time.perf_counter() - t0 < 60
    assert "wrote" in proc.stdout and "index.html" in proc.stdout
    return out


def test_the_project_registry_builds_a_page_per_paper_with_its_verdict(real_site, registry_data):
    papers = registry_data["papers"]
    for p in papers:
        html = (real_site / "papers" / f"{slug(p['id'])}.html").read_text(encoding="utf-8")
        status = re.search(r'id="paper-status"><span class="[^"]*" data-status="([^"]*)"', html)
        assert status and status[1] == p["status"], p["id"]
        verdict = (p.get("reproduction") or {}).get("verdict")
        found = re.search(r'id="verdict">Verdict: <span class="[^"]*" data-verdict="([^"]*)"', html)
        assert (found[1] if found else None) == verdict, p["id"]
        if p["status"] == "theory":
            assert 'id="reason"' in html, p["id"]


# --- in a real browser ------------------------------------------------------------------------------------------


def _browser_or_skip():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed (pip install 'zoo-core[test]')")
    binary = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
    driver = shutil.which("chromedriver")
    if binary is None or driver is None:
        pytest.skip("headless Chromium is absent (as root: apt-get install chromium chromium-driver; ./dev does it)")
    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(arg)
    options.binary_location = binary
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=options, service=Service(driver))  # both paths given: no Selenium Manager download


@pytest.fixture(scope="module")
def browser():
    driver = _browser_or_skip()
    driver.set_script_timeout(90)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("ZOO_SITE_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nsite screenshots: {folder}")
    return folder


def _errors(driver) -> list[dict]:
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def _open(driver, page: Path) -> None:
    driver.get(page.resolve().as_uri())
    assert _errors(driver) == [], page


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # no request lines in the test output
        pass


# Loads every page of the site in hidden iframes, a dozen at a time (one WebDriver navigation per page would take
# 20 s), and returns per page its title, the absolute URLs of its links and resources, and its status and verdict.
_CRAWL = """
const pages = arguments[0], done = arguments[arguments.length - 1];
const out = {};
let next = 0, running = 0;
function read(doc) {
  const text = sel => { const e = doc.querySelector(sel); return e ? e.textContent.trim() : null; };
  return {title: doc.title, status: text("#paper-status [data-status]"), verdict: text("#verdict [data-verdict]"),
          links: Array.from(doc.querySelectorAll("a[href], link[href], script[src], img[src]")).map(e => e.href || e.src)};
}
function launch() {
  while (running < 12 && next < pages.length) {
    const page = pages[next++], frame = document.createElement("iframe");
    running += 1;
    frame.style.display = "none";
    frame.onload = () => {
      out[page] = read(frame.contentDocument);
      frame.remove();
      running -= 1;
      if (next >= pages.length && running === 0) done(out); else launch();
    };
    frame.src = page;
    document.body.appendChild(frame);
  }
}
launch();
"""


@pytest.fixture(scope="module")
def crawl(real_site, browser):
    """Every page of the project's site served by ``python -m http.server``'s handler, read in the browser.

    A canary page with a script error goes in with them, to show that an error in any page reaches the log.
    """
    (real_site / "_canary.html").write_text("<!doctype html><title>canary</title><script>undefinedCanary()</script>",
                                            encoding="utf-8")
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(real_site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_port}/"
        pages = sorted(p.relative_to(real_site).as_posix() for p in _pages(real_site))
        browser.get(base + "index.html")
        result = browser.execute_async_script(_CRAWL, pages)
        errors = _errors(browser)
    finally:
        server.shutdown()
        (real_site / "_canary.html").unlink()
    return base, pages, result, errors


def test_every_page_loads_without_console_errors(crawl):
    base, pages, result, errors = crawl
    assert set(result) == set(pages) and len(pages) > 200
    canary = [e for e in errors if "undefinedCanary" in e["message"]]
    assert canary and canary[0]["message"].startswith(base + "_canary.html"), errors  # the log sees the frames' errors
    assert [e for e in errors if e not in canary] == []


def test_every_internal_link_resolves_to_a_built_file(crawl, real_site):
    base, pages, result, _ = crawl
    checked = 0
    for page, info in result.items():
        for url in info["links"]:
            if url.startswith("data:"):
                continue
            assert url.startswith(base), f"{page} links outside the site: {url}"
            target = real_site / unquote(urlsplit(url).path).lstrip("/")
            assert target.is_file(), f"{page}: {url}"
            checked += 1
    assert checked > 5 * len(pages)


def test_every_plugin_verdict_in_the_browser_equals_the_registry(crawl, registry_data):
    _, _, result, _ = crawl
    plugins = [p for p in registry_data["papers"] if "path" in p]
    assert len(plugins) >= 30
    for p in plugins:
        info = result[f"papers/{slug(p['id'])}.html"]
        assert info["status"] == p["status"], p["id"]
        assert info["verdict"] == (p.get("reproduction") or {}).get("verdict"), p["id"]


def test_clicking_a_leaderboard_header_sorts_its_rows(browser, tiny_site, screenshots):
    from selenium.webdriver.common.by import By

    _open(browser, tiny_site / "tasks" / "toy_task.html")

    def models() -> list[str]:
        rows = browser.find_elements(By.CSS_SELECTOR, "#leaderboard tbody tr")
        return [r.find_element(By.CSS_SELECTOR, "td").text for r in rows]

    def click(header: str) -> None:
        browser.find_element(By.XPATH, f"//table[@id='leaderboard']//th[normalize-space()='{header}']").click()

    assert models() == ["evil_net", "baseline-mlp", "alpha_net"]
    click("psnr")
    assert models() == ["alpha_net", "evil_net", "baseline-mlp"]  # 9.5 < 10.25 < 100: numbers, not text
    click("psnr")
    assert models() == ["baseline-mlp", "evil_net", "alpha_net"]
    click("seconds")
    assert models() == ["baseline-mlp", "alpha_net", "evil_net"]
    click("model")
    assert models() == ["alpha_net", "baseline-mlp", "evil_net"]
    browser.save_screenshot(str(screenshots / "leaderboard-toy_task.png"))
    assert _errors(browser) == []


def test_the_home_filter_and_search_narrow_the_list(browser, real_site, registry_data, screenshots):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    papers = registry_data["papers"]
    _open(browser, real_site / "index.html")
    browser.save_screenshot(str(screenshots / "home.png"))

    def shown() -> list[str]:
        # laid out rows (one script call, not a WebDriver round trip per row)
        visible = browser.execute_script('return Array.from(document.querySelectorAll("#paper-list tbody tr"))'
                                         '.filter(r => r.getClientRects().length > 0).map(r => r.cells[0].textContent.trim())')
        assert browser.find_element(By.ID, "shown-count").text == str(len(visible))
        return visible

    assert len(shown()) == len(papers)
    Select(browser.find_element(By.ID, "f-status")).select_by_value("theory")
    assert shown() == [str(p["catalog"]) for p in papers if p["status"] == "theory"]
    Select(browser.find_element(By.ID, "f-status")).select_by_value("")
    Select(browser.find_element(By.ID, "f-family")).select_by_value("INR")
    Select(browser.find_element(By.ID, "f-task")).select_by_value("image_fit")
    expected = [str(p["catalog"]) for p in papers if p["family"] == "INR" and "image_fit" in p.get("tasks", [])]
    assert 0 < len(expected) < len(papers) and shown() == expected
    Select(browser.find_element(By.ID, "f-family")).select_by_value("")
    Select(browser.find_element(By.ID, "f-task")).select_by_value("")
    browser.find_element(By.ID, "f-search").send_keys("KAN")
    expected = [str(p["catalog"]) for p in papers
                if "kan" in " ".join([p["id"], p["title"], p.get("summary") or "", p.get("plugin", p["id"])]).lower()]
    assert 0 < len(expected) < len(papers) and shown() == expected
    assert _errors(browser) == []


def test_screenshots_of_a_paper_and_a_task_page(browser, real_site, registry_data, screenshots):
    paper = next(p for p in registry_data["papers"] if (p.get("reproduction") or {}).get("verdict"))
    _open(browser, real_site / "papers" / f"{slug(paper['id'])}.html")
    browser.save_screenshot(str(screenshots / f"paper-{slug(paper['id'])}.png"))
    task = next(iter(sorted(paper["tasks"])))
    _open(browser, real_site / "tasks" / f"{slug(task)}.html")
    browser.execute_script('document.getElementById("leaderboard").scrollIntoView()')
    browser.save_screenshot(str(screenshots / f"task-{slug(task)}.png"))
    shots = sorted(f.name for f in screenshots.glob("*.png"))
    assert all((screenshots / f).stat().st_size > 10_000 for f in shots), shots


def test_builder_arguments_are_read_from_the_source_without_importing_it(tmp_path, monkeypatch):
    from zoo.site.source import builder_arguments

    pkg = tmp_path / "zoo_site_probe"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("raise RuntimeError('imported')\n", encoding="utf-8")
    (pkg / "model.py").write_text(
        "import not_a_module_anywhere\nALPHA = 0.5\n\n"
        "def net(width: int, depth: int = 4, *, alpha: float = ALPHA, act=not_a_module_anywhere.gelu):\n    pass\n\n"
        "class Net:\n    def __init__(self, width=8):\n        pass\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    args = builder_arguments("zoo_site_probe.model:net")
    assert [(a["name"], a["default"], a["required"]) for a in args] == [
        ("width", None, True), ("depth", 4, False), ("alpha", 0.5, False), ("act", "not_a_module_anywhere.gelu", False)]
    assert args[0]["annotation"] == "int"
    assert [a["name"] for a in builder_arguments("zoo_site_probe.model:Net")] == ["width"]
    assert builder_arguments("zoo_site_probe.model:missing") is None
    assert builder_arguments("zoo_site_probe.absent:net") is None
    assert "zoo_site_probe" not in sys.modules


def test_the_command_refuses_a_folder_it_did_not_build(tmp_path, capsys):
    from zoo.cli import main

    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("x", encoding="utf-8")
    assert main(["site", "build", str(tmp_path / "out"), "--registry", str(_write_tiny(tmp_path / "src"))]) == 2
    assert "not a zoo site" in capsys.readouterr().err
