"""Graphs: a DAG of copy, kernel, memset, host and empty nodes, built in
Python and turned into executables (``Graph.compile``)."""
import copy
import ctypes
import operator

from . import _lib
from . import buffers as _buffers
from . import callbacks
from .errors import check
from .kernel import Kernel, dim3
from .memory import pointer


class Node:
    """A node of a graph: its handle, index, kind and name, and the Python
    side of its parameters (what updates start from)."""
    __slots__ = ("handle", "index", "kind", "name", "spec", "graph_id")

    def __init__(self, handle, kind, name, spec, graph_id):
        self.handle = handle
        self.index = _lib.sg_node_index(handle)
        self.kind = kind
        self.name = name
        self.spec = spec
        self.graph_id = graph_id

    def __repr__(self):
        return "Node(#%d %s%s)" % (self.index, self.kind, " %r" % self.name if self.name else "")


def _name(name):
    return name.encode() if isinstance(name, str) else name


def _deps(after):
    if after is None:
        return None, 0
    if isinstance(after, Node):
        after = [after]
    after = list(after)
    arr = (_lib.sg_node * max(len(after), 1))(*[n.handle for n in after])
    return arr, len(after)


def copy_nbytes(dst, src, nbytes):
    if nbytes is not None:
        return int(nbytes)
    sizes = [p.nbytes for p in (dst, src) if p.nbytes is not None]
    if not sizes:
        raise ValueError("streamgraph: give nbytes: neither side of the copy has a known size")
    if len(sizes) == 2 and sizes[0] != sizes[1]:
        raise ValueError("streamgraph: the copy's sides differ in size (%d and %d bytes); "
                         "give nbytes" % (sizes[0], sizes[1]))
    return sizes[0]


# Each spec builds its C descriptor; the descriptor and what it points to
# live as long as the returned tuple's second element.
class CopySpec:
    kind = "copy"

    def __init__(self, dst, src, nbytes, name):
        td, ts = _buffers.temp_side(dst), _buffers.temp_side(src)
        self.dst = td[0] if td else pointer(dst, writable=True)
        self.src = ts[0] if ts else pointer(src)
        self.temps = (td[1] if td else None, ts[1] if ts else None)
        self.nbytes = copy_nbytes(self.dst, self.src, nbytes)
        self.name = name

    def desc(self):
        return _lib.sg_copy_desc(self.dst.address, self.src.address, self.nbytes,
                                 _lib.COPY_AUTO, _name(self.name))

    def refs(self):
        return (self.dst.owner, self.src.owner)

    def replaced(self, dst=None, src=None, nbytes=None):
        s = CopySpec.__new__(CopySpec)
        s.temps = self.temps  # a temporary's side stays the temporary
        s.dst = pointer(dst, writable=True) if dst is not None and not s.temps[0] else self.dst
        s.src = pointer(src) if src is not None and not s.temps[1] else self.src
        s.nbytes = copy_nbytes(s.dst, s.src, nbytes) if (nbytes is not None or dst is not None
                                                           or src is not None) else self.nbytes
        s.name = self.name
        return s


class KernelSpec:
    kind = "kernel"

    def __init__(self, kernel, grid, block, args, shared_bytes, name):
        if not isinstance(kernel, Kernel):
            raise TypeError("streamgraph: a kernel node needs a Kernel (Module.kernel or "
                            "streamgraph.Kernel), not %s" % type(kernel).__name__)
        self.kernel = kernel
        self.grid = dim3(grid, "grid")
        self.block = dim3(block, "block")
        self.args = kernel.pack(args)
        self.shared_bytes = int(shared_bytes)
        self.name = name if name is not None else kernel.name

    def desc(self):
        k = self.kernel
        return _lib.sg_kernel_desc(
            k.func, k.func_kind, self.grid, self.block, self.shared_bytes,
            ctypes.cast(self.args.ptrs, ctypes.POINTER(ctypes.c_void_p)),
            ctypes.cast(self.args.sizes, ctypes.POINTER(ctypes.c_size_t)), self.args.count,
            k.host_twin_address, _name(self.name))

    grid_words = None  # the Pointer of Graph.bind_grid's words, kept alive here

    def refs(self):
        return (self.kernel, self.args, self.grid_words)

    def replaced(self, args=None, grid=None, block=None, shared_bytes=None, kernel=None):
        s = KernelSpec.__new__(KernelSpec)
        s.kernel = kernel if kernel is not None else self.kernel
        s.grid = dim3(grid, "grid") if grid is not None else self.grid
        s.block = dim3(block, "block") if block is not None else self.block
        s.args = s.kernel.pack(args) if args is not None else self.args
        s.shared_bytes = int(shared_bytes) if shared_bytes is not None else self.shared_bytes
        s.name = self.name
        s.grid_words = self.grid_words  # the library keeps the binding too
        return s


