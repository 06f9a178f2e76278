"""Draft plausible WRONG solutions with the model, into workspace/wrongs/.

Usage: python3 scripts/gen_wrongs.py --n K

A weak coder is asked for K subtly different solutions of the statement (off-by-one, overflow,
a missed special case, ...); scripts/eval_hack.py then tells which of them an input kills. The
model is reached through the endpoint in $OPENAI_BASE_URL (chat completions) with the model in
$SUITEBENCH_MODEL.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DISABLED = False  # the harness sets True for the --no-wrongs ablation

PROMPT = (
    "You are a weak competitive programmer. Write a C++17 solution to the problem below that "
    "looks right but contains ONE subtle, realistic bug (off-by-one, overflow, a missed special "
    "case, a wrong tie-break, ...). Variant {i}: make the bug different from the usual one. "
    "Reply with one ```cpp fenced block and nothing else.\n\n{statement}"
)


def ask(prompt: str) -> str:
    base = os.environ.get("OPENAI_BASE_URL", "").rstrip("/")
    body = json.dumps(
        {
            "model": os.environ.get("SUITEBENCH_MODEL", "default"),
            "messages": [{"role": "user", "content": prompt}],
        }
    ).encode()
    req = urllib.request.Request(
        f"{base}/chat/completions",
        data=body,
        headers={
            "Content-Type": "application/json",
            "Authorization": f"Bearer {os.environ.get('OPENAI_API_KEY', 'none')}",
        },
    )
    with urllib.request.urlopen(req, timeout=300) as resp:
        reply = json.loads(resp.read())
    return str(reply["choices"][0]["message"]["content"])


def main() -> int:
    ap = argparse.ArgumentParser(description="draft wrong solutions with the model")
    ap.add_argument("--n", type=int, default=3)
    args = ap.parse_args()
    if DISABLED:
        print("gen_wrongs.py is DISABLED this run (ablation): there are no self-drafted wrongs.")
        return 2
    if not os.environ.get("OPENAI_BASE_URL"):
        print("no model endpoint is configured for this run: gen_wrongs.py cannot draft wrongs.")
        return 2
    statement = (ROOT / "docs" / "statement.txt").read_text(encoding="utf-8")
    out = ROOT / "workspace" / "wrongs"
    out.mkdir(parents=True, exist_ok=True)
    start = len(list(out.glob("wrong_*.cpp")))
    for i in range(args.n):
        try:
            text = ask(PROMPT.format(i=start + i + 1, statement=statement))
        except (OSError, ValueError, KeyError) as exc:
            print(f"draft {i + 1}: the model call failed: {exc}")
            continue
        m = re.search(r"```(?:cpp|c\+\+)?\n(.*?)```", text, re.S)
        code = m.group(1) if m else text
        path = out / f"wrong_{start + i + 1:02d}.cpp"
        path.write_text(code, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
