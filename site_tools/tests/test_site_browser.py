"""Opens every page of the built site in headless Chromium (Debian packages chromium and chromium-driver, driven
by selenium) and checks what a student sees: no console errors, highlighted code, rendered math and diagrams, a
working search, the light/dark toggle, and no request leaving 127.0.0.1; a glossary term in a chapter shows its
definition as Material's tooltip on hover. Saves screenshots of two chapters and a glossary page in the light and the
dark scheme, and of the tooltip.

The same site opened from disk (file://SITE_DIR/index.html, as a student opens site/index.html without a server):
a click on a chapter in the navigation opens that chapter, and typing a glossary term into the search box lists the
term's page (mkdocs.yml: use_directory_urls: false and Material's offline plugin), with no request to any server.

usage: test_site_browser.py SITE_DIR SCREENSHOT_DIR
Exit 77 (ctest: skipped) only when Chromium or its driver is not installed, and it says so loudly."""

import functools
import http.server
import json
import os
import sys
import threading
import time
import urllib.parse

CHROMIUM = [os.environ.get("COURSE_CHROMIUM", ""), "/usr/bin/chromium", "/usr/bin/chromium-browser"]
DRIVER = [os.environ.get("COURSE_CHROMEDRIVER", ""), "/usr/bin/chromedriver"]
# Two chapters that show every kind of content: prose, an admonition, a diagram, code regions, math (06); a term page
# of the glossary in the seed's form (definition, Measured from the GPU evidence, sources, byline).
SCREENSHOT_PAGES = ["04_cuda.html", "06_autograd.html", "glossary/custom-operator.html"]
TOOLTIP_PAGE = "05_fake.html"  # a chapter whose prose uses glossary terms (fake tensor, Meta kernel, graph break)
SCREENSHOT_SIZE = (1440, 2000)  # tall enough to reach past the first diagram
# From disk: the navigation link followed, what the chapter's title says, and the glossary term searched for
FILE_NAV_TARGET, FILE_NAV_TITLE = "01_custom_op.html", "What a custom operator is"
FILE_SEARCH_TERM, FILE_SEARCH_PAGE = "negative control", "glossary/negative-control.html"


def first_existing(paths):
    return next((p for p in paths if p and os.path.isfile(p)), None)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(site_dir):
    handler = functools.partial(QuietHandler, directory=site_dir)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def make_driver(chromium, chromedriver):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1600,1000",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-extensions",
        "--no-first-run",
        "--disable-features=Translate,OptimizationHints,MediaRouter",
        "--hide-scrollbars",
    ):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=chromedriver), options=opts)


def pages(site_dir):
    """Every page of the site, as its path relative to SITE_DIR (index.html, 01_custom_op.html, glossary/opcheck.html)."""
    out = []
    for dirpath, _, names in os.walk(site_dir):
        rel = os.path.relpath(dirpath, site_dir)
        if rel.split(os.sep)[0] in ("assets", "search"):
            continue
        for name in names:
            if name.endswith(".html") and not (rel == "." and name == "404.html"):
                out.append(os.path.normpath(os.path.join(rel, name)).replace(os.sep, "/"))
    return sorted(out)


def wait_for(driver, script, timeout=15, what="condition"):
    end = time.time() + timeout
    while time.time() < end:
        if driver.execute_script(script):
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def requests_seen(driver):
    """URLs the page asked for, from Chrome's performance (DevTools network) log."""
    urls = []
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent":
            urls.append(msg["params"]["request"]["url"])
        elif msg.get("method") == "Network.webSocketCreated":
            urls.append(msg["params"]["url"])
    return urls


