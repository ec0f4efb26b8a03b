"""Pipelines: one graph run over a stream of batches with several instances
in flight (see include/streamgraph/pipeline.h for the semantics)."""
import ctypes

from . import _lib
from . import callbacks
from .errors import StreamgraphError, check
from .executable import Exec, exec_options
from .kernel import arg_value
from .memory import pointer


class Bind:
    """One per-batch value: a copy's source or destination, a kernel
    argument, or a host node's data. Made by bind_src, bind_dst, bind_arg,
    bind_host."""
    __slots__ = ("kind", "node", "value", "arg", "nbytes")

    def __init__(self, kind, node, value, arg=0, nbytes=None):
        self.kind, self.node, self.value, self.arg, self.nbytes = kind, node, value, arg, nbytes


def bind_src(node, obj, nbytes=None):
    """The source of copy node `node` for this batch (a NumPy array, say)."""
    return Bind(_lib.BIND_COPY_SRC, node, obj, nbytes=nbytes)


def bind_dst(node, obj, nbytes=None):
    """The destination of copy node `node` for this batch."""
    return Bind(_lib.BIND_COPY_DST, node, obj, nbytes=nbytes)


def bind_arg(node, index, value):
    """Argument `index` of kernel node `node` (typed by the kernel's argtypes)."""
    return Bind(_lib.BIND_KERNEL_ARG, node, value, arg=index)


def bind_host(node, obj):
    """What host node `node`'s function receives for this batch: fn(obj)."""
    return Bind(_lib.BIND_HOST_DATA, node, obj)


def _host_side(node):
    spec = node.spec
    if node.kind != "copy":
        raise ValueError("streamgraph: %r is not a copy node; use bind_arg or bind_host" % (node,))
    if spec.src.device is False and spec.dst.device is not False:
        return _lib.BIND_COPY_SRC
    if spec.dst.device is False and spec.src.device is not False:
        return _lib.BIND_COPY_DST
    raise ValueError("streamgraph: copy node %r has no single host side; use bind_src or "
                     "bind_dst" % (node,))


def make_binds(binds):
    """A C array of sg_pipeline_bind and the objects it refers to. `binds`
    is a list of Bind or a dict {copy node: host array}."""
    if isinstance(binds, dict):
        binds = [Bind(_host_side(n), n, v) for n, v in binds.items()]
    binds = list(binds)
    arr = (_lib.sg_pipeline_bind * max(len(binds), 1))()
    refs = []
    for i, b in enumerate(binds):
        if not isinstance(b, Bind):
            raise TypeError("streamgraph: a batch's binds are Bind objects (bind_src, bind_dst, "
                            "bind_arg, bind_host), not %s" % type(b).__name__)
        c = arr[i]
        c.kind = b.kind
        c.node = b.node.handle
        if b.kind in (_lib.BIND_COPY_SRC, _lib.BIND_COPY_DST):
            if b.node.kind != "copy":
                raise ValueError("streamgraph: %r is not a copy node" % (b.node,))
            p = pointer(b.value, writable=b.kind == _lib.BIND_COPY_DST)
            # The copy keeps its size unless nbytes says otherwise; a buffer
            # known to be smaller than what the copy moves is refused here,
            # as the library cannot know the size of foreign memory.
            nbytes = int(b.nbytes) if b.nbytes is not None else b.node.spec.nbytes
            if p.nbytes is not None and p.nbytes < nbytes:
                raise ValueError("streamgraph: %r moves %d bytes but the bound buffer has %d"
                                 % (b.node, nbytes, p.nbytes))
            refs.append(p.owner)
            c.ptr = p.address
            c.bytes = nbytes if b.nbytes is not None else 0
        elif b.kind == _lib.BIND_KERNEL_ARG:
            if b.node.kind != "kernel":
                raise ValueError("streamgraph: %r is not a kernel node" % (b.node,))
            k = b.node.spec.kernel
            t = k.argtypes[b.arg] if k.argtypes is not None and b.arg < len(k.argtypes) else None
            v = arg_value(b.value, t, b.arg, k, refs)
            refs.append(v)
            c.ptr = ctypes.cast(ctypes.pointer(v), ctypes.c_void_p)
            c.bytes = ctypes.sizeof(v)
            c.arg = b.arg
        else:
            key = callbacks.hold(b.value)
            refs.append(_Held(key))
            c.ptr = key
    return arr, len(binds), refs


class _Held:
    """Releases a held object when the batch that used it is done."""
    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key

    def __del__(self):
        callbacks.release(self.key)


class Instance:
    """One instance, as setup and teardown receive it: ``index``, ``exec``
    (its Exec), ``data`` (yours), and ``bind`` to point its nodes at its own
    buffers."""

    def __init__(self, pipeline, c_instance):
        self._pipeline = pipeline
        self._c = c_instance
        self.index = c_instance.contents.index
        self.exec = Exec(pipeline._graph, _handle=c_instance.contents.exec, _owned=False)
        self.data = None

    def bind(self, binds):
        arr, n, refs = make_binds(binds)
        check(_lib.sg_pipeline_instance_bind(self._c, arr, n), "sg_pipeline_instance_bind")
        self._pipeline._instance_refs.append(refs)


