"""Every error the client raises is a :class:`YarnAmError`; each subclass names what went
wrong. No message, ``repr`` or attribute of these ever holds the driver secret."""

from __future__ import annotations

from typing import Optional


class YarnAmError(Exception):
    """Base class of every error of this package."""


class ConfigError(YarnAmError):
    """The client cannot find what it needs: no ResourceManager address, no ``yarn-am``
    binary, an unsupported setting (e.g. Kerberos)."""


class InvalidArgument(YarnAmError, ValueError):
    """A call was given something it cannot use (a bad job, conflicting options)."""


class SecretFileError(YarnAmError):
    """The driver secret file ``~/.yarn-am/<app>.secret`` is missing, unreadable or
    malformed. The message names the file and the line, never a value."""

    def __init__(self, message: str, path: Optional[str] = None):
        self.path = path
        super().__init__(f"{message} ({path})" if path else message)


class PinMismatchError(YarnAmError):
    """The driver API's TLS certificate is not the one pinned in the secret file: another
    process answers on that address (a stale URL, a port taken over), or the secret belongs to
    another application. Raised after the handshake and before any byte of the request (so
    the Bearer secret never reaches that peer)."""

    def __init__(self, address: str, expected: str, seen: str):
        self.address = address
        self.expected = expected
        self.seen = seen
        super().__init__(
            f"the driver API at {address} has a certificate with SHA-256 {seen}, not the "
            f"pinned {expected}: this is not the ApplicationMaster the secret is for"
        )


class UnreachableError(YarnAmError, ConnectionError):
    """A service (the AM's driver API, the RM, a NodeManager) could not be reached or did
    not answer in time."""

    def __init__(self, what: str, address: str, cause: object):
        self.what = what
        self.address = address
        super().__init__(f"{what} at {address} cannot be reached: {cause}")


class HttpStatusError(YarnAmError):
    """A service answered with an HTTP error status: ``method``, ``target`` (the driver API's
    path, or the RM's URL), ``status`` and ``message`` (the service's own words)."""

    #: how the message names the service ("" for the driver API)
    service = ""

    def __init__(self, method: str, target: str, status: int, message: str):
        self.method = method
        self.target = target
        self.status = status
        self.message = message
        prefix = f"{self.service} " if self.service else ""
        super().__init__(f"{prefix}{method} {target}: HTTP {status}: {message}")


class DriverApiError(HttpStatusError):
    """The driver API answered with an error status; ``message`` is its ``{"error": ...}``,
    ``target`` (also ``path``) the path called."""

    @property
    def path(self) -> str:
        return self.target


class AuthenticationError(DriverApiError):
    """401: the AM refused the secret (a secret of another application, or a version 1 file
    read by an AM that wants version 2)."""


class BadRequestError(DriverApiError):
    """400: the AM refused the request; the message names the field."""


class NotFoundError(DriverApiError):
    """404: no such executor, no embedded job, or an executor no longer kept."""


class TooLargeError(DriverApiError):
    """413: over a limit (a key-value store value, key count or total size); nothing was
    stored."""


class UnavailableError(DriverApiError):
    """503: the AM is not taking commands (it is shutting down, or busy)."""


class RmError(HttpStatusError):
    """The ResourceManager's REST API answered with an error (unknown application, refused
    kill, authentication required); ``target`` (also ``url``) is the URL called."""

    service = "ResourceManager"

    @property
    def url(self) -> str:
        return self.target


class SubmitError(YarnAmError):
    """``yarn-am submit`` failed; ``stderr`` is what it said, ``returncode`` its exit code
    (2: yarn-am itself could not do it, as the message names)."""

    def __init__(self, returncode: Optional[int], stderr: str, stdout: str = ""):
        self.returncode = returncode
        self.stderr = stderr
        self.stdout = stdout
        said = stderr.strip() or stdout.strip() or "(no output)"
        super().__init__(f"yarn-am submit failed (exit {returncode}): {said}")


class ApplicationNotRunning(YarnAmError):
    """The application has ended (or has not got an AM yet), so its driver API cannot be
    reached. ``status`` is the RM's report."""

    def __init__(self, app_id: str, status: object, message: str):
        self.app_id = app_id
        self.status = status
        super().__init__(f"{app_id}: {message}")


class WaitTimeout(YarnAmError, TimeoutError):
    """A wait ran out of time; ``last`` is the last thing seen (e.g. the app's status)."""

    def __init__(self, what: str, seconds: float, last: object = None):
        self.what = what
        self.seconds = seconds
        self.last = last
        tail = f"; last seen: {last}" if last is not None else ""
        super().__init__(f"timed out after {seconds:g} s waiting for {what}{tail}")