def check_page(driver, base, page, problems):
    url = base + page
    driver.get(url)
    wait_for(driver, "return document.readyState === 'complete'", what=f"{url} to load")
    time.sleep(0.3)  # scripts subscribed to Material's document$ run just after load
    name = page

    for entry in driver.get_log("browser"):
        if entry.get("level") == "SEVERE":
            problems.append(f"{name}: console error: {entry.get('message')}")

    stats = driver.execute_script("""
      const q = s => document.querySelectorAll(s);
      return {
        code: q('.md-content pre > code').length,
        highlighted: q('.md-content .highlight pre > code span[class]').length,
        copy: q('.md-content .md-clipboard, .md-content .md-code__button[data-md-type=copy], .md-content .md-code__button').length,
        math: q('.md-content .arithmatex').length,
        katex: q('.md-content .arithmatex .katex').length,
        katex_errors: q('.md-content .katex-error').length,
        raw_tex: Array.from(q('.md-content .arithmatex')).filter(e => !e.querySelector('.katex')).map(e => e.textContent.slice(0, 60)),
        diagrams: q('.md-content .diagram').length,
        diagram_nodes: q('.md-content .diagram svg g.node').length,
        empty_diagrams: Array.from(q('.md-content .diagram')).filter(e => !e.querySelector('svg g.node')).length,
        snippet_errors: (document.body.innerText.match(/--8<--/g) || []).length,
        toggle: q('form[data-md-component=palette] input').length,
        font_ok: document.fonts.check('16px KaTeX_Main') || !document.querySelector('.katex'),
      };""")
    if stats["code"] and not stats["highlighted"]:
        problems.append(f"{name}: {stats['code']} code block(s) but no highlighted tokens")
    if stats["code"] and not stats["copy"]:
        problems.append(f"{name}: code blocks have no copy button")
    if stats["math"] != stats["katex"] or stats["katex_errors"]:
        problems.append(
            f"{name}: math not rendered: {stats['math']} formula(s), {stats['katex']} rendered, "
            f"{stats['katex_errors']} KaTeX error(s); raw: {stats['raw_tex']}"
        )
    if stats["empty_diagrams"]:
        problems.append(f"{name}: {stats['empty_diagrams']} diagram(s) without rendered nodes")
    if stats["snippet_errors"]:
        problems.append(f"{name}: a snippet marker '--8<--' reached the page text (an include that did not resolve)")
    if stats["toggle"] < 2:
        problems.append(f"{name}: the light/dark toggle is missing")
    return stats


def check_search(driver, base, problems):
    driver.get(base)
    wait_for(driver, "return document.readyState === 'complete'", what="the home page")
    from selenium.webdriver.common.by import By

    box = driver.find_element(By.CSS_SELECTOR, "input.md-search__input")
    if not box.is_displayed():  # narrow layouts hide the box behind the magnifier button
        driver.find_element(By.CSS_SELECTOR, "label.md-header__button[for='__search']").click()
    box.click()
    wait_for(
        driver,
        "return document.activeElement && document.activeElement.classList.contains('md-search__input')",
        what="the search box to take focus",
    )
    box.send_keys("TORCH_LIBRARY")
    try:
        wait_for(
            driver,
            "return document.querySelectorAll('.md-search-result__item').length > 0",
            timeout=20,
            what="search results",
        )
    except AssertionError:
        meta = driver.execute_script("return (document.querySelector('.md-search-result__meta')||{}).textContent")
        problems.append(f"search: typing TORCH_LIBRARY gave no results (the result line says {meta!r})")
        return 0
    n = driver.execute_script("return document.querySelectorAll('.md-search-result__item').length")
    links = driver.execute_script(
        "return Array.from(document.querySelectorAll('.md-search-result__item a')).map(a => a.href)"
    )
    if not any("01_custom_op" in h or "02_schema" in h for h in links):
        problems.append(f"search: no result links to a chapter: {links[:5]}")
    return n


