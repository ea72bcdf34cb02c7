"""Work that no other visitor waits for, run at a lower CPU priority than the answers being served.

After a change of the ranking, one request builds the new page while every other one is served the page
of before (leaderboard/ranking.py, `cached`). The build takes a core for 0.3 to 0.4 s; at the serving
workers' own priority it takes that core from them, and everyone's latency rises for as long. `lowered()`
runs it at niceness `BACKGROUND_NICENESS`, for the calling thread alone (Linux keeps a niceness per
thread), and gives the thread its niceness back after: the build waits for idle CPU, the answers do not.

Giving it back lowers a niceness, which Linux allows only with CAP_SYS_NICE or an RLIMIT_NICE that
permits it (`ulimit -e`; docker-compose.yml sets `nice: 20` for the web service, which runs as a user).
Where the process may not, `lowered()` changes nothing: a worker left at the lower priority would serve
every later answer at it.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

BACKGROUND_NICENESS = 10


@contextmanager
def lowered() -> Iterator[None]:
    """Within it, the calling thread runs at `BACKGROUND_NICENESS` at least, where its niceness can be
    given back after; elsewhere, as before."""
    if not may_give_back():
        yield
        return
    thread = threading.get_native_id()
    before = os.getpriority(os.PRIO_PROCESS, thread)
    if before >= BACKGROUND_NICENESS:  # within another lowered(), or started low
        yield
        return
    os.setpriority(os.PRIO_PROCESS, thread, BACKGROUND_NICENESS)
    try:
        yield
    finally:
        os.setpriority(os.PRIO_PROCESS, thread, before)


@functools.cache
def may_give_back() -> bool:
    """Whether this process may lower a thread's niceness back after raising it: tried once, on a
    thread of its own, which ends with whatever niceness the try left it."""
    if sys.platform != "linux":  # elsewhere a thread's id names no thread to setpriority
        return False
    outcome: list[bool] = []

    def attempt() -> None:
        thread = threading.get_native_id()
        before = os.getpriority(os.PRIO_PROCESS, thread)
        try:
            os.setpriority(os.PRIO_PROCESS, thread, before + 1)
            os.setpriority(os.PRIO_PROCESS, thread, before)
        except OSError:
            outcome.append(False)
        else:
            outcome.append(before < 19)  # at 19 nothing was raised: nothing was tried

    trial = threading.Thread(target=attempt, name="priority-trial")
    trial.start()
    trial.join()
    return outcome[0]
