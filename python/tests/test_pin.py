"""The pin against a local TLS server whose self-signed certificate `openssl` makes at test
time (skipped without openssl): the right pin talks, a wrong one is refused after the
handshake with nothing sent."""

import hashlib
import shutil
import socket
import ssl
import subprocess
import threading

import pytest

from yarn_am import DriverSecret, PinMismatchError
from yarn_am.driver import DriverClient

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")


class TlsServer:
    def __init__(self, tmp_path):
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
                self.received.append(data)
                if data:
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
