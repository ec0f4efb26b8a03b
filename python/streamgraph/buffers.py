"""Declared access and planned temporaries (docs/buffers.md).

A node may say what memory it reads and writes; the library then orders
the nodes itself, in the order they were created (read after write, write
after read, write after write). A temporary is memory the graph owns whose
contents live only within a launch; each executable places its temporaries
in one arena, sharing bytes between those the plan never has live together.

    g = sg.Graph()
    h = g.temp((batch, 4096), "float32", name="hidden")     # NumPy-style shape
    k1 = g.kernel(GEMM, grid, block, [h, x, w, n])          # a Temp argument is bound
    g.access(k1, reads=[x, w], writes=[h])
    k2 = g.kernel(RELU, grid, block, [out, h, n])
    g.access(k2, reads=[h], writes=[out])                   # after k1: inferred
    e = g.compile()
    e.temp_address(h), e.memory["arena_bytes"]
"""
import ctypes

from . import _lib
from .errors import UnsupportedError, check
from .memory import pointer

try:
    import numpy as _np
except ImportError:  # pragma: no cover - NumPy is optional for this module
    _np = None


def _require(fn, what):
    if fn is None:
        raise UnsupportedError(_lib.STATUS.get("SG_ERR_UNSUPPORTED", -1),
                               "streamgraph: %s lacks %s (a library older than this package)"
                               % (_lib.path, what))
    return fn


def _itemsize(dtype):
    if _np is not None:
        return _np.dtype(dtype).itemsize
    sizes = {"float32": 4, "float64": 8, "int32": 4, "int64": 8, "uint8": 1, "int8": 1,
             "float16": 2, "bfloat16": 2, "uint32": 4, "int16": 2, "uint16": 2}
    if str(dtype) not in sizes:
        raise TypeError("streamgraph: unknown dtype %r (install NumPy for every dtype)"
                        % (dtype,))
    return sizes[str(dtype)]


class Temp:
    """A planned temporary of a graph: ``shape`` and ``dtype`` as NumPy (or
    torch) describe a tensor, ``nbytes`` its size. ``temp[a:b]`` is the byte
    range [a, b) of it, for a declaration that covers part of it."""

    def __init__(self, handle, shape, dtype, nbytes, name, graph_id):
        self.handle = handle
        self.shape = shape
        self.dtype = dtype
        self.nbytes = nbytes
        self.name = name
        self.graph_id = graph_id

    def __getitem__(self, s):
        if not isinstance(s, slice) or s.step not in (None, 1):
            raise TypeError("streamgraph: a temporary is sliced by bytes: temp[start:stop]")
        start, stop, _ = s.indices(self.nbytes)
        if stop <= start:
            raise ValueError("streamgraph: an empty byte range of %r" % (self,))
        return TempRange(self, start, stop - start)

    def __repr__(self):
        return "Temp(%r, shape=%r, dtype=%s, %d bytes)" % (self.name, self.shape, self.dtype,
                                                          self.nbytes)


class TempRange:
    """Bytes [offset, offset + nbytes) of a temporary."""

    def __init__(self, temp, offset, nbytes):
        self.temp, self.offset, self.nbytes = temp, offset, nbytes


def make_temp(graph, shape, dtype, alignment, name):
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(int(d) for d in shape)
    nbytes = _itemsize(dtype)
    for d in shape:
        if d <= 0:
            raise ValueError("streamgraph: a temporary's dimensions must be > 0, not %r"
                             % (shape,))
        nbytes *= d
    out = _lib.sg_temp()
    desc = _lib.sg_temp_desc(nbytes, int(alignment), None if name is None else name.encode())
    check(_require(_lib.sg_graph_add_temp, "sg_graph_add_temp")(
        graph.handle, ctypes.byref(desc), ctypes.byref(out)), "sg_graph_add_temp")
    return Temp(out, shape, str(dtype), nbytes, name, id(graph))


