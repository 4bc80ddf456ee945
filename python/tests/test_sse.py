import json
from typing import List

import pytest

from yarn_am import ExecutorEvent, Resync, State, UnreachableError, WaitTimeout
from yarn_am.sse import EventStream, SseEvent, SseParser


def executor(id_: str, state: str = "running") -> dict:
    return {"id": id_, "container_id": f"container_1_0001_01_00000{id_}", "host": "nm1", "rack": "/rack1",
            "locality": "node", "state": state, "exit_status": None, "reason": None, "counts_against_app": None}


def sse(name: str, data: dict) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def added(id_: str) -> bytes:
    return sse("executor_added", {"type": "added", "executor": executor(id_)})


def test_parser_dispatches_on_blank_lines_in_any_chunking():
    text = (b": keep-alive\n\nevent: executor_added\ndata: {\"a\":\ndata: 1}\n\n"
            b"event: lagged\r\ndata: {\"missed\": 3}\r\n\r\n"
            b"event: x\rdata:no-space\rid: 7\rretry: 1500\r\r"
            b"data: default name\n\n"
            b"event: dropped-without-data\n\n")
    want = [SseEvent("executor_added", "{\"a\":\n1}"), SseEvent("lagged", "{\"missed\": 3}"),
            SseEvent("x", "no-space", "7"), SseEvent("message", "default name", "7")]
    for size in (1, 2, 3, 7, len(text)):
        p = SseParser()
        got: List[SseEvent] = []
        for i in range(0, len(text), size):
            got += p.feed(text[i:i + size])
        assert got == want, size
        assert p.retry_ms == 1500 and p.last_event_id == "7"


def test_an_unfinished_event_is_not_dispatched():
    p = SseParser()
    assert p.feed(b"event: executor_added\ndata: {}\n") == []
    assert p.feed(b"\n") == [SseEvent("executor_added", "{}")]


class FakeSource:
    """A stream that hands out its chunks, then EOF (or raises `error` at the end)."""

    def __init__(self, chunks, error=None):
        self.chunks = list(chunks)
        self.error = error
        self.closed = False

    def read1(self, n):
        if self.chunks:
            return self.chunks.pop(0)
        if self.error:
            raise self.error
        return b""

    def close(self):
        self.closed = True


def make_state(n: int) -> State:
    return State.from_json({"app_id": "a", "running": n, "executors": [executor(str(i)) for i in range(1, n + 1)]})


def test_lagged_resyncs_and_the_stream_goes_on():
    sources = [FakeSource([added("1"), sse("lagged", {"missed": 1500}), added("3")])]
    states = iter([make_state(2)])
    over = iter([True])

    def connect():
        if sources:
            return sources.pop(0)
        raise UnreachableError("the driver API", "x", "refused")

    stream = EventStream(connect, lambda: next(states), lambda: next(over), sleep=lambda s: None)
    items = list(stream)
    assert [type(i).__name__ for i in items] == ["ExecutorEvent", "Resync", "ExecutorEvent"]
    assert items[0] == ExecutorEvent("executor_added", items[0].executor) and items[0].executor.id == "1"
    assert items[1].reason == "lagged" and items[1].missed == 1500 and items[1].state.running == 2
    assert items[2].executor.id == "3"
    assert stream.connections == 1


def test_a_broken_stream_reconnects_and_resyncs_then_ends_with_the_app():
    first = FakeSource([added("1"), b"event: executor_upd"], error=TimeoutError("timed out"))
    second = FakeSource([sse("executor_removed", {"type": "removed", "executor": executor("1", "exited")})])
    attempts = [first, UnreachableError("the driver API", "x", "refused"), second]
    over_answers = iter([False, True])
    slept = []

    def connect():
        if not attempts:
            raise UnreachableError("the driver API", "x", "refused")
        a = attempts.pop(0)
        if isinstance(a, Exception):
            raise a
        return a

    stream = EventStream(connect, lambda: make_state(1), lambda: next(over_answers), sleep=slept.append)
    items = list(stream)
    assert [getattr(i, "type", None) or i.reason for i in items] == ["executor_added", "reconnected", "executor_removed"]
    assert isinstance(items[1], Resync) and items[1].missed is None and items[1].state.running == 1
    assert items[2].executor.state == "exited"
    assert first.closed and second.closed
    assert slept == [1.0]  # after the refused reconnect; the app over at the end: no wait
    assert stream.connections == 2


def test_gives_up_after_the_reconnect_timeout_while_the_app_runs():
    now = [0.0]

    def connect():
        raise UnreachableError("the driver API", "x", "refused")

    def sleep(s):
        now[0] += s

    stream = EventStream(connect, lambda: make_state(0), lambda: False, reconnect_timeout=10, sleep=sleep,
                         clock=lambda: now[0])
    with pytest.raises(WaitTimeout, match="event stream"):
        list(stream)
    assert now[0] >= 10


def test_without_resync_no_state_is_read_and_close_stops():
    def boom():
        raise AssertionError("state read")

    src = FakeSource([added("1"), sse("lagged", {"missed": 2}), added("2")])
    stream = EventStream(lambda: src, boom, lambda: True, resync=False)
    it = iter(stream)
    assert next(it).executor.id == "1"
    r = next(it)
    assert isinstance(r, Resync) and r.state is None and r.missed == 2
    stream.close()
    assert list(it) == [] and src.closed


def test_unknown_events_are_skipped():
    src = FakeSource([sse("something_new", {"x": 1}), added("4")])
    items = list(EventStream(lambda: src if not src.closed else (_ for _ in ()).throw(UnreachableError("d", "x", "r")),
                             lambda: make_state(0), lambda: True))
    assert [i.executor.id for i in items] == ["4"]
