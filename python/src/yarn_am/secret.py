"""The driver secret file ``~/.yarn-am/<app>.secret`` that ``yarn-am submit`` writes (mode
0600), read as the CLI, the Spark plugin and the Rust tests read it
(``crates/wire/src/driver_secret.rs``).

Version 2::

    yarn-am driver secret v2
    secret <64 hex digits>
    tls-sha256 <64 hex digits>

Version 1 (before TLS) is the secret alone on one line: it reads, without a pin, and such an
AM serves plain HTTP. Unknown later fields of a version 2 file are ignored.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

from .errors import SecretFileError

HEADER_V2 = "yarn-am driver secret v2"

_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def parse_fingerprint(text: str) -> str:
    """A SHA-256 fingerprint as 64 lower-case hex digits, from upper or lower case, with or
    without ``:`` between the bytes. Raises ``ValueError``."""
    digits = text.strip().replace(":", "").lower()
    if not _HEX64.match(digits):
        raise ValueError("not 64 hex digits")
    return digits


@dataclass(frozen=True)
class DriverSecret:
    """What a driver needs to talk to its application's AM. ``repr`` hides the secret."""

    secret: str = field(repr=False)
    #: The SHA-256 of the AM's DER certificate (64 hex digits); ``None`` for a version 1 file.
    tls_pin: Optional[str] = None

    @classmethod
    def parse(cls, text: str, path: Optional[str] = None) -> "DriverSecret":
        lines = [l.strip() for l in text.splitlines()]
        lines = [l for l in lines if l]
        first = lines[0] if lines else ""
        if first != HEADER_V2:
            if first.startswith("yarn-am driver secret"):
                raise SecretFileError(
                    "the driver secret file has a version this client does not know "
                    "(written by a newer yarn-am?)",
                    path,
                )
            if not first or any(c.isspace() for c in first) or len(lines) > 1:
                raise SecretFileError(
                    "the driver secret file is malformed: neither a version 2 file nor a "
                    "single secret",
                    path,
                )
            return cls(secret=first, tls_pin=None)
        secret: Optional[str] = None
        pin: Optional[str] = None
        for line in lines[1:]:
            key, _, value = line.partition(" ")
            if key == "secret":
                secret = value.strip()
            elif key == "tls-sha256":
                try:
                    pin = parse_fingerprint(value)
                except ValueError:
                    raise SecretFileError(
                        "the driver secret file is malformed: tls-sha256 is not 64 hex digits",
                        path,
                    ) from None
            # Later fields: ignored, so that this reader reads a newer file.
        if not secret:
            raise SecretFileError("the driver secret file is malformed: no secret line", path)
        if pin is None:
            raise SecretFileError(
                "the driver secret file is malformed: no tls-sha256 line", path
            )
        return cls(secret=secret, tls_pin=pin)

    @classmethod
    def read(cls, path: Union[str, "os.PathLike[str]"]) -> "DriverSecret":
        p = os.fspath(path)
        try:
            with open(p, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise SecretFileError(
                f"reading the driver secret file: {e.strerror or e}", p
            ) from None
        except UnicodeDecodeError:
            raise SecretFileError("the driver secret file is not UTF-8 text", p) from None
        return cls.parse(text, p)


def secret_dir(override: Optional[Union[str, "os.PathLike[str]"]] = None) -> Path:
    """Where ``submit`` writes secrets: the given folder, else ``$YARN_AM_SECRET_DIR``, else
    ``$HOME/.yarn-am`` (``/tmp/.yarn-am`` without ``HOME``), as the CLI decides."""
    if override is not None:
        return Path(override)
    env = os.environ.get("YARN_AM_SECRET_DIR")
    if env:
        return Path(env)
    return Path(os.environ.get("HOME") or "/tmp") / ".yarn-am"


def secret_path(
    app_id: str, directory: Optional[Union[str, "os.PathLike[str]"]] = None
) -> Path:
    return secret_dir(directory) / f"{app_id}.secret"