class MemsetSpec:
    kind = "memset"

    def __init__(self, dst, value, count, element_size, name):
        td = _buffers.temp_side(dst)
        self.dst = td[0] if td else pointer(dst, writable=True)
        self.temp = td[1] if td else None
        self.value = int(value)
        self.element_size = int(element_size)
        if count is None:
            if self.dst.nbytes is None:
                raise ValueError("streamgraph: give count: the destination's size is unknown")
            count = self.dst.nbytes // self.element_size
        self.count = int(count)
        self.name = name

    def desc(self):
        return _lib.sg_memset_desc(self.dst.address, self.value, self.element_size, self.count,
                                   _name(self.name))

    def refs(self):
        return (self.dst.owner,)

    def replaced(self, value=None, dst=None, count=None):
        if self.temp:  # the destination stays the temporary
            dst = None
        s = MemsetSpec(dst if dst is not None else self.dst,
                       self.value if value is None else value,
                       count if count is not None else (self.count if dst is None else None),
                       self.element_size, self.name)
        s.temp = self.temp
        return s


class HostSpec:
    kind = "host"

    def __init__(self, fn, name):
        if not callable(fn):
            raise TypeError("streamgraph: a host node needs a callable")
        self.fn = fn
        self.c_fn = callbacks.host_callback(fn)
        self.name = name

    def desc(self):
        return _lib.sg_host_desc(ctypes.cast(self.c_fn, ctypes.c_void_p), None, _name(self.name))

    def refs(self):
        return (self.fn, self.c_fn)

    def replaced(self, fn):
        return HostSpec(fn, self.name)


class CondSpec:
    """A conditional node: its kind, condition and body graphs (which the
    spec keeps alive with their nodes' Python objects, for executables)."""
    kind = "conditional"

    def __init__(self, cond_kind, cond, bodies, name):
        self.cond_kind, self.cond, self.bodies, self.name = cond_kind, cond, bodies, name

    def refs(self):
        return tuple(self.bodies)


class Cond:
    """A condition of a top-level graph (``Graph.cond``): a 32-bit value that
    IF, WHILE and SWITCH nodes read, set by kernels (``Graph.bind_cond``) or
    by host nodes (``Cond.set``, from the callback, host backend)."""
    __slots__ = ("handle", "default", "reset")

    def __init__(self, handle, default, reset):
        self.handle, self.default, self.reset = handle, default, reset

    def set(self, value):
        """Sets the condition for the launch running this host callback."""
        check(_lib.sg_cond_set_host(self.handle, int(value)), "sg_cond_set_host")


IF, WHILE, SWITCH = 0, 1, 2
_COND_KINDS = {"if": IF, "while": WHILE, "switch": SWITCH, IF: IF, WHILE: WHILE, SWITCH: SWITCH}


def _require_cond(fn, name):
    from .buffers import _require
    return _require(fn, "%s (conditional nodes)" % name)


class EmptySpec:
    kind = "empty"

    def __init__(self, name):
        self.name = name

    def refs(self):
        return ()


_ADD = {"copy": (_lib.sg_graph_add_copy, "sg_graph_add_copy"),
        "kernel": (_lib.sg_graph_add_kernel, "sg_graph_add_kernel"),
        "memset": (_lib.sg_graph_add_memset, "sg_graph_add_memset"),
        "host": (_lib.sg_graph_add_host, "sg_graph_add_host")}
