"""An application's key-value store (``crates/wire/src/kv.rs``): string keys and values the AM
keeps for the application's life, journaled so that they survive an AM restart. Get it as
:attr:`yarn_am.Application.kv`.

>>> app.kv.put("dask/scheduler", "tcp://nm1:8786")             # doctest: +SKIP
3
>>> app.kv.wait("dask/scheduler", timeout=60)                    # doctest: +SKIP
'tcp://nm1:8786'

Inside the app's containers, tasks use ``yarn-am kv get|put|wait|list`` with their
container's own key (no driver secret there)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional
from urllib.parse import quote

from .errors import InvalidArgument, NotFoundError, WaitTimeout

#: the longest one long poll waits on the AM (``MAX_WAIT_SECS``); longer waits poll again
MAX_WAIT = 60

#: ``call(method, path, data=None, timeout=None)`` -> the answer's JSON
Call = Callable[..., Any]


@dataclass(frozen=True)
class KvEntry:
    key: str
    value: str
    #: the store's revision when this value was written; a wait with ``after=version``
    #: answers only a later write
    version: int

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "KvEntry":
        return cls(str(d["key"]), str(d["value"]), int(d["version"]))


def key_path(key: str) -> str:
    """``/v1/kv/<key>`` with the key as one path segment (``/`` percent-encoded too)."""
    if not isinstance(key, str) or not key:
        raise InvalidArgument(f"a key must be a non-empty string, not {key!r}")
    return "/v1/kv/" + quote(key, safe="")


class KeyValueStore:
    """The store of one application. Limits (the AM's): keys up to 1 KiB, values up to
    64 KiB, 10,000 keys, 16 MiB in all; a write over one raises :class:`TooLargeError`
    (413) and stores nothing."""

    def __init__(self, call: Call):
        self._call = call

    def entry(self, key: str) -> Optional[KvEntry]:
        """The entry with its version, or ``None``."""
        try:
            return KvEntry.from_json(self._call("GET", key_path(key)))
        except NotFoundError:
            return None

    def get(self, key: str, default: Optional[str] = None) -> Optional[str]:
        e = self.entry(key)
        return default if e is None else e.value

    def put(self, key: str, value: str) -> int:
        """Stores ``value`` (once it is in the AM's journal); returns its version."""
        if not isinstance(value, str):
            raise InvalidArgument(f"a value must be a string, not {type(value).__name__}")
        r = self._call("PUT", key_path(key), data=value.encode("utf-8"))
        return int(r["version"])

    def delete(self, key: str) -> bool:
        """Whether the key was there."""
        return bool(self._call("DELETE", key_path(key))["deleted"])

    def list(self, prefix: str = "") -> Dict[str, str]:
        """Every key starting with ``prefix`` and its value, in key order."""
        r = self._call("GET", "/v1/kv?prefix=" + quote(prefix, safe=""))
        return {e["key"]: e["value"] for e in r.get("entries", [])}

    def wait_entry(self, key: str, timeout: Optional[float] = None, *, after: int = 0) -> KvEntry:
        """Waits until ``key`` holds a version above ``after`` (any version by default) and
        returns that entry; :class:`WaitTimeout` after ``timeout`` seconds (``None``: for
        ever, in long polls of at most a minute)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        path = key_path(key)
        while True:
            left = MAX_WAIT if deadline is None else max(0, min(MAX_WAIT, int(deadline - time.monotonic())))
            try:
                r = self._call("GET", f"{path}?wait={left}&after={int(after)}", timeout=left + 15)
                return KvEntry.from_json(r)
            except NotFoundError:
                if left == 0:
                    raise WaitTimeout(f"key {key!r} above version {after}", timeout or 0) from None

    def wait(self, key: str, timeout: Optional[float] = None, *, after: int = 0) -> str:
        """The value of :meth:`wait_entry`."""
        return self.wait_entry(key, timeout, after=after).value