class Pipeline:
    """A graph run over batches with ``depth`` instances, up to ``queue``
    batches in flight on each (``queue`` 1: no queue-ahead).

    ``setup(instance)`` is called once per instance (allocate its buffers,
    ``instance.bind`` them, keep them in ``instance.data``), ``teardown(instance)``
    when the pipeline is destroyed, ``on_complete(index, error, data)`` once per
    batch in order (``error`` is None or a StreamgraphError). Other keywords
    are the executable options (backend, mode, ...). Every callback runs on
    the thread calling into the pipeline."""

    def __init__(self, graph, depth=3, setup=None, teardown=None, on_complete=None, queue=2,
                 **options):
        self._graph = graph
        self._specs_graph = list(graph.nodes)  # node specs stay alive with the pipeline
        self._instances = {}
        self._instance_refs = []
        self._pending = set()  # held keys of batches not reported yet
        self._setup, self._teardown, self._on_complete = setup, teardown, on_complete
        o = _lib.sg_pipeline_options()
        _lib.sg_pipeline_options_init(ctypes.byref(o))
        o.depth = int(depth)
        o.queue = int(queue)
        o.exec = exec_options(**options)
        self._c_setup = _lib.setup_fn(self._setup_cb)
        self._c_teardown = _lib.teardown_fn(self._teardown_cb)
        self._c_complete = _lib.complete_fn(self._complete_cb)
        o.setup = ctypes.cast(self._c_setup, ctypes.c_void_p)
        o.teardown = ctypes.cast(self._c_teardown, ctypes.c_void_p)
        o.on_complete = ctypes.cast(self._c_complete, ctypes.c_void_p)
        h = ctypes.c_void_p()
        callbacks.check_call(_lib.sg_pipeline_create(graph.handle, ctypes.byref(o),
                                                     ctypes.byref(h)), "sg_pipeline_create")
        self._h = h

    # -- callbacks (on this thread, inside a pipeline call) -------------------
    def _setup_cb(self, c_instance, user):
        try:
            inst = Instance(self, c_instance)
            self._instances[inst.index] = inst
            if self._setup is not None:
                self._setup(inst)
            return 0
        except BaseException as e:  # noqa: B902
            callbacks.record(e, reported=True)
            return 1

    def _teardown_cb(self, c_instance, user):
        inst = self._instances.pop(c_instance.contents.index, None)
        try:
            if inst is not None and self._teardown is not None:
                self._teardown(inst)
        except BaseException as e:  # noqa: B902
            callbacks.record(e)

    def _complete_cb(self, batch, status, batch_data, user):
        record = callbacks.lookup(batch_data)
        callbacks.release(batch_data)
        self._pending.discard(batch_data)
        try:
            if self._on_complete is not None:
                err = None
                if status != _lib.SG_OK:
                    err = StreamgraphError(status, (_lib.sg_last_error() or b"").decode(
                        "utf-8", "replace"), "on_complete")
                self._on_complete(batch, err, record[1] if record else None)
        except BaseException as e:  # noqa: B902
            callbacks.record(e)

    # -- batches --------------------------------------------------------------
    @property
    def handle(self):
        if not self._h:
            raise ValueError("streamgraph: the pipeline was destroyed")
        return self._h

    def submit(self, binds=(), data=None, block=True):
        """Submits the next batch; returns its index. ``binds``: Bind objects,
        or a dict {copy node: host array} (the node's host side is bound).
        The arrays are kept alive until the batch is complete. With
        ``block=False``, returns None instead of waiting for an instance."""
        arr, n, refs = make_binds(binds)
        key = callbacks.hold((refs, data))
        batch = _lib.sg_pipeline_batch(arr, n, key)
        index = ctypes.c_uint64()
        fn = _lib.sg_pipeline_submit if block else _lib.sg_pipeline_try_submit
        code = fn(self.handle, ctypes.byref(batch), ctypes.byref(index))
        if code == _lib.SG_OK:
            self._pending.add(key)
        else:
            callbacks.release(key)
            if code == _lib.STATUS["SG_ERR_WOULD_BLOCK"] and not block:
                callbacks.check_call(_lib.SG_OK, "sg_pipeline_try_submit")
                return None
        callbacks.check_call(code, "sg_pipeline_submit")
        return index.value

    def poll(self):
        """Reports the batches that have completed, without waiting."""
        callbacks.check_call(_lib.sg_pipeline_poll(self.handle), "sg_pipeline_poll")

    def wait(self, index):
        """Waits until batch ``index`` is complete; raises its failure."""
        callbacks.check_call(_lib.sg_pipeline_wait(self.handle, index), "sg_pipeline_wait")

    def drain(self):
        """Waits for every batch submitted so far."""
        callbacks.check_call(_lib.sg_pipeline_drain(self.handle), "sg_pipeline_drain")

    @property
    def stats(self):
        s = _lib.sg_pipeline_stats()
        check(_lib.sg_pipeline_get_stats(self.handle, ctypes.byref(s)), "sg_pipeline_get_stats")
        out = {name: getattr(s, name) for name, _ in s._fields_}
        out["stopped"] = bool(out["stopped"])
        return out

    def destroy(self):
        """Waits for batches in flight (without reporting them), tears the
        instances down, frees everything."""
        if self._h:
            h, self._h = self._h, ctypes.c_void_p()
            _lib.sg_pipeline_destroy(h)
            self._instance_refs.clear()
            for key in self._pending:  # batches destroyed before being reported
                callbacks.release(key)
            self._pending.clear()

    def __del__(self):
        try:
            self.destroy()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.destroy()
