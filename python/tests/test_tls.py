"""Against a local TLS server whose self-signed certificate `openssl` makes at test time
(skipped without openssl): the right pin talks, a wrong one is refused after the handshake
with nothing sent; the event stream over a real socket (chunked, `lagged`, the stream ending
and a reconnect)."""

import hashlib
import json
import shutil
import socket
import ssl
import subprocess
import threading

import pytest

from yarn_am import DriverSecret, PinMismatchError, State, UnreachableError
from yarn_am.app import _Stream
from yarn_am.driver import DriverClient
from yarn_am.sse import EventStream

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")


class TlsServer:
    def __init__(self, tmp_path, replies=None):
        #: one callable per connection: (ssl socket, request bytes) -> None; default JSON state
        self.replies = list(replies or [])
        key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                        "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=yarn-am"],
                       check=True, capture_output=True)
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(str(cert), str(key))
        der = ssl.PEM_cert_to_DER_cert(cert.read_text())
        self.fingerprint = hashlib.sha256(der).hexdigest()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.received = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while True:
            try:
                raw, _ = self.sock.accept()
            except OSError:
                return
            raw.settimeout(5)
            try:
                conn = self.ctx.wrap_socket(raw, server_side=True)
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                # The body too, before any reply: a server that answers and closes with the
                # body unread resets the connection, and the client may see that instead of
                # the answer ("Remote end closed connection without response").
                head, _, body = data.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip() or 0)
                while len(body) < length:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    body += chunk
                    data += chunk
                self.received.append(data)
                if data and self.replies:
                    self.replies.pop(0)(conn, data)
                elif data:
                    body = b'{"app_id": "application_1_1", "running": 0, "executors": []}'
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                                 + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
                conn.close()
            except (OSError, ssl.SSLError):
                self.received.append(b"")
                raw.close()

    def close(self):
        self.sock.close()


@pytest.fixture
def server(tmp_path):
    s = TlsServer(tmp_path)
    yield s
    s.close()


def chunked(conn, parts):
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
    for p in parts:
        conn.sendall(b"%x\r\n%s\r\n" % (len(p), p))
    conn.sendall(b"0\r\n\r\n")


def ev(name, data):
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def exe(i):
    return {"id": i, "container_id": f"container_1_0001_01_00000{i}", "host": "nm1", "rack": "/rack1",
            "locality": "node", "state": "running", "exit_status": None, "reason": None, "counts_against_app": None}


def test_events_over_tls_resync_after_lagged_and_reconnect(tmp_path):
    first = [b": keep-alive\n\n", ev("executor_added", {"type": "added", "executor": exe("1")})[:20],
             ev("executor_added", {"type": "added", "executor": exe("1")})[20:],
             ev("lagged", {"missed": 1200}), ev("executor_added", {"type": "added", "executor": exe("2")})]
    second = [ev("executor_removed", {"type": "removed", "executor": exe("1")})]
    srv = TlsServer(tmp_path, replies=[lambda c, d: chunked(c, first), lambda c, d: chunked(c, second)])
    try:
        d = DriverClient(f"https://127.0.0.1:{srv.port}", DriverSecret("s3cr3t" * 8, srv.fingerprint), timeout=5)
        state_reads = []

        def connect():
            if len(srv.received) >= 2:
                raise UnreachableError("the driver API", "127.0.0.1", "refused")
            conn, resp = d.open("GET", "/v1/events", accept="text/event-stream")
            return _Stream(conn, resp)

        def state():
            state_reads.append(1)
            return State.from_json({"running": 2})

        items = list(EventStream(connect, state, lambda: True, sleep=lambda s: None))
        kinds = [getattr(i, "type", None) or i.reason for i in items]
        assert kinds == ["executor_added", "lagged", "executor_added", "reconnected", "executor_removed"]
        assert items[1].missed == 1200 and items[1].state.running == 2 and len(state_reads) == 2
        assert all(b"GET /v1/events" in r and b"Accept: text/event-stream" in r for r in srv.received)
    finally:
        srv.close()


def test_the_pinned_certificate_is_accepted(server):
    secret = DriverSecret("s3cr3t" * 8, server.fingerprint)
    d = DriverClient(f"https://127.0.0.1:{server.port}", secret, timeout=5)
    assert d.call("GET", "/v1/state")["app_id"] == "application_1_1"
    assert b"Authorization: Bearer s3cr3t" in server.received[0]


def test_a_wrong_pin_is_refused_before_any_byte_is_sent(server):
    wrong = "00" * 32
    d = DriverClient(f"https://127.0.0.1:{server.port}", DriverSecret("s3cr3t" * 8, wrong), timeout=5)
    with pytest.raises(PinMismatchError) as e:
        d.call("GET", "/v1/state")
    err = e.value
    assert err.expected == wrong and err.seen == server.fingerprint
    assert wrong in str(err) and server.fingerprint in str(err) and "s3cr3t" not in str(err)
    server.thread.join(0.5)
    for _ in range(50):
        if server.received:
            break
        threading.Event().wait(0.05)
    assert server.received == [b""], "the client sent bytes to an unpinned peer"


def test_a_kv_value_goes_as_text_and_a_413_is_too_large(tmp_path):
    from yarn_am import KeyValueStore, TooLargeError

    def too_large(conn, data):
        body = b'{"error": "the value is 65537 bytes, over the limit of 65536; nothing stored"}'
        conn.sendall(b"HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/json\r\nContent-Length: "
                     + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)

    s = TlsServer(tmp_path, replies=[too_large])
    try:
        d = DriverClient(f"https://127.0.0.1:{s.port}", DriverSecret("s3cr3t" * 8, s.fingerprint), timeout=5)
        kv = KeyValueStore(lambda method, path, **kw: d.call(method, path, **kw))
        with pytest.raises(TooLargeError) as e:
            kv.put("a/b", "välue")
        assert e.value.status == 413 and "nothing stored" in e.value.message
        req = s.received[0]
        assert req.startswith(b"PUT /v1/kv/a%2Fb HTTP/1.1")
        assert b"Content-Type: text/plain; charset=utf-8" in req
    finally:
        s.close()
