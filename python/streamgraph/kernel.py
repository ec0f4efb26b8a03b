"""Kernels: a device function (a cudaKernel_t from a Module, or any address
the CUDA runtime launches), its argument types, and an optional host twin
run by the host backend."""
import collections
import ctypes

from . import _lib
from . import callbacks
from .memory import Pointer, pointer

try:
    import numpy as _np
except ImportError:
    _np = None

Launch = collections.namedtuple("Launch", "grid block shared_bytes")

_CTYPES = {
    "ptr": ctypes.c_void_p, "pointer": ctypes.c_void_p,
    "int8": ctypes.c_int8, "uint8": ctypes.c_uint8, "int16": ctypes.c_int16,
    "uint16": ctypes.c_uint16, "int32": ctypes.c_int32, "uint32": ctypes.c_uint32,
    "int64": ctypes.c_int64, "uint64": ctypes.c_uint64, "float32": ctypes.c_float,
    "float64": ctypes.c_double, "bool": ctypes.c_bool,
}


def ctype_of(t):
    """A ctypes type from "ptr", a NumPy dtype (or its name), or a ctypes type."""
    if isinstance(t, type) and issubclass(t, (ctypes._SimpleCData, ctypes.Structure)):
        return t
    if isinstance(t, str) and t in _CTYPES:
        return _CTYPES[t]
    if _np is not None:
        try:
            name = _np.dtype(t).name
        except TypeError:
            name = None
        if name in _CTYPES:
            return _CTYPES[name]
    raise TypeError("streamgraph: unknown argument type %r: use 'ptr', a NumPy dtype "
                    "('float32', numpy.int32...) or a ctypes type" % (t,))


def dim3(v, what):
    if isinstance(v, int):
        v = (v,)
    v = tuple(int(x) for x in v) + (1,) * (3 - len(v))
    if len(v) != 3:
        raise ValueError("streamgraph: %s must be an int or up to 3 ints, not %r" % (what, v))
    return _lib.sg_dim3(*v)


class Kernel:
    """A kernel as nodes use it.

    ``func``: the device function's address (``Module.kernel`` fills it; None
    when only the host backend will run it). ``argtypes``: one entry per
    argument ("ptr", a NumPy dtype, or a ctypes type); with it, plain Python
    ints and floats are converted, and without it every argument must carry
    its own type (a NumPy scalar, a ctypes value, or an array/pointer).
    ``host_twin``: what the host backend runs instead, either a C function
    (a ctypes function pointer) or a Python callable ``twin(launch, *args)``
    receiving pointers as ints (see ``host_view``), scalars as values and
    structures as copies of the ctypes structure (an ``sg_grid_ref``
    argument bound with ``Graph.bind_grid`` holds the live grid, which
    ``launch.grid`` is too); a Python twin needs ``argtypes``.
    """

    def __init__(self, func=None, argtypes=None, host_twin=None, name=None,
                 func_kind=_lib.KERNEL_CUDA_KERNEL, owner=None):
        self.func = func
        self.func_kind = func_kind
        self.argtypes = None if argtypes is None else [ctype_of(t) for t in argtypes]
        self.name = name
        self.owner = owner  # what must outlive the function (its Module)
        self._twin_c = None
        self._twin_py = None
        if host_twin is not None:
            if isinstance(host_twin, ctypes._CFuncPtr):
                self._twin_c = host_twin
            elif callable(host_twin):
                if self.argtypes is None:
                    raise ValueError("streamgraph: a Python host twin needs argtypes, to "
                                     "read its arguments")
                self._twin_py = host_twin
                self._twin_c = _lib.host_twin_fn(self._twin_trampoline)
            else:
                raise TypeError("streamgraph: host_twin must be a ctypes function or a callable")

    @property
    def host_twin_address(self):
        return ctypes.cast(self._twin_c, ctypes.c_void_p).value if self._twin_c else None

    def _twin_trampoline(self, launch_p, args_p):
        try:
            l = launch_p.contents
            launch = Launch((l.grid.x, l.grid.y, l.grid.z), (l.block.x, l.block.y, l.block.z),
                            l.shared_bytes)
            values = []
            for i, t in enumerate(self.argtypes):
                if issubclass(t, ctypes.Structure):
                    # A copy: the library's argument memory (for a bound
                    # sg_grid_ref, a value on its stack) lasts only this call.
                    v = t()
                    ctypes.memmove(ctypes.addressof(v), args_p[i], ctypes.sizeof(t))
                    values.append(v)
                    continue
                v = ctypes.cast(args_p[i], ctypes.POINTER(t)).contents
                values.append(v.value)
                if t is ctypes.c_void_p and values[-1] is None:
                    values[-1] = 0
            self._twin_py(launch, *values)
        except BaseException as e:  # noqa: B902
            callbacks.record(e)

    def pack(self, args):
        """The arguments as the library takes them (kept alive by the result)."""
        return ArgBlock(self, args)

    def __repr__(self):
        return "Kernel(%r)" % (self.name,)


class ArgBlock:
    """Argument values laid out for sg_kernel_desc: one buffer per value, an
    array of pointers to them, an array of sizes. ``refs`` keeps the objects
    whose addresses were taken."""

    def __init__(self, kernel, args):
        args = list(args)
        if kernel.argtypes is not None and len(args) != len(kernel.argtypes):
            raise TypeError("streamgraph: kernel %r takes %d arguments, %d given"
                            % (kernel.name, len(kernel.argtypes), len(args)))
        self.values = []
        self.refs = []
        for i, a in enumerate(args):
            t = kernel.argtypes[i] if kernel.argtypes is not None else None
            self.values.append(arg_value(a, t, i, kernel, self.refs))
        n = len(self.values)
        self.ptrs = (ctypes.c_void_p * max(n, 1))(
            *[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in self.values])
        self.sizes = (ctypes.c_size_t * max(n, 1))(*[ctypes.sizeof(v) for v in self.values])
        self.count = n

    def value_bytes(self, i):
        v = self.values[i]
        return ctypes.cast(ctypes.pointer(v), ctypes.c_void_p).value, ctypes.sizeof(v)


def _is_pointer_like(a):
    from .memory import DeviceArray
    if _np is not None and isinstance(a, _np.generic):
        return False
    return (isinstance(a, (DeviceArray, Pointer)) or hasattr(a, "__cuda_array_interface__")
            or hasattr(a, "__dlpack__")
            or (_np is not None and isinstance(a, _np.ndarray)))


def arg_value(a, t, i, kernel, refs):
    """Argument `i` of `kernel` as a ctypes value, of type `t` when known;
    objects whose address is taken are appended to `refs`."""
    if t is ctypes.c_void_p or (t is None and _is_pointer_like(a)):
        p = pointer(a)
        refs.append(p.owner)
        return ctypes.c_void_p(p.address)
    if isinstance(a, (ctypes._SimpleCData, ctypes.Structure)):
        if t is not None and ctypes.sizeof(a) != ctypes.sizeof(t):
            raise TypeError("streamgraph: argument %d of %r: %s given, %s expected"
                            % (i, kernel.name, type(a).__name__, t.__name__))
        return a
    if _np is not None and isinstance(a, _np.generic):
        if t is not None:
            return t(a.item())
        return (ctypes.c_char * a.nbytes).from_buffer_copy(a.tobytes())
    if t is not None and isinstance(a, (int, float, bool)):
        return t(a)
    raise TypeError("streamgraph: argument %d of kernel %r is a plain %s: its C type is "
                    "unknown. Give the kernel argtypes, or pass numpy.int32(...), "
                    "numpy.float32(...) or a ctypes value" % (i, kernel.name, type(a).__name__))
