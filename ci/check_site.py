"""Check the built documentation site: every page renders, no internal link is broken.

    python ci/check_site.py docs/_build/html [--screenshots DIR]

Reads every HTML page of the site (Sphinx's own pages, search and index, left out) and fails,
listing each problem, when a page has no main content or a link, image or script inside the
site points to a file that is not there or to an anchor (``#id``) that the target page does
not have. Links leaving the site (``http:``, ``mailto:``, ...) are not followed: CI runs
offline. With ``--screenshots DIR`` and a Chromium on the PATH (``chromium``, or
``CHROMIUM=/path``), the landing page, a guide, the gallery, an example and an API page are
also drawn headless at 1280 x 2000 into DIR (kept as build artefacts), and every page is
loaded in that Chromium at 1280 px: it fails when a page is empty, wider than the window, has a
code block that is cut off (wider than its box and not scrollable) or sticks out of the text
column, or an image that did not load.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

SKIP = {"genindex.html", "search.html", "py-modindex.html"}
SHOTS = ("index.html", "guide.html", "ctaap.html", "auto_examples/index.html",
         "auto_examples/plot_collective.html", "api/ctaap.html", "benchmarks.html")  # fmt: skip


class _Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.links, self.main = set(), [], False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        if tag == "main" or "bd-article" in (a.get("class") or ""):
            self.main = True
        for key in ("href", "src"):
            if a.get(key) and tag in ("a", "img", "script", "link"):
                self.links.append(a[key])


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def check(site: Path) -> list:
    pages = {p: _parse(p) for p in sorted(site.rglob("*.html"))
             if not any(part.startswith("_") for part in p.relative_to(site).parts[:-1])}
    problems = []
    for path, page in pages.items():
        rel = path.relative_to(site)
        if rel.name in SKIP:
            continue
        if not page.main:
            problems.append(f"{rel}: no main content")
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith("//"):
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                problems.append(f"{rel}: broken link {link}")
                continue
            if parts.fragment and target.suffix == ".html":
                other = pages.get(target) or _parse(target)
                if unquote(parts.fragment) not in other.ids:
                    problems.append(f"{rel}: no anchor #{parts.fragment} in {link}")
    return problems, len(pages)


def screenshots(site: Path, out: Path) -> None:
    chromium = _chromium()
    if not chromium:
        print("check_site: no chromium on the PATH: no browser check, no screenshots")
        return
    out.mkdir(parents=True, exist_ok=True)
    for name in SHOTS:
        if not (site / name).exists():
            continue
        png = out / (name.replace("/", "_").replace(".html", ".png"))
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", "--window-size=1280,2000",
                        f"--screenshot={png}", (site / name).resolve().as_uri()],
                       check=True, capture_output=True, timeout=120)  # fmt: skip
    print(f"check_site: screenshots in {out}")


#: The page that loads every page of the site in turn in an iframe 1280 px wide and lists
#: what it finds wrong (read back with Chromium's --dump-dom); PAGES is replaced by the list.
BROWSER_CHECK = Path(__file__).with_name("check_site.html")


def _chromium():
    return os.environ.get("CHROMIUM") or shutil.which("chromium")


def browser_check(site: Path) -> list:
    """What a headless Chromium finds wrong on the pages of ``site`` at 1280 px."""
    pages = sorted(p.resolve().as_uri() for p in site.rglob("*.html")
                   if not any(part.startswith("_") for part in p.relative_to(site).parts[:-1])
                   and p.name not in SKIP)  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        runner = Path(tmp) / "check.html"
        text = BROWSER_CHECK.read_text(encoding="utf-8").replace("PAGES", json.dumps(pages))
        runner.write_text(text, encoding="utf-8")
        command = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                   "--allow-file-access-from-files", "--virtual-time-budget=600000",
                   "--window-size=1300,1000", "--dump-dom", runner.as_uri()]  # fmt: skip
        run = subprocess.run(command, check=True, capture_output=True, text=True, timeout=600)
    dom = run.stdout
    m = re.search(r'<pre id="out">DONE ([^\n<]*)\n?(.*?)</pre>', dom, re.S)
    if not m:
        return ["browser check: the check page did not finish"]
    print(f"check_site: Chromium at 1280 px: {m.group(1)}")
    root = site.resolve().as_uri() + "/"
    return [line.replace(root, "") for line in m.group(2).splitlines() if line.strip()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("--screenshots", type=Path)
    args = parser.parse_args(argv)
    problems, n = check(args.site)
    if args.screenshots:
        screenshots(args.site, args.screenshots)
        if _chromium():
            problems += browser_check(args.site)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"check_site: {len(problems)} problems in {n} pages", file=sys.stderr)
        return 1
    print(f"check_site: {n} pages, every internal link and anchor found")
    return 0


if __name__ == "__main__":
    sys.exit(main())
