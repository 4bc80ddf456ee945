"""HTTP plumbing: the driver API's pinned HTTPS connection, and plain GET/PUT for the RM and
NodeManager web services. Every call has a timeout."""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import os
import socket
import ssl
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Optional, Tuple

from .errors import PinMismatchError, UnreachableError


def pinned_context() -> ssl.SSLContext:
    """A client context that accepts any certificate during the handshake: the pin is checked
    right after it (:class:`PinnedHTTPSConnection`), before anything is sent."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    return ctx


def check_pin(sock: ssl.SSLSocket, pin: str, address: str) -> None:
    """Raises :class:`PinMismatchError` unless the peer's DER certificate hashes to ``pin``
    (64 lower-case hex digits)."""
    der = sock.getpeercert(binary_form=True)
    seen = hashlib.sha256(der).hexdigest() if der else "(no certificate)"
    if not hmac.compare_digest(seen.encode(), pin.encode()):
        raise PinMismatchError(address, pin, seen)


class PinnedHTTPSConnection(http.client.HTTPSConnection):
    """An HTTPS connection that accepts exactly the certificate whose SHA-256 is ``pin``,
    whatever its name, issuer and dates (the AM's self-signed per-application certificate).
    The check runs inside :meth:`connect`, which ``http.client`` calls before it writes the
    request, so on a mismatch no byte of the request (nor the Bearer secret) is sent."""

    def __init__(self, host: str, port: int, pin: str, timeout: float):
        super().__init__(host, port, timeout=timeout, context=pinned_context())
        self._pin = pin

    def connect(self) -> None:
        super().connect()  # TCP, then the TLS handshake (do_handshake_on_connect)
        try:
            check_pin(self.sock, self._pin, f"{self.host}:{self.port}")
        except BaseException:
            self.sock.close()
            self.sock = None
            raise


def split_url(url: str) -> Tuple[str, str, int]:
    """``(scheme, host, port)`` of ``http(s)://host:port[/...]``."""
    u = urllib.parse.urlsplit(url)
    if u.scheme not in ("http", "https") or not u.hostname:
        raise ValueError(f"not an http(s) URL: {url!r}")
    port = u.port or (443 if u.scheme == "https" else 80)
    return u.scheme, u.hostname, port


def open_driver_connection(
    base_url: str, pin: Optional[str], timeout: float
) -> http.client.HTTPConnection:
    """A connection to the driver API at ``base_url``: pinned HTTPS, or plain HTTP only for a
    version 1 secret (no pin). An ``http://`` URL with a pin is refused: the secret would go
    in clear."""
    scheme, host, port = split_url(base_url)
    if pin is not None:
        if scheme != "https":
            raise UnreachableError(
                "the driver API", base_url, "the secret file pins a certificate but the URL is not https"
            )
        return PinnedHTTPSConnection(host, port, pin, timeout)
    if scheme == "https":
        # A version 1 secret has no pin: refuse rather than send the secret unpinned.
        raise UnreachableError(
            "the driver API", base_url, "the secret file has no certificate pin (version 1) but the AM serves https"
        )
    return http.client.HTTPConnection(host, port, timeout=timeout)


def web_context() -> ssl.SSLContext:
    """Trust for ``https://`` RM and NodeManager addresses: the system's CAs, plus
    ``$YARN_AM_CA_FILE`` when set (as the CLI)."""
    ctx = ssl.create_default_context()
    ca = os.environ.get("YARN_AM_CA_FILE")
    if ca:
        ctx.load_verify_locations(cafile=ca)
    return ctx


def web_request(
    method: str,
    url: str,
    *,
    timeout: float,
    body: Optional[Dict[str, Any]] = None,
    accept: str = "application/json",
    what: str = "the ResourceManager",
) -> Tuple[int, bytes]:
    """One request to a Hadoop web service; ``(status, body)`` for any HTTP answer (4xx and
    5xx included). Connection failures and timeouts raise :class:`UnreachableError`. GETs
    follow redirects (a standby RM redirects to the active one)."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Accept", accept)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    ctx = web_context() if url.startswith("https://") else None
    try:
        with urllib.request.urlopen(req, timeout=timeout, context=ctx) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        try:
            payload = e.read()
        except Exception:  # noqa: BLE001 - the status is what matters
            payload = b""
        return e.code, payload
    except (urllib.error.URLError, OSError, socket.timeout, http.client.HTTPException) as e:
        reason = getattr(e, "reason", e)
        raise UnreachableError(what, _without_query(url), reason) from None


def _without_query(url: str) -> str:
    return url.split("?", 1)[0]


def error_text(body: bytes) -> str:
    """The message of a JSON error body (``{"error": ...}``, or Hadoop's
    ``{"RemoteException": {"message": ...}}``), else the body's start."""
    try:
        v = json.loads(body)
    except ValueError:
        return body[:300].decode("utf-8", "replace").strip()
    if isinstance(v, dict):
        if isinstance(v.get("error"), str):
            return str(v["error"])
        re = v.get("RemoteException")
        if isinstance(re, dict) and re.get("message"):
            return str(re["message"])
    return json.dumps(v)[:300]
