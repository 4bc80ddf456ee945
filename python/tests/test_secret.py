import os

import pytest

from yarn_am import DriverSecret, SecretFileError
from yarn_am.secret import parse_fingerprint, secret_path

PIN = "ab" * 32
SECRET = "5e" * 32


def test_version_2():
    s = DriverSecret.parse(f"yarn-am driver secret v2\nsecret {SECRET}\ntls-sha256 {PIN.upper()}\n")
    assert s.secret == SECRET and s.tls_pin == PIN
    assert SECRET not in repr(s)


def test_version_2_ignores_later_fields_and_takes_colons():
    pin = ":".join(["AB"] * 32)
    s = DriverSecret.parse(f"yarn-am driver secret v2\nsecret {SECRET}\ntls-sha256 {pin}\nclient-cert xyz\n")
    assert s.tls_pin == PIN


def test_version_1_is_the_secret_alone_without_a_pin():
    s = DriverSecret.parse("abc123")
    assert s.secret == "abc123" and s.tls_pin is None


@pytest.mark.parametrize(
    "text, says",
    [
        ("", "neither"),
        ("two words", "neither"),
        ("line1\nline2", "neither"),
        ("yarn-am driver secret v3\nsecret s3cr3t\n", "version"),
        ("yarn-am driver secret v2\nsecret s3cr3t\n", "no tls-sha256"),
        ("yarn-am driver secret v2\nsecret s3cr3t\ntls-sha256 12\n", "64 hex"),
        (f"yarn-am driver secret v2\ntls-sha256 {PIN}\n", "no secret"),
    ],
)
def test_malformed_files_are_refused_without_echoing_the_secret(text, says):
    with pytest.raises(SecretFileError) as e:
        DriverSecret.parse(text, "/x/app.secret")
    assert says in str(e.value)
    assert "s3cr3t" not in str(e.value) and "s3cr3t" not in repr(e.value)
    assert "/x/app.secret" in str(e.value)


def test_read_names_the_missing_file(tmp_path):
    with pytest.raises(SecretFileError, match="app_1_1.secret"):
        DriverSecret.read(tmp_path / "app_1_1.secret")


def test_secret_path_follows_the_cli(monkeypatch, tmp_path):
    monkeypatch.delenv("YARN_AM_SECRET_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert secret_path("application_1_2") == tmp_path / ".yarn-am" / "application_1_2.secret"
    monkeypatch.setenv("YARN_AM_SECRET_DIR", "/s")
    assert str(secret_path("application_1_2")) == os.path.join("/s", "application_1_2.secret")
    assert str(secret_path("application_1_2", "/o")) == os.path.join("/o", "application_1_2.secret")


def test_fingerprint_parsing():
    assert parse_fingerprint(" " + PIN.upper() + "\n") == PIN
    with pytest.raises(ValueError):
        parse_fingerprint("zz" * 32)
