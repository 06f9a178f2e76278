"""Take the README's screenshot of a report: open it in headless Chromium, save a PNG.

Usage: .venv/bin/python scripts/report_screenshot.py [REPORT.html] [OUT.png]
(defaults: suitebench-demo/report.html, the demo's report, and docs/img/report.png).
Refuses to write the picture if the page logged a console error.
"""

from __future__ import annotations

import sys
from pathlib import Path

from suitebench.report.browser import Chromium


def main(argv: list[str]) -> int:
    report = Path(argv[1] if len(argv) > 1 else "suitebench-demo/report.html").resolve()
    out = Path(argv[2] if len(argv) > 2 else "docs/img/report.png")
    if not report.is_file():
        print(f"no report at {report}: run `suitebench demo` first", file=sys.stderr)
        return 2
    out.parent.mkdir(parents=True, exist_ok=True)
    with Chromium(width=1280, height=1500) as page:
        page.open(report.as_uri())
        errors = page.errors()
        if errors:
            for e in errors:
                print(f"console {e.level}: {e.text}", file=sys.stderr)
            return 1
        page.screenshot(out)
    print(f"screenshot of {report} written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
