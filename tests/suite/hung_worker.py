"""A worker thread that answers requests one at a time, shared by the tests of a cleanup that
waits on what a test hung (``tests/suite/inside/test_hung_cleanup.py`` and
``tests/suite/execute/test_hung_cleanup_run.py``).

``ask`` and ``stop`` both wait for the worker's answer, as an actor library's do.  A handler that
raises is answered with its exception, re-raised in the caller.  The mutant narrows
``except Exception`` to ``except KeyError``: a handler's ``ZeroDivisionError`` then kills the
worker's thread without an answer, so ``ask`` waits forever -- and so does the ``stop`` in the
test's ``finally``, after the time limit has interrupted ``ask``.
"""

WORKER = '''\
"""A worker thread that answers requests, one at a time, from its inbox."""

import queue
import threading

_STOP = object()


class Worker:
    def __init__(self, handler):
        self._inbox = queue.Queue()
        self._handler = handler
        threading.Thread(target=self._loop, daemon=True).start()

    def _loop(self):
        while True:
            message, reply = self._inbox.get()
            if message is _STOP:
                reply.put((True, None))
                return
            try:
                reply.put((True, self._handler(message)))
            except Exception as exc:
                reply.put((False, exc))

    def _send(self, message):
        reply = queue.Queue(maxsize=1)
        self._inbox.put((message, reply))
        ok, value = reply.get()
        if not ok:
            raise value
        return value

    def ask(self, message):
        return self._send(message)

    def stop(self):
        self._send(_STOP)
'''
NARROWED = ("except Exception as exc", "except KeyError as exc")

TESTS = """\
import pytest

from worker import Worker


def test_a_failing_request_raises_in_the_caller():
    worker = Worker(lambda x: 1 // x)
    try:
        with pytest.raises(ZeroDivisionError):
            worker.ask(0)
    finally:
        worker.stop()


def test_doubles():
    worker = Worker(lambda x: 2 * x)
    try:
        assert worker.ask(21) == 42
    finally:
        worker.stop()
"""
