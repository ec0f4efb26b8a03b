"""Modules: kernels from CUDA C source compiled at run time (NVRTC), from
PTX, or from cubin/fatbin files, loaded into the application's CUDA context
(see include/streamgraph/module.h)."""
import ctypes
import os

from . import _lib
from .errors import UnsupportedError, check, error_for
from .kernel import Kernel

_LOG_BYTES = 1 << 16


def _have_modules():
    if _lib.sg_module_create_from_source is None:
        raise UnsupportedError(_lib.STATUS["SG_ERR_UNSUPPORTED"],
                               "%s has no module API (a library older than this package)"
                               % _lib.path)


def _strings(values):
    values = [v.encode() if isinstance(v, str) else bytes(v) for v in values]
    return (ctypes.c_char_p * max(len(values), 1))(*values), len(values), values


class Module:
    """Kernels compiled from CUDA C ``source`` for the device's compute
    capability (NVRTC), cached on disk.

    ``options``: NVRTC options, passed as given ("-std=c++17",
    "--use_fast_math", "-DN=4"...). ``name_expressions``: C++ names to look
    kernels up by ("scale<float>", "ns::kernel"). ``headers``: a dict
    {include name: source} for #include. ``cache``: False compiles every
    time; ``cache_dir`` overrides the cache's folder. A compile error raises
    CompileError whose ``log`` is the compiler's whole log."""

    def __init__(self, source=None, options=(), name_expressions=(), headers=None, name=None,
                 device=-1, cache=True, cache_dir=None, _image=None, _file=None):
        _have_modules()
        o = _lib.sg_module_options()
        _lib.sg_module_options_init(ctypes.byref(o))
        keep = []
        if name is not None:
            o.name = name.encode()
        arr, n, k = _strings(options)
        o.compile_options, o.compile_option_count = arr, n
        keep += [arr, k]
        arr, n, k = _strings(name_expressions)
        o.name_expressions, o.name_expression_count = arr, n
        keep += [arr, k]
        headers = dict(headers or {})
        if headers:
            harr = (_lib.sg_module_header * len(headers))()
            for i, (hname, hsrc) in enumerate(headers.items()):
                harr[i].name = hname.encode()
                harr[i].source = hsrc.encode()
            o.headers, o.header_count = harr, len(headers)
            keep.append(harr)
        o.device = int(device)
        o.cache = 1 if cache else 0
        if cache_dir is not None:
            o.cache_dir = os.fsencode(cache_dir)
        log = ctypes.create_string_buffer(_LOG_BYTES)
        o.log, o.log_bytes = ctypes.cast(log, ctypes.c_char_p), _LOG_BYTES
        h = ctypes.c_void_p()
        if _file is not None:
            code = _lib.sg_module_create_from_file(os.fsencode(_file), ctypes.byref(o),
                                                   ctypes.byref(h))
            call = "sg_module_create_from_file"
        elif _image is not None:
            buf = ctypes.create_string_buffer(bytes(_image), len(_image))
            code = _lib.sg_module_create_from_image(buf, len(_image), ctypes.byref(o),
                                                    ctypes.byref(h))
            call = "sg_module_create_from_image"
        else:
            if isinstance(source, str):
                source = source.encode()
            code = _lib.sg_module_create_from_source(source, ctypes.byref(o), ctypes.byref(h))
            call = "sg_module_create_from_source"
        if code != _lib.SG_OK:
            err = error_for(code, call)
            if hasattr(err, "log"):
                err.log = log.value.decode("utf-8", "replace")
            raise err
        self._h = h
        self._kernels = {}

    @classmethod
    def from_ptx(cls, ptx, **kw):
        """A module from PTX text (str or bytes)."""
        return cls(_image=ptx.encode() if isinstance(ptx, str) else ptx, **kw)

    @classmethod
    def from_image(cls, image, **kw):
        """A module from a cubin, fatbin or PTX image in memory."""
        return cls(_image=image, **kw)

    @classmethod
    def from_file(cls, path, **kw):
        """A module from a .ptx, .cubin or .fatbin file."""
        return cls(_file=path, **kw)

    @property
    def handle(self):
        if not self._h:
            raise ValueError("streamgraph: the module was destroyed")
        return self._h

    @property
    def log(self):
        """The compiler's log (warnings) of this module's compile."""
        out = ctypes.c_char_p()
        check(_lib.sg_module_get_log(self.handle, ctypes.byref(out)), "sg_module_get_log")
        return (out.value or b"").decode("utf-8", "replace")

    def kernel(self, name, argtypes=None, host_twin=None):
        """The kernel ``name`` (a C name, or one of the name expressions) as a
        Kernel for graph nodes; see Kernel for ``argtypes`` and ``host_twin``."""
        func = ctypes.c_void_p()
        check(_lib.sg_module_get_kernel(self.handle, name.encode(), ctypes.byref(func)),
              "sg_module_get_kernel")
        return Kernel(func.value, argtypes, host_twin, name, _lib.KERNEL_CUDA_KERNEL, self)

    def destroy(self):
        """Gives the module up; graphs and executables that use its kernels
        keep it loaded until they are gone."""
        if self._h:
            _lib.sg_module_destroy(self._h)
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


def module_stats():
    """Process-wide module statistics: compiles, cache_hits, cache_misses,
    cache_stores, cache_errors, loads, live_modules."""
    _have_modules()
    s = _lib.sg_module_stats()
    check(_lib.sg_module_get_stats(ctypes.byref(s)), "sg_module_get_stats")
    return {name: getattr(s, name) for name, _ in s._fields_}
