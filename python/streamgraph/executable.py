"""Executables: a graph planned once and launched many times, on CUDA
streams, as one CUDA Graph, or on host threads."""
import ctypes

from . import _lib
from . import callbacks
from .errors import check
from .memory import backend_code

_MODES = {"streams": 0, "graph": 1}
_BUILDS = {"explicit": 0, "capture": 1}
_POLICIES = {"auto": 0, "stage": 1, "register": 2, "none": 3}
_BACKEND_NAMES = {_lib.BACKEND_CUDA: "cuda", _lib.BACKEND_HOST: "host"}


def _choice(table, value, what):
    try:
        return table[value]
    except KeyError:
        raise ValueError("streamgraph: %s must be one of %s, not %r" % (what, sorted(table), value))


def exec_options(backend="auto", mode="streams", build="explicit", max_streams=0, device=0,
                 trace=False, staging=None):
    """sg_exec_options from keywords. ``staging``: a dict of sg_staging_options
    fields (policy: "auto", "stage", "register" or "none"; chunk_bytes,
    ring_depth, copy_threads, auto_min_bytes, auto_register_after)."""
    o = _lib.sg_exec_options()
    _lib.sg_exec_options_init(ctypes.byref(o))
    o.backend = backend_code(backend)
    o.mode = _choice(_MODES, mode, "mode")
    o.build = _choice(_BUILDS, build, "build")
    o.max_streams = int(max_streams)
    o.device = int(device)
    o.trace = 1 if trace else 0
    for key, value in (staging or {}).items():
        if key == "policy":
            o.staging.policy = _choice(_POLICIES, value, "staging policy")
        elif key in ("chunk_bytes", "ring_depth", "copy_threads", "auto_min_bytes",
                     "auto_register_after"):
            setattr(o.staging, key, int(value))
        else:
            raise ValueError("streamgraph: unknown staging option %r" % (key,))
    return o


def stream_handle(stream):
    """A cudaStream_t from None, "legacy", an int, a torch.cuda.Stream
    (``cuda_stream``) or a CuPy stream (``ptr``)."""
    if stream is None:
        return None
    if isinstance(stream, str):
        if stream == "legacy":
            return _lib.STREAM_LEGACY
        raise ValueError("streamgraph: stream must be None, 'legacy', an int or a stream object")
    if isinstance(stream, int):
        return stream or None
    for attr in ("cuda_stream", "ptr", "handle"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr)) or None
    raise TypeError("streamgraph: cannot get a cudaStream_t from %s" % type(stream).__name__)


_EXEC_SET = {"copy": (_lib.sg_exec_set_copy, "sg_exec_set_copy"),
             "kernel": (_lib.sg_exec_set_kernel, "sg_exec_set_kernel"),
             "memset": (_lib.sg_exec_set_memset, "sg_exec_set_memset"),
             "host": (_lib.sg_exec_set_host, "sg_exec_set_host")}


