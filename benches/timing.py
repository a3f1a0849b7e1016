"""The timing loop of the job scripts run by ``scripts/compare-commits`` and
``scripts/measure-allocators``: each job warmed once, then timed ``repeats`` times."""

import statistics
import time
from typing import Callable, Dict, Iterable


def medians(jobs: Dict[str, Callable[[], object]], repeats: int, only: Iterable[str] = ()) -> Dict[str, float]:
    """Job name -> the median of its times in seconds; ``only`` names a subset to run."""
    chosen = set(only)
    figures = {}
    for name, job in jobs.items():
        if chosen and name not in chosen:
            continue
        job()  # warm: first-use imports, tables loaded, pool started
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            job()
            times.append(time.perf_counter() - start)
        figures[name] = statistics.median(times)
    return figures