_GRAPH_SET = {"copy": (_lib.sg_graph_set_copy, "sg_graph_set_copy"),
              "kernel": (_lib.sg_graph_set_kernel, "sg_graph_set_kernel"),
              "memset": (_lib.sg_graph_set_memset, "sg_graph_set_memset"),
              "host": (_lib.sg_graph_set_host, "sg_graph_set_host")}


class Graph:
    """A DAG of nodes. Each ``add`` method takes ``after`` (a node or a list
    of nodes that must finish first) and ``name``, and returns the new Node.
    Objects whose memory a node points at are kept alive by the graph (and by
    executables made from it)."""

    def __init__(self):
        h = ctypes.c_void_p()
        check(_lib.sg_graph_create(ctypes.byref(h)), "sg_graph_create")
        self._h = h
        self.nodes = []

    @property
    def handle(self):
        if not self._h:
            raise ValueError("streamgraph: the graph was destroyed")
        return self._h

    def _add(self, spec, after):
        deps, count = _deps(after)
        self._own(after)
        out = _lib.sg_node()
        if spec.kind == "empty":
            check(_lib.sg_graph_add_empty(self.handle, _name(spec.name), deps, count,
                                          ctypes.byref(out)), "sg_graph_add_empty")
        elif spec.kind == "copy" and any(spec.temps):
            _buffers.add_copy_temp(self, spec.desc(), spec.temps[0], spec.temps[1], deps, count,
                                   ctypes.byref(out))
        elif spec.kind == "memset" and spec.temp:
            _buffers.add_memset_temp(self, spec.desc(), spec.temp, deps, count, ctypes.byref(out))
        else:
            fn, call = _ADD[spec.kind]
            d = spec.desc()
            check(fn(self.handle, ctypes.byref(d), deps, count, ctypes.byref(out)), call)
        node = Node(out, spec.kind, spec.name, spec, id(self))
        self.nodes.append(node)
        return node

    def _own(self, nodes):
        if nodes is None:
            return
        for n in [nodes] if isinstance(nodes, Node) else nodes:
            if not isinstance(n, Node) or n.graph_id != id(self) or \
                    n.index >= len(self.nodes) or self.nodes[n.index] is not n:
                raise ValueError("streamgraph: %r is not a node of this graph" % (n,))

    def copy(self, dst, src, nbytes=None, after=None, name=None):
        """dst <- src: device, pinned or pageable memory on either side; a
        pageable side (a NumPy array) goes through pinned staging."""
        return self._add(CopySpec(dst, src, nbytes, name), after)

    def kernel(self, kernel, grid, block, args=(), shared_bytes=0, after=None, name=None):
        """A launch of ``kernel`` (a Kernel) with ``args`` (captured by value now).
        A Temp (or ``temp[a:b]``) among ``args`` passes the temporary's
        address in each executable (``bind``); declare the node's access to it
        with ``access``."""
        plain, binds = _buffers.split_temp_args(kernel, list(args)) if isinstance(
            kernel, Kernel) else (args, [])
        node = self._add(KernelSpec(kernel, grid, block, plain, shared_bytes, name), after)
        for i, temp, offset in binds:
            self.bind(node, i, temp, offset)
        return node

    # ---- declared access and planned temporaries (docs/buffers.md) ----------

    def temp(self, shape, dtype="float32", alignment=0, name=None):
        """A planned temporary of ``shape`` (an int or a tuple) elements of
        ``dtype``: memory this graph owns whose contents live only within a
        launch. Each executable places it in its arena."""
        return _buffers.make_temp(self, shape, dtype, alignment, name)

    def access(self, node, reads=(), writes=(), updates=(), accumulates=()):
        """Declares what ``node`` reads, writes, or reads and writes
        (``updates``), and where it accumulates commutatively (atomics: such
        writes run together). Each item: a Temp, ``temp[a:b]`` (bytes), or
        memory ``streamgraph.pointer`` takes (a NumPy or torch array, a
        DeviceArray). Nodes are then ordered in creation order wherever
        their declarations conflict."""
        self._own(node)
        # Only addresses are compared, but the objects are kept while the
        # graph lives, so that one freed and another allocated at its address
        # cannot stand for it.
        self.__dict__.setdefault("_access_refs", []).extend(
            _buffers.declare(self, node, reads, writes, updates, accumulates))

    def bind(self, node, arg, temp, offset=0):
        """Kernel argument ``arg`` of ``node`` receives the address of byte
        ``offset`` of ``temp`` in every executable."""
        self._own(node)
        _buffers.bind(self, node, arg, temp, offset)

    @property
    def inferred_edge_count(self):
        """Edges declared accesses add (explicit ones not counted)."""
        n = ctypes.c_size_t()
        check(_buffers._require(_lib.sg_graph_inferred_edge_count,
                                "sg_graph_inferred_edge_count")(self.handle, ctypes.byref(n)),
              "sg_graph_inferred_edge_count")
        return n.value

    def memset(self, dst, value, count=None, element_size=4, after=None, name=None):
        """``count`` elements of ``element_size`` (1, 2 or 4) bytes set to ``value``
        (count defaults to the destination's size)."""
        return self._add(MemsetSpec(dst, value, count, element_size, name), after)

    def host(self, fn, after=None, name=None):
        """``fn()`` on a host thread when the dependencies are done; an
        exception (or a non-zero int returned) fails the launch."""
        return self._add(HostSpec(fn, name), after)

    def empty(self, after=None, name=None):
        """A join point that does nothing."""
        return self._add(EmptySpec(name), after)

    # ---- conditional nodes (docs/conditional.md) -----------------------------

    def cond(self, default=0, reset=True):
        """A condition of this (top-level) graph; ``reset``: set back to
        ``default`` at each launch, else kept from the last launch."""
        out = _lib.sg_cond()
        check(_require_cond(_lib.sg_graph_cond_create, "sg_graph_cond_create")(
            self.handle, int(default), 1 if reset else 0, ctypes.byref(out)),
            "sg_graph_cond_create")
        return Cond(out, default, reset)

    def conditional(self, kind, cond, bodies=1, after=None, name=None):
        """An IF (``bodies`` 1, or 2 with an ELSE), WHILE or SWITCH node
        (``kind`` "if", "while", "switch") reading ``cond``. Returns the node
        and its body graphs, which take the same ``add`` calls."""
        add = _require_cond(_lib.sg_graph_add_conditional, "sg_graph_add_conditional")
        if kind not in _COND_KINDS:
            raise ValueError("streamgraph: kind must be 'if', 'while' or 'switch', not %r" % (kind,))
        deps, count = _deps(after)
        self._own(after)
        d = _lib.sg_cond_node_desc(_COND_KINDS[kind], cond.handle, bodies, _name(name))
        out = _lib.sg_node()
        handles = (ctypes.c_void_p * max(bodies, 1))()
        check(add(self.handle, ctypes.byref(d), deps, count, ctypes.byref(out), handles),
              "sg_graph_add_conditional")
        body_graphs = [Graph._body(handles[i], self) for i in range(bodies)]
        node = Node(out, "conditional", name, CondSpec(kind, cond, body_graphs, name), id(self))
        self.nodes.append(node)
        return node, body_graphs

    def bind_cond(self, node, arg, cond):
        """Kernel argument ``arg`` of ``node`` (an ``sg_cond_ref``, 16 bytes)
        receives the reference to ``cond`` in every executable."""
        self._own(node)
        check(_require_cond(_lib.sg_graph_kernel_bind_cond, "sg_graph_kernel_bind_cond")(
            self.handle, node.handle, arg, cond.handle), "sg_graph_kernel_bind_cond")

    def bind_grid(self, node, arg, words):
        """Kernel ``node`` runs the grid an earlier node writes to ``words``:
        three uint32 (grid x, y, z) in memory the kernel's device reads
        (a DeviceArray or a CUDA array on CUDA; host-backend memory, e.g.
        ``sg.empty(3, "uint32", backend="host")``, on the host backend;
        anything ``streamgraph.pointer`` takes, or an int address). The
        node's declared grid is the bound: each dimension runs
        ``min(words[d], grid[d])`` blocks, none when a word is 0.

        Argument ``arg`` must have the type ``sg_grid_ref`` (24 bytes; pass
        ``sg_grid_ref()``): each executable fills it in. The rule, so that
        every mode computes the same: the kernel skips the blocks
        ``sg_grid_has_block`` refuses and uses ``sg_grid_live`` wherever it
        would use gridDim (a Python host twin: ``ref.has_block``,
        ``ref.live()`` or ``launch.grid``). Order the node after the words'
        writer (``after=``). ``set_kernel`` keeps the binding; binding again
        moves it. ``words`` is kept alive with the node."""
        self._own(node)
        fn = _require_cond(_lib.sg_graph_kernel_bind_grid, "sg_graph_kernel_bind_grid")
        arg = operator.index(arg)
        if arg < 0:
            raise ValueError("streamgraph: bind_grid: argument index %d is negative" % arg)
        p = pointer(words)
        if p.nbytes is not None and p.nbytes < 3 * ctypes.sizeof(ctypes.c_uint):
            raise ValueError("streamgraph: bind_grid: words holds %d bytes; it needs three "
                             "uint32 (grid x, y, z), 12 bytes" % p.nbytes)
        check(fn(self.handle, node.handle, arg, p.address), "sg_graph_kernel_bind_grid")
        # A new spec, not an edited one: executables made before keep the
        # spec (and words) they run.
        spec = copy.copy(node.spec)
        spec.grid_words = p
        node.spec = spec

    @classmethod
    def _body(cls, handle, parent):
        g = cls.__new__(cls)
        g._h = ctypes.c_void_p(handle)
        g.nodes = []
        g._parent = parent  # a body lives and dies with its top-level graph
        return g

    def edge(self, src, dst):
        """``dst`` starts after ``src`` finishes."""
        self._own([src, dst])
        check(_lib.sg_graph_add_edge(self.handle, src.handle, dst.handle), "sg_graph_add_edge")

    def _set(self, node, spec):
        fn, call = _GRAPH_SET[node.kind]
        d = spec.desc()
        check(fn(self.handle, node.handle, ctypes.byref(d)), call)
        node.spec = spec

    def set_kernel(self, node, **changes):
        """Changes a kernel node's parameters in the graph (args, grid, block,
        shared_bytes, kernel); executables made already are not affected.
        Arguments bound to temporaries keep their binding (give the Temp, or
        anything: its value is replaced)."""
        self._own(node)
        if changes.get("args") is not None:
            k = changes.get("kernel") or node.spec.kernel
            changes["args"], _ = _buffers.split_temp_args(k, list(changes["args"]))
        self._set(node, node.spec.replaced(**changes))

    def set_copy(self, node, **changes):
        self._own(node)
        self._set(node, node.spec.replaced(**changes))

    def set_memset(self, node, **changes):
        self._own(node)
        self._set(node, node.spec.replaced(**changes))

    def set_host(self, node, fn):
        self._own(node)
        self._set(node, node.spec.replaced(fn))

    @property
    def node_count(self):
        n = ctypes.c_size_t()
        check(_lib.sg_graph_node_count(self.handle, ctypes.byref(n)), "sg_graph_node_count")
        return n.value

    @property
    def edge_count(self):
        n = ctypes.c_size_t()
        check(_lib.sg_graph_edge_count(self.handle, ctypes.byref(n)), "sg_graph_edge_count")
        return n.value

    def validate(self):
        check(_lib.sg_graph_validate(self.handle), "sg_graph_validate")

    def compile(self, **options):
        """An executable of this graph (see ``Exec`` for the options)."""
        from .executable import Exec
        return Exec(self, **options)

    def destroy(self):
        if getattr(self, "_parent", None) is not None:
            return  # a body: destroyed with the graph that holds its node
        if self._h:
            _lib.sg_graph_destroy(self._h)
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
