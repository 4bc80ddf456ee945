"""yarn-am's Python client: submit applications whose ApplicationMaster is yarn-am, drive
their executors through the AM's driver API (HTTPS, the certificate pinned from
``~/.yarn-am/<app>.secret``), follow their events, read their logs.

>>> import yarn_am
>>> job = yarn_am.Job("hello", cores=1, memory_mb=256, max_executors=2)
>>> _ = job.task("t0", "echo hello from $NM_HOST")
>>> app = yarn_am.submit(job, webhdfs="http://namenode:9870")   # doctest: +SKIP
>>> app.wait().outcome                                           # doctest: +SKIP
'succeeded'
"""

from .app import Application
from .errors import (
    ApplicationNotRunning,
    AuthenticationError,
    BadRequestError,
    ConfigError,
    DriverApiError,
    HttpStatusError,
    InvalidArgument,
    NotFoundError,
    PinMismatchError,
    RmError,
    SecretFileError,
    SubmitError,
    TooLargeError,
    UnavailableError,
    UnreachableError,
    WaitTimeout,
    YarnAmError,
)
from .job import Executors, Inputs, Job, Task
from .kv import KeyValueStore, KvEntry
from .models import Executor, ExecutorEvent, KillOutcome, Resync, State
from .rm import AppStatus, ResourceManager
from .secret import DriverSecret
from .submit import submit

__version__ = "0.1.0"

__all__ = [
    "Application",
    "AppStatus",
    "ApplicationNotRunning",
    "AuthenticationError",
    "BadRequestError",
    "ConfigError",
    "DriverApiError",
    "DriverSecret",
    "Executor",
    "ExecutorEvent",
    "Executors",
    "HttpStatusError",
    "Inputs",
    "InvalidArgument",
    "Job",
    "KeyValueStore",
    "KvEntry",
    "KillOutcome",
    "NotFoundError",
    "PinMismatchError",
    "ResourceManager",
    "Resync",
    "RmError",
    "SecretFileError",
    "State",
    "SubmitError",
    "TooLargeError",
    "Task",
    "UnavailableError",
    "UnreachableError",
    "WaitTimeout",
    "YarnAmError",
    "submit",
]
