"""What the job scripts and benchmarks share: the timing loop of those run by
``scripts/compare-commits`` and ``scripts/measure-allocators`` (each job warmed once, then timed
``repeats`` times), the interleaved CPU-time rounds of the server benchmarks, and the history of
the architecture review's trim profile."""

import statistics
import time
from typing import Callable, Dict, Iterable, List

from agentmsg import Message, ToolUseBlock


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


def cpu_rounds(jobs: Dict[str, Callable[[], object]], rounds: int) -> Dict[str, List[float]]:
    """CPU seconds of this thread per job (``time.thread_time``: on a shared machine a long run
    is often descheduled, and wall time would count the wait), the jobs interleaved round by
    round so that the load moves them alike; each job warmed once first."""
    times: Dict[str, List[float]] = {name: [] for name in jobs}
    for job in jobs.values():
        job()  # warm: first-use imports and caches
    for _ in range(rounds):
        for name, job in jobs.items():
            start = time.thread_time()
            job()
            times[name].append(time.thread_time() - start)
    return times


def appendix_b_history(pairs: int = 50_000) -> List[Message]:
    """One system message and ``pairs`` user/assistant pairs, every fifth a tool call with its
    result (110,001 messages at 50,000 pairs)."""
    messages = [Message.system("Be brief")]
    for i in range(pairs):
        messages.append(Message.user(f"question {i} " * 20))
        if i % 5 == 0:
            messages += [Message.assistant(tool_calls=[ToolUseBlock(f"c{i}", "calc", {"a": i})]),
                         Message.tool(f"result {i}", tool_id=f"c{i}")]
        else:
            messages.append(Message.assistant(f"answer {i} " * 10))
    return messages
