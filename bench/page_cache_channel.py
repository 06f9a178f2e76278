"""How many bits the page cache still carries from one sandboxed run to the next, by timing alone.

The seccomp filter (``run/syscalls.py``) refuses the page cache's cheap probes (``mincore``,
``cachestat``, ``preadv2(RWF_NOWAIT)``) and its cheap evictions (``fadvise``, ``madvise(PAGEOUT)``).
What is left to a hostile test is to *time* its reads: a page of a large system file that an
earlier run read comes from memory, one nobody read comes from disk. This bench plays both ends
of that channel through the real sandbox, side by side with the channel the filter closed:

* a *sender* run (as a reference's run would be) reads the pages of a large file visible in the
  sandbox that stand for the 1-bits of a random message (single pages of an ``mmap`` with
  ``MADV_RANDOM``, so no read-ahead spills over);
* a *receiver* run in a new sandbox (as a mutant's run would be) touches every page of the
  message and calls a page cached when it came back in under 20 microseconds (a disk read takes
  longer, a cached page a few microseconds); it also asks ``preadv2(RWF_NOWAIT)`` first, the
  probe the filter refuses;
* both first as before the page cache drop (the pages a run read stay cached), then as now.

Prints, per round, the bits sent and the errors of each way of reading, then the capacity per
round (``n * (1 - H(p))`` for a bit error rate ``p``). The sender's pages are new in each round
(a random part of the file), so earlier rounds do not leak into later ones.

Usage: ``python bench/page_cache_channel.py [--rounds 8] [--bits 64] [--file PATH]``.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import tempfile
from pathlib import Path

from suitebench.run import cgroups, sandbox
from suitebench.run.outcome import Status

PROBE = r"""
import mmap, os, random, sys, time
path, seed, nbits, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
size = os.path.getsize(path)
page = mmap.PAGESIZE
rng = random.Random(seed)
pages = rng.sample(range(size // page), nbits)
fd = os.open(path, os.O_RDONLY)
m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
m.madvise(mmap.MADV_RANDOM)
if mode == "send":
    msg = sys.stdin.read().strip()
    for bit, p in zip(msg, pages):
        if bit == "1":
            m[p * page]
    print("sent")
else:
    buf = bytearray(1)
    nowait = []
    for p in pages:  # the refused probe first: it caches nothing itself
        try:
            os.preadv(fd, [buf], p * page, os.RWF_NOWAIT)
            nowait.append("1")
        except BlockingIOError:  # EAGAIN: not cached
            nowait.append("0")
        except OSError:  # refused (EOPNOTSUPP): the probe tells nothing
            nowait.append("?")
    times = []
    for p in pages:
        t0 = time.perf_counter_ns()
        m[p * page]
        times.append(time.perf_counter_ns() - t0)
    # the split between fast and slow touches: the largest gap in the sorted log-times
    # a touch that found the page cached takes a few microseconds; one that read the disk tens
    # of microseconds or more (measured here: 4-11 us against 30 us to 13 ms)
    cut = 20_000
    print("".join(nowait))
    print("".join("1" if t <= cut else "0" for t in times))
    print(" ".join(str(t) for t in times))
"""


def _entropy(p: float) -> float:
    return 0.0 if p in (0.0, 1.0) else -(p * math.log2(p) + (1 - p) * math.log2(1 - p))


def _largest_file() -> Path:
    best: tuple[int, str] = (0, "")
    for root in ("/usr/lib", "/usr/share"):
        for dirpath, _, files in os.walk(root):
            for f in files:
                p = os.path.join(dirpath, f)
                try:
                    if not os.path.islink(p):
                        best = max(best, (os.path.getsize(p), p))
                except OSError:
                    continue
    return Path(best[1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--bits", type=int, default=64)
    ap.add_argument("--file", type=Path, default=None, help="default: the largest under /usr")
    args = ap.parse_args()
    target = args.file or _largest_file()
    py = os.path.realpath(sys.executable)
    rng = random.Random()
    ways = ("RWF_NOWAIT (refused)", "timing, pages kept", "timing, pages dropped")
    totals = dict.fromkeys(ways, 0)
    drop = cgroups.RunCgroup.drop_page_cache
    with tempfile.TemporaryDirectory(prefix="page-cache-") as tmp:
        work = Path(tmp)
        work.chmod(0o777)
        print(f"file {target} ({target.stat().st_size >> 20} MiB), {args.bits} bits a round")
        print(f"{'round':>5} {'ones':>5} " + " ".join(f"{w:>22}" for w in ways))
        for r in range(args.rounds):
            errors = []
            # first as before the defence (the pages a run read stay cached), then as now
            for keep in (True, False):
                cgroups.RunCgroup.drop_page_cache = (lambda self: None) if keep else drop  # type: ignore[method-assign]
                seed = rng.randrange(1 << 62)
                msg = "".join(rng.choice("01") for _ in range(args.bits))
                argv = [py, "-c", PROBE, str(target), str(seed), str(args.bits)]
                sent = sandbox.run([*argv, "send"], cwd=work, stdin=msg.encode())
                got = sandbox.run([*argv, "receive"], cwd=work)
                cgroups.RunCgroup.drop_page_cache = drop  # type: ignore[method-assign]
                if sent.status is not Status.OK or got.status is not Status.OK:
                    print(f"round {r}: {sent.status} / {got.status}: {got.stderr[-300:]!r}")
                    return 1
                nowait, timing = got.stdout.decode().splitlines()[:2]
                if keep:
                    errors.append(sum(a != b for a, b in zip(msg, nowait, strict=True)))
                errors.append(sum(a != b for a, b in zip(msg, timing, strict=True)))
            for w, e in zip(ways, errors, strict=True):
                totals[w] += e
            print(f"{r:>5} {msg.count('1'):>5} " + " ".join(f"{e:>22}" for e in errors))
    n = args.bits * args.rounds
    print()
    print(f"{'way of reading':<22} {'bit errors':>11} {'error rate':>11} {'bits/round':>11}")
    for name, errs in totals.items():
        p = errs / n
        cap = args.bits * (1 - _entropy(min(p, 0.5)))
        print(f"{name:<22} {errs:>11} {p:>11.3f} {cap:>11.1f}")
    return 0


if __name__ == "__main__":
    from figures import run_recorded

    sys.exit(run_recorded("page_cache_channel", main))
