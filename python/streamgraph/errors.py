"""Errors: every failing call of the C library becomes a StreamgraphError
carrying the status and the library's message (what was wrong and where)."""
from . import _lib


class StreamgraphError(Exception):
    """A call of the C library failed.

    ``status`` is the status name ("SG_ERR_CYCLE"), ``code`` its value,
    ``message`` the library's message; ``str()`` gives both. When a Python
    callback (a host node, a host twin, a pipeline callback) raised, the
    exception it raised is chained as ``__cause__``.
    """

    def __init__(self, code, message, call=None):
        self.code = code
        self.status = (_lib.STATUS_NAMES[code] if 0 <= code < len(_lib.STATUS_NAMES)
                       else "SG_STATUS_%d" % code)
        self.message = message
        self.call = call
        super().__init__("%s: %s" % (self.status, message) if message else self.status)


class CompileError(StreamgraphError):
    """The run-time compiler rejected a source; ``log`` is its whole log."""

    def __init__(self, code, message, call=None, log=""):
        super().__init__(code, message, call)
        self.log = log


class UnsupportedError(StreamgraphError):
    """A valid request this build or backend cannot carry out (SG_ERR_UNSUPPORTED)."""


class BackendUnavailableError(StreamgraphError):
    """The backend asked for is not built, or no device is present."""


_CLASSES = {
    "SG_ERR_COMPILE": CompileError,
    "SG_ERR_UNSUPPORTED": UnsupportedError,
    "SG_ERR_BACKEND_UNAVAILABLE": BackendUnavailableError,
}


def error_for(code, call=None, **extra):
    """The exception for a status just returned on this thread."""
    message = (_lib.sg_last_error() or b"").decode("utf-8", "replace")
    name = _lib.STATUS_NAMES[code] if 0 <= code < len(_lib.STATUS_NAMES) else ""
    cls = _CLASSES.get(name, StreamgraphError)
    return cls(code, message, call, **extra) if extra else cls(code, message, call)


def check(code, call=None, cause=None):
    """Raises the library's error for a failing status; returns SG_OK and SG_NOT_READY."""
    if code == _lib.SG_OK or code == _lib.SG_NOT_READY:
        return code
    err = error_for(code, call)
    if cause is not None:
        raise err from cause
    raise err
