"""Memory: device and pinned buffers the library allocates, and the address
of anything a graph node may point at.

A node's pointer may be given as
- a ``DeviceArray`` (``empty``, ``to_device``): memory from ``sg_mem_alloc``;
- an object with ``__cuda_array_interface__`` (PyTorch tensors, CuPy arrays,
  Numba arrays) or with ``__dlpack__`` (the DLPack protocol): used in place,
  never copied;
- a NumPy array or any C-contiguous buffer: ordinary (pageable) host memory,
  which copies move through the library's pinned staging;
- a plain ``int`` address (the caller answers for it).

Strided (non-contiguous) arrays are refused: a copy node moves one
contiguous range of bytes.
"""
import ctypes

from . import _lib
from .errors import check

try:
    import numpy as _np
except ImportError:  # NumPy is needed only for arrays
    _np = None

_BACKENDS = {"auto": _lib.BACKEND_AUTO, "cuda": _lib.BACKEND_CUDA, "host": _lib.BACKEND_HOST}
_KINDS = {"device": _lib.MEMORY_DEVICE, "pinned": _lib.MEMORY_HOST_PINNED}


def backend_code(backend):
    try:
        return _BACKENDS[backend]
    except KeyError:
        raise ValueError("backend must be one of %s, not %r" % (sorted(_BACKENDS), backend))


def resolve_backend(backend="auto"):
    """"cuda" or "host": what ``backend`` ("auto", "cuda", "host") means in this process.

    For "auto", the environment variable SG_BACKEND decides as in C; a value
    this process cannot honour (one naming no backend, or "cuda" without a
    device) raises the library's error instead of choosing another backend."""
    code = _lib.sg_backend_resolve(backend_code(backend))
    if code == _lib.BACKEND_AUTO:
        from .errors import error_for
        message = (_lib.sg_last_error() or b"").decode("utf-8", "replace")
        name = ("SG_ERR_BACKEND_UNAVAILABLE" if "SG_BACKEND=cuda" in message
                else "SG_ERR_INVALID_ARGUMENT")
        raise error_for(_lib.STATUS[name], "sg_backend_resolve")
    return "cuda" if code == _lib.BACKEND_CUDA else "host"


def cuda_device_count():
    """CUDA devices usable by the library (0 without CUDA, driver or GPU)."""
    return _lib.sg_cuda_device_count()


class Pointer:
    """An address with what is known of it: its size in bytes (None when
    unknown), whether it is device memory, and the object that owns it (kept
    alive by whoever keeps the Pointer)."""
    __slots__ = ("address", "nbytes", "device", "owner")

    def __init__(self, address, nbytes, device, owner):
        self.address, self.nbytes, self.device, self.owner = address, nbytes, device, owner


def _contiguous_nbytes(shape, strides, itemsize):
    n = itemsize
    for s in shape:
        n *= s
    if strides is None:
        return n
    expect = itemsize
    for dim, stride in zip(reversed(shape), reversed(strides)):
        if dim != 1 and stride != expect:
            raise ValueError("streamgraph: the array is not C-contiguous (shape %r, strides %r); "
                             "make a contiguous copy first" % (tuple(shape), tuple(strides)))
        expect *= dim
    return n


def _from_cai(obj):
    cai = obj.__cuda_array_interface__
    address = cai["data"][0]
    itemsize = int(cai["typestr"][2:])
    nbytes = _contiguous_nbytes(cai["shape"], cai.get("strides"), itemsize)
    return Pointer(address, nbytes, True, obj)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13
_capsule_get = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_get.restype = ctypes.c_void_p
_capsule_get.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _from_dlpack(obj):
    device_type, _ = obj.__dlpack_device__()
    # The capsule stays unconsumed: its destructor hands the tensor back to
    # the producer, and `obj` (kept with the Pointer) owns the memory.
    capsule = obj.__dlpack__()
    t = ctypes.cast(_capsule_get(capsule, b"dltensor"), ctypes.POINTER(_DLTensor)).contents
    shape = [t.shape[i] for i in range(t.ndim)]
    strides = [t.strides[i] for i in range(t.ndim)] if t.strides else None
    itemsize = (t.dtype.bits * t.dtype.lanes + 7) // 8
    if strides is not None:  # DLPack strides count elements
        strides = [s * itemsize for s in strides]
    nbytes = _contiguous_nbytes(shape, strides, itemsize)
    address = (t.data or 0) + t.byte_offset
    return Pointer(address, nbytes, device_type in (_DL_CUDA, _DL_CUDA_MANAGED), obj)


