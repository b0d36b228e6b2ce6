"""A wall-clock deadline on a whole HTTP response, headers and body, whatever the server's pace.

A socket timeout bounds one wait for bytes, not a response: a server that sends one header byte
every few seconds, or a body at two bytes a second, never trips it, and urllib3 gathers a body
chunk until it is full. Such a server would hold one fetch (and the crawl wave that waits for it)
for hours. So every request is armed with a deadline before it is sent; the connection that sends
it attaches its socket (crawl/fetch.py installs the connection class); one watchdog thread per
process shuts down the socket of a request still running at its deadline, which wakes the blocked
read at once with an error or an end of data. The fetcher then reports the page as a timeout
(`fired`), never as a short body.
"""
from __future__ import annotations

import heapq
import itertools
import os
import socket
import threading
import time


class Watchdog:
    """Deadlines of the requests in flight, per thread; one daemon thread shuts down overdue sockets."""

    def __init__(self):
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int]] = []
        self._armed: dict[int, tuple[float, list[socket.socket]]] = {}   # token -> (deadline, its sockets)
        self._fired: set[int] = set()
        self._tokens = itertools.count(1)
        self._local = threading.local()
        self._pid = None

    def arm(self, deadline: float) -> int:
        """Start a request on this thread that must end by `deadline` (time.monotonic()); a token."""
        token = next(self._tokens)
        with self._cond:
            self._start_thread()
            self._armed[token] = (deadline, [])
            heapq.heappush(self._heap, (deadline, token))
            if self._heap[0][1] == token:   # the new earliest deadline: the thread sleeps until a later one
                self._cond.notify()
        self._local.token = token
        return token

    def attach(self, sock: socket.socket | None) -> None:
        """The socket this thread's armed request reads from; shut down at once if already overdue."""
        token = getattr(self._local, "token", None)
        if sock is None or token is None:
            return
        with self._cond:
            if token not in self._armed:
                return
            deadline, socks = self._armed[token]
            socks.append(sock)
            overdue = time.monotonic() >= deadline
        if overdue:
            self._fire(token)

    def disarm(self, token: int) -> bool:
        """End the request; True when its deadline fired (its body is cut, not complete)."""
        if getattr(self._local, "token", None) == token:
            self._local.token = None
        with self._cond:
            self._armed.pop(token, None)
            fired = token in self._fired
            self._fired.discard(token)
        return fired

    def fired(self, token: int) -> bool:
        with self._cond:
            return token in self._fired

    def _fire(self, token: int) -> None:
        with self._cond:
            armed = self._armed.get(token)
            socks = list(armed[1]) if armed else []
            if armed:
                self._fired.add(token)
        for s in socks:
            try:  # the plain socket's shutdown, also under TLS: the reader thread keeps its SSL object
                socket.socket.shutdown(s, socket.SHUT_RDWR)
            except OSError:
                pass   # already closed: nothing left to wake

    def _start_thread(self) -> None:
        """Called with the lock held; (re)starts the thread in this process (a forked child has none)."""
        if self._pid == os.getpid():
            return
        self._pid = os.getpid()
        threading.Thread(target=self._run, name="http-deadlines", daemon=True).start()

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    while self._heap and self._heap[0][1] not in self._armed:
                        heapq.heappop(self._heap)   # disarmed in time
                    now = time.monotonic()
                    if self._heap and self._heap[0][0] <= now:
                        token = heapq.heappop(self._heap)[1]
                        break
                    self._cond.wait(None if not self._heap else self._heap[0][0] - now)
            self._fire(token)


WATCHDOG = Watchdog()


def deadlined(conn_cls):
    """A urllib3 connection class whose socket is attached to the calling thread's armed request
    when it waits for the response (the connection, new or reused, exists by then)."""

    class Deadlined(conn_cls):
        def getresponse(self, *args, **kwargs):
            WATCHDOG.attach(self.sock)
            return super().getresponse(*args, **kwargs)

    Deadlined.__name__ = "Deadlined" + conn_cls.__name__
    return Deadlined
