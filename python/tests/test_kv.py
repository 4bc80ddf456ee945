"""The key-value store client (``yarn_am.kv``) against a stand-in for the AM's store that
keeps the AM's rules (versions, prefixes, long polls): paths, values, waits and errors."""

from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from yarn_am import InvalidArgument, KeyValueStore, KvEntry, NotFoundError, TooLargeError, WaitTimeout
from yarn_am.kv import key_path


class FakeStore:
    """Answers ``call(method, path, data=None, timeout=None)`` as the AM's endpoints do."""

    def __init__(self) -> None:
        self.entries: Dict[str, Tuple[str, int]] = {}
        self.revision = 0
        self.calls: List[Tuple[str, str, Optional[float]]] = []
        #: writes to make just before the n-th long poll answers (a task writing meanwhile)
        self.during_wait: Dict[int, Tuple[str, str]] = {}
        self.polls = 0

    def __call__(self, method: str, path: str, data: Optional[bytes] = None, timeout: Optional[float] = None) -> Any:
        self.calls.append((method, path, timeout))
        parts = urlsplit(path)
        q = {k: v[0] for k, v in parse_qs(parts.query).items()}
        if parts.path == "/v1/kv":
            prefix = q.get("prefix", "")
            return {"entries": [{"key": k, "value": v, "version": n}
                                for k, (v, n) in sorted(self.entries.items()) if k.startswith(prefix)],
                    "revision": self.revision}
        assert parts.path.startswith("/v1/kv/") and "/" not in parts.path[len("/v1/kv/"):], path
        key = unquote(parts.path[len("/v1/kv/"):])
        if method == "PUT":
            assert data is not None
            if len(data) > 64 << 10:
                raise TooLargeError(method, path, 413, "the value is too large; nothing stored")
            self.revision += 1
            self.entries[key] = (data.decode(), self.revision)
            return {"key": key, "version": self.revision}
        if method == "DELETE":
            return {"key": key, "deleted": self.entries.pop(key, None) is not None}
        if "wait" in q:
            self.polls += 1
            if self.polls in self.during_wait:
                k, v = self.during_wait[self.polls]
                self.revision += 1
                self.entries[k] = (v, self.revision)
            after = int(q.get("after", "0"))
            got = self.entries.get(key)
            if got and got[1] > after:
                return {"key": key, "value": got[0], "version": got[1]}
            raise NotFoundError(method, path, 404, f"no version of {key!r} above {after}")
        got = self.entries.get(key)
        if not got:
            raise NotFoundError(method, path, 404, f"no key {key!r}")
        return {"key": key, "value": got[0], "version": got[1]}


@pytest.fixture
def kv():
    store = FakeStore()
    return KeyValueStore(store), store


def test_put_get_list_delete_round_trip_with_any_key(kv):
    kv, store = kv
    assert kv.put("dask/scheduler", "tcp://nm1:8786") == 1
    assert kv.put("dask/workers/ü x", "w") == 2
    assert kv.put("other", "") == 3
    assert kv.get("dask/scheduler") == "tcp://nm1:8786"
    assert kv.entry("dask/workers/ü x") == KvEntry("dask/workers/ü x", "w", 2)
    assert kv.get("nope") is None and kv.get("nope", "d") == "d"
    assert kv.list("dask/") == {"dask/scheduler": "tcp://nm1:8786", "dask/workers/ü x": "w"}
    assert list(kv.list()) == ["dask/scheduler", "dask/workers/ü x", "other"]
    assert kv.delete("other") is True and kv.delete("other") is False
    # Every key is one path segment: slashes, dots and spaces encoded.
    assert key_path("a/../b c") == "/v1/kv/a%2F..%2Fb%20c"
    assert ("PUT", "/v1/kv/dask%2Fscheduler", None) in store.calls


def test_a_value_over_the_limit_is_refused_and_bad_arguments_never_reach_the_am(kv):
    kv, store = kv
    with pytest.raises(TooLargeError) as e:
        kv.put("k", "x" * ((64 << 10) + 1))
    assert e.value.status == 413 and kv.get("k") is None
    n = len(store.calls)
    for bad in ["", None, 3]:
        with pytest.raises(InvalidArgument):
            kv.get(bad)
    with pytest.raises(InvalidArgument):
        kv.put("k", b"bytes")
    assert len(store.calls) == n


def test_wait_polls_until_the_key_appears_or_changes(kv):
    kv, store = kv
    store.during_wait[3] = ("addr", "a1")
    assert kv.wait("addr", timeout=600) == "a1"
    assert store.polls == 3
    # Each long poll asks for at most a minute and gives the connection 15 s more.
    assert [t for m, p, t in store.calls if "wait=" in p] == [75, 75, 75]
    first = kv.wait_entry("addr", timeout=5)
    assert first == KvEntry("addr", "a1", 1), "present: at once"
    store.during_wait[store.polls + 2] = ("addr", "a2")
    changed = kv.wait_entry("addr", timeout=600, after=first.version)
    assert changed.value == "a2" and changed.version > first.version


def test_wait_gives_up_after_its_timeout(kv):
    kv, store = kv
    with pytest.raises(WaitTimeout) as e:
        kv.wait("never", timeout=0)
    assert "never" in str(e.value)
    assert store.calls[-1][1].endswith("?wait=0&after=0")
