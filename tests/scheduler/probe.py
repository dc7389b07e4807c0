"""A job for the multi-process tests: appends "<pid> <n> <time>" to a file when it runs, so the test can see
which process ran which one-off job, and when."""

from __future__ import annotations

import os
import time


def record(path: str, n: int) -> None:
    with open(path, "a", encoding="utf-8") as out:
        out.write(f"{os.getpid()} {n} {time.time():.3f}\n")
        out.flush()