def check_tooltip(driver, base, shots, problems):
    """Hovers the first glossary abbreviation of TOOLTIP_PAGE: Material's tooltip (content.tooltips) must show the
    term's definition in the page, not only the browser's native title. Returns the screenshot's path."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    driver.get(base + TOOLTIP_PAGE)
    wait_for(driver, "return document.readyState === 'complete'", what=TOOLTIP_PAGE)
    terms = [a for a in driver.find_elements(By.CSS_SELECTOR, ".md-content abbr") if a.is_displayed()]
    if not terms:
        problems.append(f"{TOOLTIP_PAGE}: no glossary abbreviation in the page (snippets auto_append + abbr)")
        return None
    term = terms[0]
    definition = driver.execute_script(
        "return arguments[0].getAttribute('title') || arguments[0].dataset.mdTitle || ''", term
    )
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", term)
    time.sleep(0.3)
    ActionChains(driver).move_to_element(term).perform()
    shown = ""
    for _ in range(20):  # Material shows it after a short delay
        time.sleep(0.15)
        shown = driver.execute_script(
            "const t = document.querySelector('.md-tooltip--active, .md-tooltip2--active');"
            "return t && t.offsetParent !== null ? t.innerText : ''"
        )
        if shown:
            break
    if not shown:
        problems.append(
            f"{TOOLTIP_PAGE}: hovering '{term.text}' showed no tooltip in the page "
            "(Material's content.tooltips feature)"
        )
    elif definition and definition.split(" (glossary")[0] not in shown:
        problems.append(
            f"{TOOLTIP_PAGE}: the tooltip of '{term.text}' says {shown!r}, not its definition {definition!r}"
        )
    path = os.path.join(shots, "05_fake-tooltip.png")
    driver.save_screenshot(path)
    print(f"tooltip: '{term.text}' -> {shown!r}")
    return path


def check_from_disk(driver, site_dir, shots, problems):
    """The site opened from disk, as a student opens site/index.html: follow the navigation to a chapter, then search
    for a glossary term; no http(s) request at all. Returns the screenshot of the search's results."""
    import pathlib

    from selenium.webdriver.common.by import By

    driver.get_log("performance")  # what the HTTP pages asked for is checked above: start afresh
    driver.get_log("browser")
    home = pathlib.Path(site_dir, "index.html").as_uri()
    driver.get(home)
    wait_for(driver, "return document.readyState === 'complete'", what=f"{home} to load")
    links = [
        a
        for a in driver.find_elements(By.CSS_SELECTOR, f".md-nav a.md-nav__link[href$='{FILE_NAV_TARGET}']")
        if a.is_displayed()
    ]
    if not links:
        problems.append(f"file://: the home page's navigation shows no link to {FILE_NAV_TARGET}")
        return None
    href = links[0].get_attribute("href")
    links[0].click()
    try:
        wait_for(
            driver,
            f"return location.href.endsWith('{FILE_NAV_TARGET}') && document.readyState === 'complete'",
            what=f"the navigation link {href} to open",
        )
        title = driver.execute_script("return (document.querySelector('.md-content h1') || {}).textContent || ''")
        if FILE_NAV_TITLE not in title:
            problems.append(
                f"file://: following the navigation to {href} shows {title!r}, not the chapter "
                f"({FILE_NAV_TITLE!r}): a link that names a folder opens a file listing from disk"
            )
    except AssertionError:
        problems.append(
            f"file://: clicking the navigation link {href} did not open it (the page is still {driver.current_url})"
        )
        return None

    box = driver.find_element(By.CSS_SELECTOR, "input.md-search__input")
    if not box.is_displayed():
        button = driver.find_element(By.CSS_SELECTOR, "label.md-header__button[for='__search']")
        if not button.is_displayed():  # Material hides search when its worker cannot start
            problems.append(
                "file://: the page opened from disk shows no search box (Material hides it when its "
                "search worker cannot start)"
            )
            return None
        button.click()
    box.click()
    box.send_keys(FILE_SEARCH_TERM)
    try:
        wait_for(
            driver,
            "return Array.from(document.querySelectorAll('.md-search-result__item a'))"
            f".some(a => a.href.includes('{FILE_SEARCH_PAGE}'))",
            timeout=20,
            what=f"a search result linking {FILE_SEARCH_PAGE}",
        )
    except AssertionError:
        meta = driver.execute_script("return (document.querySelector('.md-search-result__meta')||{}).textContent")
        links = driver.execute_script(
            "return Array.from(document.querySelectorAll('.md-search-result__item a')).map(a => a.href)"
        )
        problems.append(
            f"file://: searching {FILE_SEARCH_TERM!r} does not list {FILE_SEARCH_PAGE} (the result line "
            f"says {meta!r}; results: {links[:5]}): search does not work opened from disk"
        )
    path = os.path.join(shots, "file-search.png")
    driver.save_screenshot(path)
    for entry in driver.get_log("browser"):
        if entry.get("level") == "SEVERE":
            problems.append(f"file://: console error: {entry.get('message')}")
    remote = [u for u in requests_seen(driver) if u.startswith(("http:", "https:", "ws:", "wss:"))]
    if remote:
        problems.append(f"file://: the site opened from disk asked a server for {sorted(set(remote))[:10]}")
    print(
        f"file://: {home} -> {href} ({FILE_NAV_TITLE!r}); search {FILE_SEARCH_TERM!r} lists {FILE_SEARCH_PAGE}"
        if not any(p.startswith("file://") for p in problems)
        else "file://: see the problems below"
    )
    return path


