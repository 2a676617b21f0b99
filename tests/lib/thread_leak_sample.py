"""Tests that leave a thread running, for tests/test_harness.py (not
collected by the suite: pytest.ini collects test_*.py only)."""

import threading

stop = threading.Event()


def test_starts_a_thread_it_leaves():
    threading.Thread(target=stop.wait, name='left-behind',
                     daemon=True).start()


def test_after_it():
    pass
