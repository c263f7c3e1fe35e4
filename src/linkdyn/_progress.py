"""Progress reports for long compiled runs: a daemon thread calls ``callback(*read())``
every PERIOD seconds of wall time while the run goes on. The compiled loops release the GIL,
so the reports cost them nothing; ``read`` takes values the loop is writing, which is fine
for a display. An exception from the callback ends the reports, not the run."""

from __future__ import annotations

import threading
from .errors import ArgumentError

#: Wall time (s) between two reports.
PERIOD = 0.5


class Reporter:
    def __init__(self, read, callback, period=None):
        self._read, self._callback = read, callback
        self._period = PERIOD if period is None else period
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="linkdyn-progress",
                                        daemon=True)
        self._thread.start()

    def _run(self):
        while not self._done.wait(self._period):
            try:
                self._callback(*self._read())
            except Exception:  # noqa: BLE001 - a display must not stop the run
                return

    def stop(self):
        self._done.set()
        self._thread.join()


def check_callback(progress):
    if progress is not None and not callable(progress):
        raise ArgumentError(f"progress must be callable or None, got {progress!r}")
