"""A client of one AM's driver API (``src/http/mod.rs``): HTTPS with the AM's certificate
pinned, ``Authorization: Bearer <secret>`` on every call, JSON both ways.

One connection per call: the AM closes a keep-alive connection idle for 10 s, and a request
sent on it just then would get no answer."""

from __future__ import annotations

import http.client
import json
import socket
from typing import Any, Dict, Optional, Tuple

from ._http import error_text, open_driver_connection
from .errors import (
    AuthenticationError,
    BadRequestError,
    DriverApiError,
    NotFoundError,
    PinMismatchError,
    TooLargeError,
    UnavailableError,
    UnreachableError,
)
from .secret import DriverSecret

_BY_STATUS = {
    400: BadRequestError,
    401: AuthenticationError,
    404: NotFoundError,
    413: TooLargeError,
    503: UnavailableError,
}


class DriverClient:
    """``base_url``: ``https://host:port`` of the driver API."""

    def __init__(self, base_url: str, secret: DriverSecret, timeout: float = 15.0):
        self.base_url = base_url.rstrip("/")
        self._secret = secret
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"DriverClient({self.base_url!r}, pin={self._secret.tls_pin!r})"

    def connection(self, timeout: Optional[float] = None) -> http.client.HTTPConnection:
        return open_driver_connection(
            self.base_url, self._secret.tls_pin, self.timeout if timeout is None else timeout
        )

    def _headers(self, body: Optional[bytes], content_type: str) -> Dict[str, str]:
        h = {"Authorization": f"Bearer {self._secret.secret}", "Accept": "application/json"}
        if body is not None:
            h["Content-Type"] = content_type
        return h

    def open(
        self, method: str, path: str, *, body: Optional[Any] = None, timeout: Optional[float] = None,
        accept: Optional[str] = None, data: Optional[bytes] = None,
    ) -> Tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        """Sends one request and returns the connection and its response (headers read);
        the caller reads and closes. Error statuses raise the typed errors. ``body`` goes as
        JSON, ``data`` as it is (text, e.g. a key-value store value)."""
        content_type = "text/plain; charset=utf-8"
        if body is not None:
            data, content_type = json.dumps(body).encode(), "application/json"
        conn = self.connection(timeout)
        headers = self._headers(data, content_type)
        if accept:
            headers["Accept"] = accept
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
        except PinMismatchError:
            conn.close()
            raise
        except (OSError, socket.timeout, http.client.HTTPException) as e:
            conn.close()
            raise UnreachableError("the driver API", self.base_url, _describe(e)) from None
        if resp.status >= 400:
            try:
                payload = resp.read()
            except (OSError, http.client.HTTPException):
                payload = b""
            conn.close()
            cls = _BY_STATUS.get(resp.status, DriverApiError)
            raise cls(method, path, resp.status, error_text(payload))
        return conn, resp

    def call(
        self, method: str, path: str, body: Optional[Any] = None, *, data: Optional[bytes] = None,
        timeout: Optional[float] = None,
    ) -> Any:
        """One call; the answer's JSON (``None`` for an empty body)."""
        conn, resp = self.open(method, path, body=body, data=data, timeout=timeout)
        try:
            payload = resp.read()
        except (OSError, socket.timeout, http.client.HTTPException) as e:
            raise UnreachableError("the driver API", self.base_url, _describe(e)) from None
        finally:
            conn.close()
        if not payload.strip():
            return None
        ctype = resp.getheader("Content-Type", "")
        if "json" not in ctype:
            return payload.decode("utf-8", "replace")
        return json.loads(payload)


def _describe(e: BaseException) -> str:
    if isinstance(e, socket.timeout):
        return "timed out"
    return str(e) or type(e).__name__