class Exec:
    """An executable of a graph. Keywords: ``backend`` ("auto", "cuda",
    "host"), ``mode`` ("streams" or "graph"), ``build`` ("explicit" or
    "capture"), ``max_streams``, ``device``, ``trace``, ``staging`` (dict).

    The executable snapshots the graph: later changes to the graph do not
    reach it; ``set_*`` change its own nodes (in place in graph mode) and
    ``update(graph)`` re-applies an edited graph."""

    def __init__(self, graph, _handle=None, _owned=True, **options):
        self._owned = _owned
        if _handle is not None:
            self._h = ctypes.c_void_p(_handle)
        else:
            o = exec_options(**options)
            h = ctypes.c_void_p()
            check(_lib.sg_exec_create(graph.handle, ctypes.byref(o), ctypes.byref(h)),
                  "sg_exec_create")
            self._h = h
        # The nodes' parameters as this executable has them, and what they
        # point at (kept alive while the executable may run them).
        self._graph_id = id(graph)
        self._specs = {n.index: n.spec for n in graph.nodes}
        self._nodes = list(graph.nodes)

    @property
    def handle(self):
        if not self._h:
            raise ValueError("streamgraph: the executable was destroyed")
        return self._h

    def launch(self, stream=None):
        """Launches once, asynchronously, ordered after the work already in
        ``stream`` (and the stream's later work after it)."""
        callbacks.check_call(_lib.sg_exec_launch(self.handle, stream_handle(stream)),
                             "sg_exec_launch")

    def wait(self):
        """Blocks until every launch so far has finished (the GIL is released)."""
        callbacks.check_call(_lib.sg_exec_wait(self.handle), "sg_exec_wait")

    def run(self, stream=None):
        """launch() then wait()."""
        self.launch(stream)
        self.wait()

    def done(self):
        """True when idle; raises the failure of a failed launch."""
        return callbacks.check_call(_lib.sg_exec_query(self.handle),
                                    "sg_exec_query") == _lib.SG_OK

    @property
    def info(self):
        i = _lib.sg_exec_info()
        check(_lib.sg_exec_get_info(self.handle, ctypes.byref(i)), "sg_exec_get_info")
        return {"backend": _BACKEND_NAMES.get(i.backend, i.backend),
                "mode": {v: k for k, v in _MODES.items()}[i.mode],
                "build": {v: k for k, v in _BUILDS.items()}[i.build], "device": i.device,
                "node_count": i.node_count, "stream_count": i.stream_count,
                "event_count": i.event_count, "wait_count": i.wait_count}

    @property
    def stats(self):
        s = _lib.sg_exec_stats()
        check(_lib.sg_exec_get_stats(self.handle, ctypes.byref(s)), "sg_exec_get_stats")
        return {name: getattr(s, name) for name, _ in s._fields_}

    def _node(self, node):
        if node.index not in self._specs or self._nodes[node.index] is not node:
            raise ValueError("streamgraph: %r is not a node of this executable's graph" % (node,))
        return self._specs[node.index]

    def _set(self, node, spec):
        fn, call = _EXEC_SET[node.kind]
        d = spec.desc()
        check(fn(self.handle, node.handle, ctypes.byref(d)), call)
        self._specs[node.index] = spec

    def set_kernel(self, node, **changes):
        """Changes a kernel node (args, grid, block, shared_bytes, kernel) for
        the launches that follow: in place, without re-planning. Arguments
        bound to temporaries keep pointing at them."""
        spec = self._node(node)
        if changes.get("args") is not None:
            from .buffers import split_temp_args
            k = changes.get("kernel") or spec.kernel
            changes["args"], _ = split_temp_args(k, list(changes["args"]))
        self._set(node, spec.replaced(**changes))

    def temp_address(self, temp):
        """The address of ``temp`` (a Temp of the graph) in this executable's
        arena: fixed for its life, until an update re-plans the topology."""
        from .buffers import _require
        p = ctypes.c_void_p()
        check(_require(_lib.sg_exec_get_temp, "sg_exec_get_temp")(
            self.handle, temp.handle, ctypes.byref(p)), "sg_exec_get_temp")
        return p.value or 0

    @property
    def memory(self):
        """The temporaries' arena: temp_count, arena_bytes, no_reuse_bytes
        (what each in its own bytes would take), dag_order (1: reuse follows
        the graph's edges alone, as a CUDA graph built from them runs)."""
        from .buffers import _require
        m = _lib.sg_exec_memory()
        check(_require(_lib.sg_exec_get_memory, "sg_exec_get_memory")(
            self.handle, ctypes.byref(m)), "sg_exec_get_memory")
        return {"temp_count": m.temp_count, "arena_bytes": m.arena_bytes,
                "no_reuse_bytes": m.no_reuse_bytes, "dag_order": bool(m.dag_order)}

    def set_copy(self, node, dst=None, src=None, nbytes=None):
        self._set(node, self._node(node).replaced(dst=dst, src=src, nbytes=nbytes))

    def set_memset(self, node, value=None, dst=None, count=None):
        self._set(node, self._node(node).replaced(value=value, dst=dst, count=count))

    def set_host(self, node, fn):
        self._set(node, self._node(node).replaced(fn))

    def update(self, graph):
        """Re-applies an edited graph: in place when the topology is the same,
        else re-planned (stats()["rebuilds"] counts those)."""
        check(_lib.sg_exec_update(self.handle, graph.handle), "sg_exec_update")
        self._graph_id = id(graph)
        self._specs = {n.index: n.spec for n in graph.nodes}
        self._nodes = list(graph.nodes)

    def write_trace(self, path):
        """The last traced launch as Chrome trace JSON (needs trace=True)."""
        check(_lib.sg_exec_write_trace(self.handle, str(path).encode()), "sg_exec_write_trace")

    def write_trace_svg(self, path):
        """The kept launches as an SVG timeline (needs trace=True): open it in
        a web browser; hovering over a bar shows its node and times."""
        if _lib.sg_exec_write_trace_svg is None:
            raise NotImplementedError("this library has no sg_exec_write_trace_svg")
        check(_lib.sg_exec_write_trace_svg(self.handle, str(path).encode()),
              "sg_exec_write_trace_svg")

    def destroy(self):
        """Waits for launches in flight, then frees the executable."""
        if self._h and self._owned:
            _lib.sg_exec_destroy(self._h)
        self._h = ctypes.c_void_p()

    def __del__(self):
        try:
            self.destroy()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.destroy()
