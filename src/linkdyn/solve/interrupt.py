"""Ctrl-C for the Python stretches of a long run: a request, not an exception.

Python turns SIGINT into a KeyboardInterrupt at the next bytecode the main thread runs,
whatever that is. When it is a finaliser (a weakref callback, a ``__del__``) the exception
is printed as "Exception ignored" and lost, and the run goes on as if nothing had been
pressed. Runs that spend much of their time in Python between compiled calls meet this:
the walker's storm of contact events (some ten thousand mode switches a second) lost a
Ctrl-C in a CI run this way, in a WeakSet's callback.

:class:`StopRequest` replaces the SIGINT handler for the length of a run with one that only
records the request; the run polls :attr:`StopRequest.requested` (or, deeper down,
:func:`requested`: the innermost guard's) where it can stop with what it has (between
compiled calls) and says it did with :meth:`StopRequest.consume`. Simulations
(``DynamicsRun.integrate``) and kinematic analyses (``kinematics``) run inside one. A
second Ctrl-C before the run has looked raises KeyboardInterrupt as usual, so code that
never polls (a controller stuck in a loop) can still be broken into. On leaving, a
request that the run did not consume is passed on to the handler it replaced. The compiled
loops keep their own handler while they run (``_interrupt.h``); a Ctrl-C they do not report
reaches this one when they return. Only the main thread can own SIGINT: elsewhere (a worker
thread of a pool) the guard does nothing and Ctrl-C behaves as before.
"""

from __future__ import annotations

import signal
import threading

__all__ = ["StopRequest", "requested"]

#: The guards the main thread is in, innermost last (only the main thread installs one).
_active: list = []


def requested() -> bool:
    """Whether Ctrl-C was pressed inside the innermost guard of the calling thread (always
    False outside the main thread, where no guard is installed)."""
    return (bool(_active) and _active[-1].requested and
            threading.current_thread() is threading.main_thread())


class StopRequest:
    """``with StopRequest() as stop:`` ... ``if stop.requested: stop.consume(); ...``"""

    def __init__(self):
        self.requested = False
        self._consumed = False
        self._previous = None
        self._installed = False

    def _handler(self, signum, frame):
        if self.requested:          # a second Ctrl-C: break in now, as Python would
            raise KeyboardInterrupt
        self.requested = True

    def consume(self) -> None:
        """The run stopped for the request (its result says so)."""
        self._consumed = True

    def __enter__(self):
        # Only the main thread can own SIGINT, and only a handler that Python installed
        # (None: one set from C, a compiled loop of another run) can be put back.
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGINT) is not None:
            self._previous = signal.signal(signal.SIGINT, self._handler)
            self._installed = True
            _active.append(self)
        return self

    def __exit__(self, kind, exc, traceback):
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
            self._installed = False
            _active.remove(self)
            if self.requested and not self._consumed and kind is None:
                # pressed after the run's last look: the caller's handler gets it now
                signal.raise_signal(signal.SIGINT)
        return False
