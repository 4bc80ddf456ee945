"""Server-sent events: a parser that needs no socket (fed bytes, hands back events), and the
iterator behind :meth:`yarn_am.Application.events`, which reconnects when the stream breaks
and resynchronises (a fresh ``/v1/state``) after ``lagged`` or a reconnect.

The AM's stream (``GET /v1/events``, ``src/http/mod.rs``): events ``executor_added``,
``executor_updated``, ``executor_removed`` with the JSON of the event as data; ``lagged``
with ``{"missed": n}`` when the client fell more than 1024 events behind (the stream then
goes on from the oldest event still held); a comment line every 15 s to keep it alive; the
stream ends when the AM stops.
"""

from __future__ import annotations

import http.client
import json
import time
from dataclasses import dataclass
from typing import Callable, Iterator, List, Optional, Protocol, Union

from .errors import UnreachableError, WaitTimeout, YarnAmError
from .models import ExecutorEvent, Resync, State


@dataclass(frozen=True)
class SseEvent:
    """One dispatched server-sent event."""

    event: str
    data: str
    id: Optional[str] = None


class SseParser:
    """The event-stream format (WHATWG HTML, "server-sent events"): lines end in ``\\n``,
    ``\\r\\n`` or ``\\r``; ``field: value`` (one space after the colon dropped); lines
    starting with ``:`` are comments; a blank line dispatches the event (``data`` lines
    joined by ``\\n``; an event with no data is dropped; the name defaults to ``message``)."""

    def __init__(self) -> None:
        self._buf = b""
        self._cr_pending = False
        self._event = ""
        self._data: List[str] = []
        self._id: Optional[str] = None
        self.last_event_id: Optional[str] = None
        #: milliseconds, from a ``retry:`` field
        self.retry_ms: Optional[int] = None

    def feed(self, chunk: bytes) -> List[SseEvent]:
        out: List[SseEvent] = []
        data = self._buf + chunk
        self._buf = b""
        start = 0
        i = 0
        n = len(data)
        while i < n:
            b = data[i]
            if b == 0x0A and self._cr_pending and i == start:
                # The \n of a \r\n whose \r ended the previous line.
                self._cr_pending = False
                start = i = i + 1
                continue
            self._cr_pending = False
            if b in (0x0A, 0x0D):
                self._line(data[start:i], out)
                self._cr_pending = b == 0x0D
                start = i = i + 1
                continue
            i += 1
        self._buf = data[start:]
        return out

    def _line(self, raw: bytes, out: List[SseEvent]) -> None:
        line = raw.decode("utf-8", "replace")
        if line == "":
            if self._data:
                out.append(SseEvent(self._event or "message", "\n".join(self._data), self._id))
            self._event, self._data = "", []
            return
        if line.startswith(":"):
            return
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id":
            if "\0" not in value:
                self._id = self.last_event_id = value
        elif name == "retry":
            if value.isdigit():
                self.retry_ms = int(value)


class ByteSource(Protocol):
    """What the stream reads: an open response (``read1`` or ``read``) that can be closed."""

    def read1(self, n: int) -> bytes: ...  # pragma: no cover

    def close(self) -> None: ...  # pragma: no cover


Item = Union[ExecutorEvent, Resync]


class EventStream:
    """Iterates over an application's executor events, as :class:`ExecutorEvent` and
    :class:`Resync` items, until the application ends (or :meth:`close`).

    - ``lagged`` from the AM: a :class:`Resync` (reason ``lagged``, ``missed`` as the AM
      counted) with a fresh state (``resync=True``), then the stream goes on.
    - The connection breaks, or is silent longer than ``read_timeout`` (the AM sends a
      keep-alive every 15 s): it is opened again, then a :class:`Resync` (reason
      ``reconnected``). While the AM cannot be reached, ``is_over()`` is asked; when the app
      has ended the iteration stops; otherwise it retries (1 s apart, doubling to 5 s) for
      ``reconnect_timeout`` seconds, then raises :class:`WaitTimeout` (a next AM attempt
      usually comes back well within that).

    ``connect()`` opens the stream (raising :class:`UnreachableError` when the AM cannot be
    reached), ``state()`` reads ``/v1/state``; both are the application's. Parsing needs no
    socket: the tests feed it fake streams."""

    def __init__(
        self,
        connect: Callable[[], ByteSource],
        state: Callable[[], State],
        is_over: Callable[[], bool],
        *,
        resync: bool = True,
        reconnect_timeout: float = 120.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._connect = connect
        self._state = state
        self._is_over = is_over
        self._resync = resync
        self._reconnect_timeout = reconnect_timeout
        self._sleep = sleep
        self._clock = clock
        self._source: Optional[ByteSource] = None
        self._closed = False
        #: connections opened so far (the first one included)
        self.connections = 0

    def __iter__(self) -> Iterator[Item]:
        return self._items()

    def __enter__(self) -> "EventStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._closed = True
        self._drop()

    def _drop(self) -> None:
        src, self._source = self._source, None
        if src is not None:
            try:
                src.close()
            except Exception:  # noqa: BLE001 - closing a broken stream
                pass

    def _open(self) -> bool:
        """Opens the stream, waiting for the AM; False when the app is over."""
        delay = 1.0
        deadline = self._clock() + self._reconnect_timeout
        while True:
            try:
                self._source = self._connect()
                self.connections += 1
                return True
            except UnreachableError as e:
                if self._is_over():
                    return False
                if self._clock() >= deadline:
                    raise WaitTimeout("the driver API's event stream to come back", self._reconnect_timeout, e) from e
            self._sleep(delay)
            delay = min(delay * 2, 5.0)

    def _items(self) -> Iterator[Item]:
        while not self._closed:
            if self._source is None:
                if not self._open():
                    return
                if self.connections > 1:
                    yield Resync("reconnected", None, self._fresh_state())
            parser = SseParser()
            src = self._source
            assert src is not None
            while not self._closed:
                try:
                    chunk = _read_some(src)
                except (OSError, ValueError, AttributeError, http.client.HTTPException, YarnAmError):
                    chunk = b""
                if not chunk:
                    break
                for ev in parser.feed(chunk):
                    item = self._item(ev)
                    if item is not None:
                        yield item
            self._drop()

    def _fresh_state(self) -> Optional[State]:
        if not self._resync:
            return None
        try:
            return self._state()
        except YarnAmError:
            return None

    def _item(self, ev: SseEvent) -> Optional[Item]:
        if ev.event == "lagged":
            try:
                missed = int(json.loads(ev.data).get("missed"))
            except (ValueError, TypeError, AttributeError):
                missed = None
            return Resync("lagged", missed, self._fresh_state())
        if ev.event.startswith("executor_"):
            try:
                v = json.loads(ev.data)
            except ValueError:
                return None
            e = ExecutorEvent.from_json(v)
            return ExecutorEvent(ev.event, e.executor)
        return None  # an event this client does not know (a newer AM)


def _read_some(src: ByteSource) -> bytes:
    read1 = getattr(src, "read1", None)
    chunk = read1(65536) if read1 is not None else src.read(65536)  # type: ignore[attr-defined]
    return bytes(chunk)
