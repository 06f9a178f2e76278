"""Random input generator: reads a seed, prints one N (small, a perfect square, or large)."""
import random
import sys

seed = int(sys.stdin.read().split()[0])
rng = random.Random(seed)
kind = rng.choice(["small", "square", "medium", "large"])
if kind == "small":
    n = rng.randint(1, 60)
elif kind == "square":
    n = rng.randint(1, 10**6) ** 2
elif kind == "medium":
    n = rng.randint(1000, 10**7)
else:
    n = rng.randint(10**11, 10**12)
print(n)