def set_scheme(driver, scheme):
    """Clicks Material's toggle until the page shows `scheme` (default = light, slate = dark)."""
    from selenium.webdriver.common.by import By

    for _ in range(3):
        current = driver.execute_script("return document.body.getAttribute('data-md-color-scheme')")
        if current == scheme:
            return
        labels = [
            l
            for l in driver.find_elements(By.CSS_SELECTOR, "form[data-md-component=palette] label")
            if l.is_displayed()
        ]
        if not labels:
            raise AssertionError("no visible light/dark toggle")
        labels[0].click()
        time.sleep(0.4)
    raise AssertionError(f"the toggle did not switch the page to the {scheme} scheme")


def main():
    site_dir, shots = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    chromium, chromedriver = first_existing(CHROMIUM), first_existing(DRIVER)
    if not chromium or not chromedriver:
        print("#" * 78)
        print(
            "SKIPPED: the site's browser test needs Chromium and its driver, and "
            f"{'chromium' if not chromium else 'chromedriver'} is not installed."
        )
        print("Install them with: apt-get install chromium chromium-driver (tools/setup.sh does, as root).")
        print("#" * 78)
        return 77
    if not os.path.isfile(os.path.join(site_dir, "index.html")):
        print(f"FAIL: no built site in {site_dir} (the site/build test makes it)")
        return 1
    server = serve(site_dir)
    host, port = server.server_address
    base = f"http://{host}:{port}/"
    problems = []
    driver = make_driver(chromium, chromedriver)
    try:
        all_pages = pages(site_dir)
        totals = {"code": 0, "math": 0, "diagrams": 0}
        for page in all_pages:
            stats = check_page(driver, base, page, problems)
            for k in totals:
                totals[k] += stats[k]
        for k in ("code", "math", "diagrams"):
            if not totals[k]:
                problems.append(f"no page has any {k}: the check of it proves nothing")
        results = check_search(driver, base, problems)
        missing = [p for p in SCREENSHOT_PAGES + [TOOLTIP_PAGE] if p not in all_pages]
        if missing:  # e.g. NAME/index.html: a site built with directory URLs, which file:// links do not open
            problems.append(
                f"the site has no {', '.join(missing)} (pages are NAME.html: mkdocs.yml's use_directory_urls: false)"
            )

        os.makedirs(shots, exist_ok=True)
        saved = []
        driver.set_window_size(*SCREENSHOT_SIZE)
        for page in [p for p in SCREENSHOT_PAGES if p not in missing]:
            driver.get(base + page)
            wait_for(driver, "return document.readyState === 'complete'", what=page)
            for scheme, label in (("default", "light"), ("slate", "dark")):
                set_scheme(driver, scheme)
                time.sleep(0.5)
                path = os.path.join(shots, f"{page[: -len('.html')].replace('/', '-')}-{label}.png")
                driver.save_screenshot(path)
                saved.append(path)
        set_scheme(driver, "default")
        driver.set_window_size(1440, 900)
        tooltip_shot = check_tooltip(driver, base, shots, problems) if TOOLTIP_PAGE not in missing else None
        if tooltip_shot:
            saved.append(tooltip_shot)

        seen = requests_seen(driver)
        outside = [
            u
            for u in seen
            if not (urllib.parse.urlparse(u).hostname == "127.0.0.1" or u.startswith(("data:", "blob:", "about:")))
        ]
        if outside:
            problems.append(f"requests left 127.0.0.1: {sorted(set(outside))[:10]}")
        local = [u for u in seen if urllib.parse.urlparse(u).hostname == "127.0.0.1"]
        if not any("/assets/katex/fonts/" in u for u in local) or not any("search" in u for u in local):
            problems.append(
                f"the network log missed the KaTeX fonts or the search index ({len(local)} local "
                "requests seen): the check of outside requests proves nothing"
            )
        file_shot = check_from_disk(driver, site_dir, shots, problems)
        if file_shot:
            saved.append(file_shot)
    finally:
        driver.quit()
        server.shutdown()
    for p in problems:
        print("FAIL:", p)
    print(
        f"site/browser: {len(all_pages)} pages, {totals['code']} code blocks, {totals['math']} formulas, "
        f"{totals['diagrams']} diagrams, {results} search results; screenshots: {', '.join(saved)}"
    )
    print(f"network: {len(seen)} requests, all to 127.0.0.1" if not outside else "network: see above")
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
