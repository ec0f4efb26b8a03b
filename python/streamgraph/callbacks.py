"""Python callables called from the library's threads.

ctypes takes the GIL around each call of a Python callback, and releases it
during every call into the library, so a host node runs while the thread that
launched it waits in ``Exec.wait()``. A callback that raises makes its node
fail (host nodes: SG_ERR_CALLBACK, naming the node); the exception is kept
and chained as the ``__cause__`` of the StreamgraphError that reports the
failure. Host twins cannot fail a launch, so their exceptions are raised by
the next ``wait()`` instead.
"""
import threading

from . import _lib
from .errors import StreamgraphError, check

_lock = threading.Lock()
_raised = []          # (exception, the library reports the failure), oldest first
_objects = {}         # id -> Python object passed through a C void* (host node data)
_next_id = [1]


def record(exc, reported=False):
    """Keeps what a callback raised. `reported`: the callback's failure
    reaches the library (a host node returning non-zero), which reports it
    in due course; otherwise (host twins, completion callbacks) the next
    call that checks raises it."""
    with _lock:
        _raised.append((exc, reported))


def check_call(code, call):
    """check() for calls that run callbacks: a failure gets the exception a
    callback raised as its cause; a success raises what an unreported
    callback raised."""
    with _lock:
        if code not in (_lib.SG_OK, _lib.SG_NOT_READY):
            raised = [e for e, _ in _raised]
            _raised.clear()
        else:
            raised = [e for e, reported in _raised if not reported]
            _raised[:] = [(e, r) for e, r in _raised if r]
    if code not in (_lib.SG_OK, _lib.SG_NOT_READY):
        check(code, call, raised[0] if raised else None)
    if raised:
        raise StreamgraphError(_lib.STATUS["SG_ERR_CALLBACK"],
                               "%s: a Python callback raised %r" % (call, raised[0]),
                               call) from raised[0]
    return code


def hold(obj):
    """A non-zero id standing for `obj` in a C void*, until release(id)."""
    with _lock:
        key = _next_id[0]
        _next_id[0] += 1
        _objects[key] = obj
    return key


def lookup(key):
    with _lock:
        return _objects.get(key)


def release(key):
    with _lock:
        obj = _objects.pop(key, None)
    # Dropped outside the lock: its finalizer may release keys of its own.
    del obj


def host_callback(fn):
    """The C function of a host node calling ``fn()`` (or ``fn(data)`` when
    the node's user data is set through a pipeline bind). Its return value is
    ignored; an exception fails the node."""
    def trampoline(user_data):
        try:
            fn() if not user_data else fn(lookup(user_data))
            return 0
        except BaseException as e:  # noqa: B902 - every failure must reach the caller
            record(e, reported=True)
            return 1
    return _lib.host_fn(trampoline)
