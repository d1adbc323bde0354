#!/usr/bin/env python3
"""Open every kind of nnergy HTML report in headless Chromium and check that it draws.

    python3 tests/report/html_reports_browser_test.py --nnergy build/.../nnergy --out DIR
        [--repo ROOT] [--kinds predict,compare,account,evaluate,evaluate-db,archline]

For each kind it runs the real command with --html DIR/<kind>.html (from the repository root),
loads the page in Debian's headless Chromium (--dump-dom after a virtual-time budget) and fails,
naming the kind and the reason, when the command fails, the file is over 2 MB, the page's status
(<body data-nnergy-status>, set by common.js when every chart has settled) is not "ok",
#nnergy-errors is not empty, an expected <section id> is missing, or a .chart drew nothing (no
drawing element inside Vega's data-mark groups, or inside an inlined SVG). It also takes a
full-page screenshot, DIR/<kind>.png, 1280 px wide. One line per kind: size, the command's wall
time, first paint and render-complete times from the page's body attributes.

Exit status: 0 all pass, 1 a check failed, 77 (skip) when chromium is not installed.
Hidden option --html-dir DIR: check the existing DIR/<kind>.html instead of running nnergy.
"""

import argparse
import html.parser
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The command of each kind (from the repository root) and the sections its page must have.
KINDS = {
    "predict": (["predict", "resnet50", "--batch", "32", "--sweep-clocks"],
                ["totals", "layers", "roofline", "archline", "clock-sweep", "notes"]),
    "compare": (["compare", "resnet50", "--batch", "32"],
                ["ranking", "pareto", "notes"]),
    "account": (["account", "tests/fixtures/account/resnet18_cpu"],
                ["conservation", "edd", "power", "hotspots", "warnings"]),
    "evaluate": (["evaluate", "--published", "data/measured/h100/networks.json"],
                 ["summary", "time", "power", "energy", "groups"]),
    "evaluate-db": (["evaluate", "--db", "data/measured/h100/ops_h100_sxm.sqlite",
                     "--predictor", "analytical,forest", "--folds", "2"],
                    ["summary", "time", "power", "op-types"]),
    "archline": (["archline", "plot", "data/measured/h100/archline_h100_sxm.csv",
                  "--out", "{out}/archline.svg"],
                 ["charts", "fits"]),
}
MAX_BYTES = 2_000_000
BUDGET_MS = 30_000      # virtual time for the page to settle
TIMEOUT_S = 180         # real time for one Chromium run
WIDTH = 1280
MAX_HEIGHT = 16_000

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}
SHAPES = {"path", "rect", "line", "circle", "ellipse", "polygon", "polyline", "text", "image"}


