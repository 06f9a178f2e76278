"""Small problems the tests write on the fly: ``next-int`` (print x + 1, or OVERFLOW).

Its submissions carry real bugs of the kind real benchmarks hold: an overflow check that relies
on signed wrap-around (undefined behaviour, so its verdict depends on the compiler flags), a
program that answers right and then exits non-zero, one that prints forever.
"""

from __future__ import annotations

from pathlib import Path

NEXT_INT_TOML = """\
id = "next-int"
time_limit = 1.0
memory_limit = 256
checker = "tokens"
validator = "validator.py"
references = ["refs/ref.py", "refs/ref.c"]
{extra}
[pools]
accepted = "submissions/*"

[tests]
official = "tests/*.in"
"""

VALIDATOR = """\
import sys
data = sys.stdin.read().split()
if len(data) != 1:
    sys.exit(1)
try:
    x = int(data[0])
except ValueError:
    sys.exit(1)
sys.exit(0 if -2**31 <= x <= 2**31 - 1 else 1)
"""

REF_PY = """\
x = int(input())
print("OVERFLOW" if x == 2**31 - 1 else x + 1)
"""

REF_C = """\
#include <stdio.h>
int main(void) { long long x; if (scanf("%lld", &x) != 1) return 1;
  if (x + 1 > 2147483647LL) puts("OVERFLOW"); else printf("%lld\\n", x + 1);
  return 0; }
"""

#: Checks for overflow *after* it happened: signed wrap-around is undefined behaviour, so at
#: -O2 gcc folds ``y < x`` to false and prints -2147483648; at -O0 it wraps and is right.
WRAPCHECK_C = """\
#include <stdio.h>
int main(void) { int x; if (scanf("%d", &x) != 1) return 1;
  int y = x + 1;
  if (y < x) puts("OVERFLOW"); else printf("%d\\n", y);
  return 0; }
"""

#: Right answer, then returns the answer as its exit status (a debugging leftover).
EXITCODE_C = """\
#include <stdio.h>
int main(void) { long long x; if (scanf("%lld", &x) != 1) return 1;
  if (x + 1 > 2147483647LL) { puts("OVERFLOW"); return 0; }
  printf("%lld\\n", x + 1);
  return (int)((x + 1) & 0xff); }
"""

#: Forgets that -1 + 1 is 0 and takes the "positive" path wrongly, then exits non-zero:
#: a wrong answer stays WA whatever the exit status says.
WRONG_EXIT_C = """\
#include <stdio.h>
int main(void) { long long x; if (scanf("%lld", &x) != 1) return 1;
  if (x == -1) { puts("1"); return 3; }
  if (x + 1 > 2147483647LL) puts("OVERFLOW"); else printf("%lld\\n", x + 1);
  return 0; }
"""

#: Prints "YES" forever on the largest input (a loop whose exit condition never holds).
FOREVER_C = """\
#include <stdio.h>
int main(void) { long long x; if (scanf("%lld", &x) != 1) return 1;
  if (x >= 1000000) for (;;) fputs("YES\\n", stdout);
  printf("%lld\\n", x + 1);
  return 0; }
"""


def write_next_int(
    root: Path,
    submissions: dict[str, str],
    *,
    extra: str = "",
    tests: dict[str, str] | None = None,
    arms: dict[str, dict[str, str]] | None = None,
) -> Path:
    """Write the ``next-int`` problem under ``root`` with these submissions (name -> source),
    ``extra`` problem.toml lines, official ``tests`` and arm directories (under ``arms/``)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "problem.toml").write_text(NEXT_INT_TOML.format(extra=extra))
    (root / "validator.py").write_text(VALIDATOR)
    (root / "refs").mkdir(exist_ok=True)
    (root / "refs" / "ref.py").write_text(REF_PY)
    (root / "refs" / "ref.c").write_text(REF_C)
    (root / "submissions").mkdir(exist_ok=True)
    for name, src in submissions.items():
        (root / "submissions" / name).write_text(src)
    (root / "tests").mkdir(exist_ok=True)
    for name, data in (tests or {"01.in": "5\n", "02.in": "-3\n"}).items():
        (root / "tests" / name).write_text(data)
    for arm, files in (arms or {}).items():
        d = root / "arms" / arm
        d.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            (d / name).write_text(data)
    return root