def pointer(obj, writable=False):
    """The Pointer of anything a node may point at (see the module's text)."""
    if isinstance(obj, Pointer):
        return obj
    if isinstance(obj, DeviceArray):
        return Pointer(obj.address, obj.nbytes, obj.memory == "device", obj)
    if isinstance(obj, int) and not isinstance(obj, bool):
        return Pointer(obj, None, None, None)
    if hasattr(obj, "__cuda_array_interface__"):
        return _from_cai(obj)
    if _np is not None and isinstance(obj, _np.ndarray):
        if not obj.flags.c_contiguous:
            raise ValueError("streamgraph: the NumPy array is not C-contiguous; "
                             "use numpy.ascontiguousarray first")
        if writable and not obj.flags.writeable:
            raise ValueError("streamgraph: the NumPy array is read-only but is written here")
        return Pointer(obj.__array_interface__["data"][0], obj.nbytes, False, obj)
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        return _from_dlpack(obj)
    try:
        view = memoryview(obj)
    except TypeError:
        raise TypeError("streamgraph: cannot take the address of %s: give a DeviceArray, an "
                        "object with __cuda_array_interface__ or __dlpack__, a NumPy array, "
                        "a buffer, or an int address" % type(obj).__name__)
    if not view.c_contiguous:
        raise ValueError("streamgraph: the buffer is not C-contiguous")
    if view.readonly:
        raise TypeError("streamgraph: read-only buffers (bytes) cannot be pointed at; "
                        "use a bytearray or a NumPy array")
    c = (ctypes.c_char * view.nbytes).from_buffer(view)
    return Pointer(ctypes.addressof(c), view.nbytes, False, (obj, c))


class DeviceArray:
    """Memory from ``sg_mem_alloc``: device memory (or pinned host memory) of
    a backend. On the CUDA backend device memory exposes
    ``__cuda_array_interface__``, so ``torch.as_tensor(arr, device="cuda")``
    and ``cupy.asarray(arr)`` use it in place; on the host backend it is host
    memory the library treats as device memory, viewable with ``host_view``.
    Freed by ``free()``, a ``with`` block, or garbage collection.
    """

    def __init__(self, shape, dtype="float32", backend="auto", memory="device", device=0):
        if _np is None:
            raise ImportError("streamgraph: DeviceArray needs NumPy")
        self.shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self.dtype = _np.dtype(dtype)
        self.nbytes = int(_np.prod(self.shape, dtype=_np.int64)) * self.dtype.itemsize
        if self.nbytes <= 0:
            raise ValueError("streamgraph: an array needs at least one element")
        if memory not in _KINDS:
            raise ValueError("memory must be 'device' or 'pinned', not %r" % (memory,))
        self.memory = memory
        self.backend = resolve_backend(backend)
        self.device = device
        out = ctypes.c_void_p()
        self.address = 0
        check(_lib.sg_mem_alloc(backend_code(self.backend), _KINDS[memory], device,
                                self.nbytes, ctypes.byref(out)), "sg_mem_alloc")
        self.address = out.value

    @property
    def size(self):
        return self.nbytes // self.dtype.itemsize

    def free(self):
        if self.address:
            _lib.sg_mem_free(self.address)
            self.address = 0

    def __del__(self):
        try:
            self.free()
        except Exception:  # interpreter shutdown
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free()

    def _live(self):
        if not self.address:
            raise ValueError("streamgraph: the DeviceArray was freed")
        return self.address

    @property
    def __cuda_array_interface__(self):
        if self.backend != "cuda" or self.memory != "device":
            raise AttributeError("only CUDA device memory has __cuda_array_interface__")
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self._live(), False),
                "version": 3, "strides": None, "stream": None}

    def copy_from(self, src):
        """Copies a host array (same number of bytes) in, synchronously."""
        p = pointer(src)
        if p.nbytes is not None and p.nbytes != self.nbytes:
            raise ValueError("streamgraph: %d bytes do not fit a %d-byte array"
                             % (p.nbytes, self.nbytes))
        check(_lib.sg_mem_copy(self._live(), p.address, self.nbytes), "sg_mem_copy")
        return self

    def to_numpy(self):
        """A new NumPy array with the contents, copied synchronously."""
        out = _np.empty(self.shape, self.dtype)
        check(_lib.sg_mem_copy(out.ctypes.data, self._live(), self.nbytes), "sg_mem_copy")
        return out

    def host_view(self):
        """A NumPy view of memory the CPU can address (pinned memory, or any
        memory of the host backend). No copy: it is valid while the array is."""
        if self.backend == "cuda" and self.memory == "device":
            raise ValueError("streamgraph: CUDA device memory has no host view; use to_numpy()")
        return host_view(self._live(), self.dtype, self.shape)

    def __repr__(self):
        return "DeviceArray(shape=%r, dtype=%s, %s %s memory)" % (
            self.shape, self.dtype, self.backend, self.memory)


def empty(shape, dtype="float32", backend="auto", memory="device", device=0):
    """An uninitialised DeviceArray."""
    return DeviceArray(shape, dtype, backend, memory, device)


def to_device(array, backend="auto", device=0):
    """A DeviceArray holding a copy of a NumPy array."""
    a = _np.ascontiguousarray(array)
    return DeviceArray(a.shape, a.dtype, backend, "device", device).copy_from(a)


def host_view(address, dtype, shape):
    """A NumPy array over host-addressable memory at ``address`` (no copy):
    for host twins, which receive pointers as ints."""
    dtype = _np.dtype(dtype)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    n = int(_np.prod(shape, dtype=_np.int64)) * dtype.itemsize
    buf = (ctypes.c_char * n).from_address(address)
    return _np.frombuffer(buf, dtype=dtype).reshape(shape)