def _one(graph, item, mode, flags, refs):
    a = _lib.sg_access()
    a.mode = mode
    a.flags = flags
    if isinstance(item, Temp):
        item = TempRange(item, 0, 0)
    if isinstance(item, TempRange):
        if item.temp.graph_id != id(graph):
            raise ValueError("streamgraph: %r is a temporary of another graph" % (item.temp,))
        a.temp = item.temp.handle
        a.offset = item.offset
        a.bytes = item.nbytes
        return a
    p = pointer(item, writable=bool(mode & _lib.ACCESS_WRITE))
    if p.nbytes is None:
        raise ValueError("streamgraph: declaring an access to a bare address needs its size: "
                         "give (address, nbytes) through streamgraph.pointer, or an array")
    refs.append(p.owner)
    a.ptr = p.address
    a.bytes = p.nbytes
    return a


def declare(graph, node, reads, writes, updates, accumulates):
    refs = []
    accesses = []
    for items, mode, flags in ((reads, _lib.ACCESS_READ, 0), (writes, _lib.ACCESS_WRITE, 0),
                               (updates, _lib.ACCESS_READ_WRITE, 0),
                               (accumulates, _lib.ACCESS_READ_WRITE, _lib.ACCESS_COMMUTATIVE)):
        for item in ([items] if not isinstance(items, (list, tuple)) else items):
            accesses.append(_one(graph, item, mode, flags, refs))
    if not accesses:
        return refs
    arr = (_lib.sg_access * len(accesses))(*accesses)
    check(_require(_lib.sg_graph_declare_access, "sg_graph_declare_access")(
        graph.handle, node.handle, arr, len(accesses)), "sg_graph_declare_access")
    return refs


def bind(graph, node, arg, temp, offset=0):
    if isinstance(temp, TempRange):
        temp, offset = temp.temp, temp.offset + offset
    check(_require(_lib.sg_graph_bind_temp, "sg_graph_bind_temp")(
        graph.handle, node.handle, int(arg), temp.handle, int(offset)), "sg_graph_bind_temp")


def split_temp_args(kernel, args):
    """Kernel arguments with each Temp (or TempRange) replaced by a null
    pointer, and the (position, temp, offset) bindings that give it its
    address in every executable."""
    out, binds = [], []
    null = 0 if kernel.argtypes is not None else ctypes.c_void_p(0)
    for i, a in enumerate(args):
        if isinstance(a, Temp):
            binds.append((i, a, 0))
            out.append(null)
        elif isinstance(a, TempRange):
            binds.append((i, a.temp, a.offset))
            out.append(null)
        else:
            out.append(a)
    return out, binds


def temp_side(obj):
    """For a copy's or memset's side: (a null Pointer of the range's size,
    (temp, offset)) when ``obj`` is a Temp or a byte range of one, else None."""
    from .memory import Pointer
    if isinstance(obj, Temp):
        obj = TempRange(obj, 0, obj.nbytes)
    if isinstance(obj, TempRange):
        return Pointer(0, obj.nbytes, True, None), (obj.temp, obj.offset)
    return None


def add_copy_temp(graph, desc, dst, src, deps, count, out):
    zero = _lib.sg_temp()
    dt, doff = dst if dst else (None, 0)
    st, soff = src if src else (None, 0)
    fn = _require(_lib.sg_graph_add_copy_temp, "sg_graph_add_copy_temp")
    check(fn(graph.handle, ctypes.byref(desc), dt.handle if dt else zero, doff,
             st.handle if st else zero, soff, deps, count, out), "sg_graph_add_copy_temp")


def add_memset_temp(graph, desc, dst, deps, count, out):
    fn = _require(_lib.sg_graph_add_memset_temp, "sg_graph_add_memset_temp")
    check(fn(graph.handle, ctypes.byref(desc), dst[0].handle, dst[1], deps, count, out),
          "sg_graph_add_memset_temp")