class Page(html.parser.HTMLParser):
    """What the test needs from a dumped DOM: the body's attributes, the text of
    #nnergy-errors, the section ids (and whether each has an <h2>), and per .chart the number of
    drawing elements in its data marks: inside <g class="... role-mark ..."> for Vega's SVG, or
    anywhere in an inlined SVG (class "static")."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.body = {}
        self.errors = ""
        self.sections = {}        # id -> has an <h2>
        self.charts = []          # [name, marks]
        self.stack = []           # (tag, context) of open elements
        self.context = {"chart": None, "static": False, "mark": False, "section": None,
                        "errors": False, "text": None}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        ctx = dict(self.context)
        if tag == "body":
            self.body = {k: v for k, v in attrs}
        if tag == "section" and a.get("id"):
            self.sections[a["id"]] = False
            ctx["section"] = a["id"]
        if tag == "h2" and ctx["section"]:
            self.sections[ctx["section"]] = True
        if "chart" in classes:
            chart = [a.get("data-chart") or "(unnamed)", 0]
            self.charts.append(chart)
            ctx.update(chart=chart, static="static" in classes, mark=False)
        if tag == "g" and "role-mark" in classes:
            ctx["mark"] = True
        if tag == "pre" and a.get("id") == "nnergy-errors":
            ctx["errors"] = True
        if ctx["chart"] is not None and (ctx["mark"] or ctx["static"]) and tag in SHAPES:
            if tag == "text":
                ctx["text"] = [ctx["chart"], False]  # counted once it has content
            elif tag != "path" or (a.get("d") or "").strip():
                ctx["chart"][1] += 1
        if tag in VOID:
            return
        self.stack.append((tag, self.context))
        self.context = ctx

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        # Pop to the matching element (the serialized DOM is well formed; be lenient anyway).
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                self.context = self.stack[i][1]
                del self.stack[i:]
                return

    def handle_data(self, data):
        if self.context["errors"]:
            self.errors += data
        text = self.context["text"]
        if text is not None and not text[1] and data.strip():
            text[1] = True
            text[0][1] += 1


def chromium_path():
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def run_chromium(chromium, args, profile):
    command = [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               "--no-first-run", "--disable-dev-shm-usage", f"--user-data-dir={profile}",
               f"--virtual-time-budget={BUDGET_MS}"] + args
    return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S)


def check_kind(kind, args, chromium):
    """(problems, summary line) for one kind."""
    command_args, sections = KINDS[kind]
    out = args.out.resolve()
    page_path = out / f"{kind}.html"
    write_s = None
    if args.html_dir:
        page_path = args.html_dir.resolve() / f"{kind}.html"
        if not page_path.is_file():
            return [f"{page_path} does not exist"], None
    else:
        page_path.unlink(missing_ok=True)
        command = [str(args.nnergy)] + [a.format(out=out) for a in command_args] + \
            ["--html", str(page_path)]
        start = time.monotonic()
        try:
            done = subprocess.run(command, cwd=args.repo, capture_output=True, text=True,
                                  timeout=600)
        except (OSError, subprocess.TimeoutExpired) as e:
            return [f"`{' '.join(command)}` did not run: {e}"], None
        write_s = time.monotonic() - start
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
            return [f"`{' '.join(command)}` exited {done.returncode}: {last}"], None
        if not page_path.is_file():
            return [f"`{' '.join(command)}` wrote no {page_path}"], None

    problems = []
    size = page_path.stat().st_size
    if size > MAX_BYTES:
        problems.append(f"{page_path.name} is {size} bytes, over {MAX_BYTES}")

    with tempfile.TemporaryDirectory(prefix="nnergy-chromium-") as profile:
        try:
            dumped = run_chromium(chromium, [f"--window-size={WIDTH},1000", "--dump-dom",
                                             page_path.as_uri()], profile)
        except subprocess.TimeoutExpired:
            return problems + [f"chromium did not finish within {TIMEOUT_S} s"], None
    if dumped.returncode != 0 or not dumped.stdout.strip():
        last = (dumped.stderr.strip().splitlines() or ["(no message)"])[-1]
        return problems + [f"chromium --dump-dom failed ({dumped.returncode}): {last}"], None
    page = Page()
    page.feed(dumped.stdout)
    (out / f"{kind}.dom.html").write_text(dumped.stdout, encoding="utf-8")

    status = page.body.get("data-nnergy-status")
    if status != "ok":
        problems.append(f"status is {status!r}, not 'ok'"
                        + (" (the page's scripts never finished)" if status == "pending" else ""))
    if page.errors.strip():
        problems.append("#nnergy-errors: " + " | ".join(page.errors.strip().splitlines()[:5]))
    for section in sections:
        if section not in page.sections:
            problems.append(f"no <section id=\"{section}\">")
        elif not page.sections[section]:
            problems.append(f"<section id=\"{section}\"> has no <h2>")
    if not page.charts:
        problems.append("the page has no .chart")
    for name, marks in page.charts:
        if marks == 0:
            problems.append(f"chart {name!r} drew nothing")

    # The screenshot, as tall as the page said it is.
    try:
        height = min(MAX_HEIGHT, max(800, int(page.body.get("data-page-height", "0")) + 40))
    except ValueError:
        height = 2000
    screenshot = out / f"{kind}.png"
    with tempfile.TemporaryDirectory(prefix="nnergy-chromium-") as profile:
        try:
            shot = run_chromium(chromium, [f"--screenshot={screenshot}",
                                           f"--window-size={WIDTH},{height}", page_path.as_uri()],
                                profile)
            if shot.returncode != 0 or not screenshot.is_file():
                problems.append(f"chromium --screenshot failed ({shot.returncode})")
        except subprocess.TimeoutExpired:
            problems.append(f"chromium --screenshot did not finish within {TIMEOUT_S} s")

    def ms(name):
        value = page.body.get(name)
        return f"{float(value):.0f} ms" if value not in (None, "") else "n/a"

    paint_source = page.body.get("data-first-paint-source")
    line = (f"{kind}: {size / 1024:.0f} KiB, "
            f"written in {'%.2f s' % write_s if write_s is not None else 'n/a (--html-dir)'}, "
            f"first paint {ms('data-first-paint-ms')}"
            f"{' (' + paint_source + ')' if paint_source else ''}, "
            f"rendered {ms('data-rendered-ms')}, {len(page.charts)} charts, "
            f"{sum(m for _, m in page.charts)} marks; screenshot {screenshot}")
    warnings = page.body.get("data-warnings", "0")
    if warnings not in ("0", ""):
        line += f"\n  WARN {kind}: {warnings} console warnings: {page.body.get('data-warning-text', '')}"
    return problems, line


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nnergy", type=Path, help="the nnergy executable")
    parser.add_argument("--out", type=Path, required=True,
                        help="folder for the pages, screenshots and dumped DOMs")
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[2],
                        help="the repository root, where the commands run (default: %(default)s)")
    parser.add_argument("--kinds", default=",".join(KINDS),
                        help="comma-separated kinds to check (default: %(default)s)")
    parser.add_argument("--html-dir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()

    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        parser.error(f"--kinds: unknown {', '.join(unknown)}; expected some of {', '.join(KINDS)}")
    if not args.html_dir and not args.nnergy:
        parser.error("--nnergy is required (the executable whose --html pages are checked)")
    if args.nnergy and not args.html_dir and not os.access(args.nnergy, os.X_OK):
        parser.error(f"--nnergy {args.nnergy}: not an executable file")
    if args.nnergy:
        args.nnergy = args.nnergy.resolve()
    chromium = chromium_path()
    if chromium is None:
        print("SKIP: chromium is not installed (Debian: apt-get install --no-install-recommends "
              "chromium); the HTML reports were not checked in a browser")
        return 77
    args.out.mkdir(parents=True, exist_ok=True)

    failed = 0
    for kind in kinds:
        problems, line = check_kind(kind, args, chromium)
        if line:
            print(line, flush=True)
        for problem in problems:
            print(f"FAIL {kind}: {problem}", flush=True)
        failed += bool(problems)
    print(f"{len(kinds) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
