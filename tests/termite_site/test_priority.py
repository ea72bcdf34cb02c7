"""Work nobody else waits for runs at a lower CPU priority, and the thread gets its own back
(termite_site/priority.py); the leaderboard builds a changed value so (leaderboard/ranking.py, `cached`)."""

from __future__ import annotations

import os
import threading

import pytest

from leaderboard import ranking
from termite_site import priority


def niceness() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def in_a_thread(work):
    """`work()` on a thread of its own, so that whatever it does to its niceness stays there."""
    outcome = []
    worker = threading.Thread(target=lambda: outcome.append(work()))
    worker.start()
    worker.join()
    return outcome[0]


# This machine kind runs its tests as root, which may give a niceness back; a process that may not is
# covered by the last test.
needs_giving_back = pytest.mark.skipif(
    not priority.may_give_back() or niceness() >= priority.BACKGROUND_NICENESS,
    reason="this process may not lower a niceness, or runs at the background one already",
)


@needs_giving_back
def test_within_lowered_the_thread_runs_at_the_background_niceness_and_gets_its_own_back():
    def work():
        before = niceness()
        with priority.lowered():
            within = niceness()
            with priority.lowered():  # nested: left as it is
                nested = niceness()
            after_nested = niceness()
        return before, within, nested, after_nested, niceness()

    before, within, nested, after_nested, after = in_a_thread(work)
    assert before < priority.BACKGROUND_NICENESS
    assert within == nested == after_nested == priority.BACKGROUND_NICENESS
    assert after == before


@needs_giving_back
def test_the_niceness_comes_back_when_the_work_fails():
    def work():
        before = niceness()
        with pytest.raises(ValueError), priority.lowered():
            raise ValueError("the build failed")
        return before, niceness()

    before, after = in_a_thread(work)
    assert after == before


@needs_giving_back
def test_only_the_calling_thread_is_lowered():
    lowered_now, read = threading.Event(), threading.Event()
    other_saw = []

    def other():
        lowered_now.wait(5)
        other_saw.append(niceness())
        read.set()

    def work():
        watcher = threading.Thread(target=other)
        watcher.start()
        with priority.lowered():
            lowered_now.set()
            read.wait(5)
            mine = niceness()
        watcher.join()
        return mine

    assert in_a_thread(work) == priority.BACKGROUND_NICENESS
    assert other_saw[0] < priority.BACKGROUND_NICENESS


@needs_giving_back
def test_a_changed_leaderboard_value_is_built_at_the_background_niceness(demo_version):
    seen = []

    def build():
        seen.append(niceness())
        return "built"

    def work():
        before = niceness()
        ranking.cached(demo_version.label, "probe-priority", build)
        return before, niceness()

    before, after = in_a_thread(work)
    assert seen == [priority.BACKGROUND_NICENESS] and after == before


def test_where_a_niceness_may_not_be_given_back_nothing_is_lowered(monkeypatch):
    monkeypatch.setattr(priority, "may_give_back", lambda: False)

    def work():
        before = niceness()
        with priority.lowered():
            return before, niceness()

    before, within = in_a_thread(work)
    assert within == before
