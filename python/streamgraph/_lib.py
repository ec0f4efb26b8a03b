"""The C library, loaded with ctypes: where it is found, the structures of
the public headers mirrored field by field, and the prototypes of the calls.

The library is looked up, in order:

1. ``$STREAMGRAPH_LIBRARY``: the path of ``libstreamgraph.so`` (or of the
   folder holding it), for instance ``build/release/src/libstreamgraph.so``;
2. next to this package: ``streamgraph/libstreamgraph.so`` (copy or link the
   built library there before ``pip install``, and it is installed with it);
3. the system's loader (``cmake --install`` into a folder it searches).

Every structure here must match its C declaration byte for byte;
``tests/test_abi.py`` compiles a C program that prints each size and offset
and compares them with these.
"""
import ctypes
import ctypes.util
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
_NAMES = ("libstreamgraph.so", "libstreamgraph.so.0", "libstreamgraph.dylib")


def _candidates():
    env = os.environ.get("STREAMGRAPH_LIBRARY")
    if env:
        if os.path.isdir(env):
            return [os.path.join(env, n) for n in _NAMES], env
        return [env], env
    paths = [os.path.join(_HERE, n) for n in _NAMES]
    found = ctypes.util.find_library("streamgraph")
    if found:
        paths.append(found)
    paths.extend(_NAMES)
    return paths, None


def _load():
    paths, env = _candidates()
    errors = []
    for path in paths:
        if os.sep in path and not os.path.exists(path):
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            errors.append("%s: %s" % (path, e))
    where = ("STREAMGRAPH_LIBRARY=%s" % env) if env else "the package folder and the system loader"
    raise ImportError(
        "streamgraph: cannot load libstreamgraph.so from %s (%s). Build the library "
        "(cmake -S . -B build/release -G Ninja && cmake --build build/release) and set "
        "STREAMGRAPH_LIBRARY=build/release/src/libstreamgraph.so, or copy it next to the "
        "streamgraph package." % (where, "; ".join(errors) or "not found"))


lib, path = _load()

# ---- status.h ---------------------------------------------------------------
status_t = ctypes.c_int


def _status_names():
    names = []
    while True:
        name = sg_status_name_raw(len(names)).decode()
        if name == "SG_STATUS_UNKNOWN":
            return tuple(names)
        names.append(name)


sg_status_name_raw = lib.sg_status_name
sg_status_name_raw.argtypes = [status_t]
sg_status_name_raw.restype = ctypes.c_char_p
# Status values by name, as this library numbers them ("SG_ERR_CYCLE": 10, ...).
STATUS_NAMES = _status_names()
STATUS = {name: value for value, name in enumerate(STATUS_NAMES)}
SG_OK, SG_NOT_READY = STATUS["SG_OK"], STATUS["SG_NOT_READY"]

# ---- memory.h ---------------------------------------------------------------
BACKEND_AUTO, BACKEND_CUDA, BACKEND_HOST = 0, 1, 2
(MEMORY_HOST_PAGEABLE, MEMORY_HOST_PINNED, MEMORY_DEVICE, MEMORY_MANAGED,
 MEMORY_HOST_DEVICE) = range(5)

# ---- graph.h ----------------------------------------------------------------
COPY_AUTO = 0
KERNEL_FUNCTION, KERNEL_CUDA_KERNEL = 0, 1


class sg_node(ctypes.Structure):
    _fields_ = [("opaque", ctypes.c_uint64)]


class sg_dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


class sg_kernel_launch(ctypes.Structure):
    _fields_ = [("grid", sg_dim3), ("block", sg_dim3), ("shared_bytes", ctypes.c_size_t)]


host_twin_fn = ctypes.CFUNCTYPE(None, ctypes.POINTER(sg_kernel_launch),
                                ctypes.POINTER(ctypes.c_void_p))
host_fn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)


class sg_copy_desc(ctypes.Structure):
    _fields_ = [("dst", ctypes.c_void_p), ("src", ctypes.c_void_p),
                ("bytes", ctypes.c_size_t), ("kind", ctypes.c_int), ("name", ctypes.c_char_p)]


class sg_kernel_desc(ctypes.Structure):
    _fields_ = [("func", ctypes.c_void_p), ("func_kind", ctypes.c_int),
                ("grid", sg_dim3), ("block", sg_dim3), ("shared_bytes", ctypes.c_size_t),
                ("args", ctypes.POINTER(ctypes.c_void_p)),
                ("arg_sizes", ctypes.POINTER(ctypes.c_size_t)), ("arg_count", ctypes.c_uint),
                ("host_twin", ctypes.c_void_p), ("name", ctypes.c_char_p),
                ("flags", ctypes.c_uint)]


class sg_memset_desc(ctypes.Structure):
    _fields_ = [("dst", ctypes.c_void_p), ("value", ctypes.c_uint),
                ("element_size", ctypes.c_uint), ("count", ctypes.c_size_t),
                ("name", ctypes.c_char_p)]


class sg_host_desc(ctypes.Structure):
    _fields_ = [("fn", ctypes.c_void_p), ("user_data", ctypes.c_void_p),
                ("name", ctypes.c_char_p)]


# Declared access and planned temporaries (graph.h).
ACCESS_READ, ACCESS_WRITE, ACCESS_READ_WRITE = 1, 2, 3
ACCESS_COMMUTATIVE = 1


class sg_temp(ctypes.Structure):
    _fields_ = [("opaque", ctypes.c_uint64)]


class sg_cond(ctypes.Structure):
    _fields_ = [("opaque", ctypes.c_uint64)]


class sg_cond_node_desc(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("cond", sg_cond), ("body_count", ctypes.c_uint),
                ("name", ctypes.c_char_p)]


class sg_grid_ref(ctypes.Structure):
    """streamgraph/grid_device.h: what a kernel bound to a grid source
    (``Graph.bind_grid``) receives, 24 bytes. Give it as the argument's type
    in ``Kernel(argtypes=...)`` and pass ``sg_grid_ref()`` as its value: each
    executable fills it in. A Python host twin receives a copy holding the
    live grid (``words`` NULL, ``x``, ``y``, ``z``)."""
    _fields_ = [("words", ctypes.POINTER(ctypes.c_uint)), ("x", ctypes.c_uint),
                ("y", ctypes.c_uint), ("z", ctypes.c_uint), ("reserved", ctypes.c_uint)]

    def live(self):
        """The grid this launch runs, in blocks: (x, y, z), as sg_grid_live.
        ``words`` is read only when set, which a host twin never sees."""
        d = [self.x, self.y, self.z]
        if self.words:
            d = [min(d[i], self.words[i]) for i in range(3)]
        return tuple(d)

    def has_block(self, bx, by, bz):
        """Whether block (bx, by, bz) belongs to the live grid (sg_grid_has_block)."""
        x, y, z = self.live()
        return bx < x and by < y and bz < z

    def __repr__(self):
        return "sg_grid_ref(words=%s, x=%d, y=%d, z=%d)" % (
            hex(ctypes.cast(self.words, ctypes.c_void_p).value or 0), self.x, self.y, self.z)


class sg_temp_desc(ctypes.Structure):
    _fields_ = [("bytes", ctypes.c_size_t), ("alignment", ctypes.c_size_t),
                ("name", ctypes.c_char_p)]


class sg_access(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p), ("bytes", ctypes.c_size_t), ("temp", sg_temp),
                ("offset", ctypes.c_size_t), ("mode", ctypes.c_int), ("flags", ctypes.c_uint)]


class sg_exec_memory(ctypes.Structure):
    _fields_ = [("temp_count", ctypes.c_size_t), ("arena_bytes", ctypes.c_size_t),
                ("no_reuse_bytes", ctypes.c_size_t), ("dag_order", ctypes.c_int)]


# ---- staging.h / exec.h -----------------------------------------------------
class sg_staging_options(ctypes.Structure):
    _fields_ = [("policy", ctypes.c_int), ("pool", ctypes.c_void_p),
                ("chunk_bytes", ctypes.c_size_t), ("ring_depth", ctypes.c_uint),
                ("copy_threads", ctypes.c_uint), ("auto_min_bytes", ctypes.c_size_t),
                ("auto_register_after", ctypes.c_uint)]


class sg_exec_options(ctypes.Structure):
    _fields_ = [("backend", ctypes.c_int), ("mode", ctypes.c_int), ("build", ctypes.c_int),
                ("max_streams", ctypes.c_uint), ("device", ctypes.c_int),
                ("staging", sg_staging_options), ("trace", ctypes.c_int),
                ("trace_launches", ctypes.c_uint), ("trace_every", ctypes.c_uint)]


class sg_exec_info(ctypes.Structure):
    _fields_ = [("backend", ctypes.c_int), ("mode", ctypes.c_int), ("build", ctypes.c_int),
                ("device", ctypes.c_int), ("node_count", ctypes.c_size_t),
                ("stream_count", ctypes.c_uint), ("event_count", ctypes.c_uint),
                ("wait_count", ctypes.c_uint)]


class sg_exec_stats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in (
        "launches", "param_updates", "in_place_updates", "rebuilds", "staged_copies",
        "registered_copies")]


STREAM_LEGACY = 0x1

# ---- pipeline.h -------------------------------------------------------------
class sg_pipeline_instance(ctypes.Structure):
    _fields_ = [("exec", ctypes.c_void_p), ("index", ctypes.c_uint), ("data", ctypes.c_void_p)]


setup_fn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(sg_pipeline_instance), ctypes.c_void_p)
teardown_fn = ctypes.CFUNCTYPE(None, ctypes.POINTER(sg_pipeline_instance), ctypes.c_void_p)
bind_fn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(sg_pipeline_instance), ctypes.c_uint64,
                           ctypes.c_void_p, ctypes.c_void_p)
complete_fn = ctypes.CFUNCTYPE(None, ctypes.c_uint64, ctypes.c_int, ctypes.c_void_p,
                               ctypes.c_void_p)


class sg_pipeline_options(ctypes.Structure):
    _fields_ = [("depth", ctypes.c_uint), ("exec", sg_exec_options),
                ("setup", ctypes.c_void_p), ("teardown", ctypes.c_void_p),
                ("bind", ctypes.c_void_p), ("on_complete", ctypes.c_void_p),
                ("user_data", ctypes.c_void_p),
                ("devices", ctypes.POINTER(ctypes.c_int)), ("device_count", ctypes.c_uint),
                ("queue", ctypes.c_uint)]


BIND_COPY_SRC, BIND_COPY_DST, BIND_KERNEL_ARG, BIND_HOST_DATA = 1, 2, 3, 4


class sg_pipeline_bind(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("node", sg_node), ("ptr", ctypes.c_void_p),
                ("bytes", ctypes.c_size_t), ("arg", ctypes.c_uint)]


class sg_pipeline_batch(ctypes.Structure):
    _fields_ = [("binds", ctypes.POINTER(sg_pipeline_bind)), ("bind_count", ctypes.c_size_t),
                ("user_data", ctypes.c_void_p)]


class sg_pipeline_stats(ctypes.Structure):
    _fields_ = [("depth", ctypes.c_uint), ("submitted", ctypes.c_uint64),
                ("reported", ctypes.c_uint64), ("waits", ctypes.c_uint64),
                ("would_block", ctypes.c_uint64), ("param_updates", ctypes.c_uint64),
                ("in_place_updates", ctypes.c_uint64), ("rebuilds", ctypes.c_uint64),
                ("stopped", ctypes.c_int), ("failed_batch", ctypes.c_uint64),
                ("fail_status", ctypes.c_int), ("queue", ctypes.c_uint)]


# ---- module.h (optional: a library built before modules existed lacks it) ---
class sg_module_header(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("source", ctypes.c_char_p)]


class sg_module_options(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p),
                ("compile_options", ctypes.POINTER(ctypes.c_char_p)),
                ("compile_option_count", ctypes.c_uint),
                ("name_expressions", ctypes.POINTER(ctypes.c_char_p)),
                ("name_expression_count", ctypes.c_uint),
                ("headers", ctypes.POINTER(sg_module_header)), ("header_count", ctypes.c_uint),
                ("device", ctypes.c_int), ("cache", ctypes.c_int),
                ("cache_dir", ctypes.c_char_p),
                ("log", ctypes.c_char_p), ("log_bytes", ctypes.c_size_t)]


class sg_module_stats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in (
        "compiles", "cache_hits", "cache_misses", "cache_stores", "cache_errors", "loads",
        "live_modules")]


# ---- prototypes -------------------------------------------------------------
_vp, _sz, _u32, _int = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint32, ctypes.c_int
_P = ctypes.POINTER


def _proto(name, args, res=status_t, optional=False):
    fn = getattr(lib, name, None)
    if fn is None:
        if optional:
            return None
        raise ImportError("streamgraph: %s lacks %s (a library older than this package?)"
                          % (path, name))
    fn.argtypes = args
    fn.restype = res
    return fn


def _sized(name, args, sizes, res=status_t, optional=False):
    """Binds <name>_sized, which takes each struct's size after its pointer
    (docs/abi.md), and returns a function of the plain call's arguments
    that passes the sizes of this module's mirrors. `sizes`: (the position
    of the pointer among the plain arguments, its struct), in order."""
    full = list(args)
    for pos, _ in reversed(sizes):
        full.insert(pos + 1, _sz)
    fn = _proto(name + "_sized", full, res, optional)
    if fn is None:
        return None

    def call(*a):
        a = list(a)
        for pos, cls in reversed(sizes):
            a.insert(pos + 1, ctypes.sizeof(cls))
        return fn(*a)

    call.__name__ = name
    return call


sg_status_name = _proto("sg_status_name", [status_t], ctypes.c_char_p)
sg_last_error = _proto("sg_last_error", [], ctypes.c_char_p)
sg_backend_resolve = _proto("sg_backend_resolve", [_int], _int)
sg_cuda_device_count = _proto("sg_cuda_device_count", [], _int)
sg_mem_alloc = _proto("sg_mem_alloc", [_int, _int, _int, _sz, _P(_vp)])
sg_mem_free = _proto("sg_mem_free", [_vp])
sg_mem_kind = _proto("sg_mem_kind", [_vp, _P(_int)])
sg_mem_copy = _proto("sg_mem_copy", [_vp, _vp, _sz])

sg_node_index = _proto("sg_node_index", [sg_node], _u32)
sg_graph_create = _proto("sg_graph_create", [_P(_vp)])
sg_graph_destroy = _proto("sg_graph_destroy", [_vp])
_deps = [_P(sg_node), _sz, _P(sg_node)]
sg_graph_add_copy = _sized("sg_graph_add_copy", [_vp, _P(sg_copy_desc)] + _deps,
                           [(1, sg_copy_desc)])
sg_graph_add_kernel = _sized("sg_graph_add_kernel", [_vp, _P(sg_kernel_desc)] + _deps,
                             [(1, sg_kernel_desc)])
sg_graph_add_memset = _sized("sg_graph_add_memset", [_vp, _P(sg_memset_desc)] + _deps,
                             [(1, sg_memset_desc)])
sg_graph_add_host = _sized("sg_graph_add_host", [_vp, _P(sg_host_desc)] + _deps,
                           [(1, sg_host_desc)])
sg_graph_add_empty = _proto("sg_graph_add_empty", [_vp, ctypes.c_char_p] + _deps)
sg_graph_add_edge = _proto("sg_graph_add_edge", [_vp, sg_node, sg_node])
sg_graph_set_kernel = _sized("sg_graph_set_kernel", [_vp, sg_node, _P(sg_kernel_desc)],
                             [(2, sg_kernel_desc)])
sg_graph_set_copy = _sized("sg_graph_set_copy", [_vp, sg_node, _P(sg_copy_desc)],
                           [(2, sg_copy_desc)])
sg_graph_set_memset = _sized("sg_graph_set_memset", [_vp, sg_node, _P(sg_memset_desc)],
                             [(2, sg_memset_desc)])
sg_graph_set_host = _sized("sg_graph_set_host", [_vp, sg_node, _P(sg_host_desc)],
                           [(2, sg_host_desc)])
sg_graph_node_count = _proto("sg_graph_node_count", [_vp, _P(_sz)])
sg_graph_edge_count = _proto("sg_graph_edge_count", [_vp, _P(_sz)])
sg_graph_validate = _proto("sg_graph_validate", [_vp])

# Optional: a library without conditional nodes leaves these None.
sg_graph_cond_create = _proto("sg_graph_cond_create",
                              [_vp, ctypes.c_uint, ctypes.c_uint, _P(sg_cond)], optional=True)
sg_graph_add_conditional = _sized("sg_graph_add_conditional",
                                  [_vp, _P(sg_cond_node_desc)] + _deps + [_P(_vp)],
                                  [(1, sg_cond_node_desc)], optional=True)
sg_graph_kernel_bind_cond = _proto("sg_graph_kernel_bind_cond",
                                   [_vp, sg_node, ctypes.c_uint, sg_cond], optional=True)
sg_cond_set_host = _proto("sg_cond_set_host", [sg_cond, ctypes.c_uint], optional=True)
sg_graph_kernel_bind_grid = _proto("sg_graph_kernel_bind_grid",
                                   [_vp, sg_node, ctypes.c_uint, _vp], optional=True)

# Optional: a library without declared access leaves these None (Graph.temp
# and Graph.access then say so).
sg_graph_add_temp = _sized("sg_graph_add_temp", [_vp, _P(sg_temp_desc), _P(sg_temp)],
                           [(1, sg_temp_desc)], optional=True)
_declare = _proto("sg_graph_declare_access_sized", [_vp, sg_node, _P(sg_access), _sz, _sz],
                  optional=True)
sg_graph_declare_access = None if _declare is None else (
    lambda g, n, a, count: _declare(g, n, a, count, ctypes.sizeof(sg_access)))
sg_graph_add_copy_temp = _sized(
    "sg_graph_add_copy_temp", [_vp, _P(sg_copy_desc), sg_temp, _sz, sg_temp, _sz] + _deps,
    [(1, sg_copy_desc)], optional=True)
sg_graph_add_memset_temp = _sized(
    "sg_graph_add_memset_temp", [_vp, _P(sg_memset_desc), sg_temp, _sz] + _deps,
    [(1, sg_memset_desc)], optional=True)
sg_graph_bind_temp = _proto("sg_graph_bind_temp", [_vp, sg_node, ctypes.c_uint, sg_temp, _sz],
                            optional=True)
sg_graph_inferred_edge_count = _proto("sg_graph_inferred_edge_count", [_vp, _P(_sz)],
                                      optional=True)
sg_exec_get_temp = _proto("sg_exec_get_temp", [_vp, sg_temp, _P(_vp)], optional=True)
sg_exec_get_memory = _sized("sg_exec_get_memory", [_vp, _P(sg_exec_memory)],
                            [(1, sg_exec_memory)], optional=True)

sg_exec_options_init = _sized("sg_exec_options_init", [_P(sg_exec_options)],
                              [(0, sg_exec_options)], None)
sg_exec_create = _sized("sg_exec_create", [_vp, _P(sg_exec_options), _P(_vp)],
                        [(1, sg_exec_options)])
sg_exec_destroy = _proto("sg_exec_destroy", [_vp])
sg_exec_launch = _proto("sg_exec_launch", [_vp, _vp])
sg_exec_wait = _proto("sg_exec_wait", [_vp])
sg_exec_query = _proto("sg_exec_query", [_vp])
sg_exec_get_info = _sized("sg_exec_get_info", [_vp, _P(sg_exec_info)], [(1, sg_exec_info)])
sg_exec_get_stats = _sized("sg_exec_get_stats", [_vp, _P(sg_exec_stats)], [(1, sg_exec_stats)])
sg_exec_set_kernel = _sized("sg_exec_set_kernel", [_vp, sg_node, _P(sg_kernel_desc)],
                            [(2, sg_kernel_desc)])
sg_exec_set_copy = _sized("sg_exec_set_copy", [_vp, sg_node, _P(sg_copy_desc)],
                          [(2, sg_copy_desc)])
sg_exec_set_memset = _sized("sg_exec_set_memset", [_vp, sg_node, _P(sg_memset_desc)],
                            [(2, sg_memset_desc)])
sg_exec_set_host = _sized("sg_exec_set_host", [_vp, sg_node, _P(sg_host_desc)],
                          [(2, sg_host_desc)])
sg_exec_update = _proto("sg_exec_update", [_vp, _vp])
sg_exec_write_trace = _proto("sg_exec_write_trace", [_vp, ctypes.c_char_p])
sg_exec_write_trace_svg = _proto("sg_exec_write_trace_svg", [_vp, ctypes.c_char_p],
                                 optional=True)

sg_pipeline_options_init = _sized("sg_pipeline_options_init", [_P(sg_pipeline_options)],
                                  [(0, sg_pipeline_options)], None)
sg_pipeline_create = _sized("sg_pipeline_create", [_vp, _P(sg_pipeline_options), _P(_vp)],
                            [(1, sg_pipeline_options)])
sg_pipeline_destroy = _proto("sg_pipeline_destroy", [_vp])
sg_pipeline_instance_bind = _sized("sg_pipeline_instance_bind",
                                   [_P(sg_pipeline_instance), _P(sg_pipeline_bind), _sz],
                                   [(0, sg_pipeline_instance), (1, sg_pipeline_bind)])
_submit = [_vp, _P(sg_pipeline_batch), _P(ctypes.c_uint64)]
_batch_sizes = [(1, sg_pipeline_batch), (1, sg_pipeline_bind)]
sg_pipeline_submit = _sized("sg_pipeline_submit", _submit, _batch_sizes)
sg_pipeline_try_submit = _sized("sg_pipeline_try_submit", _submit, _batch_sizes)
sg_pipeline_poll = _proto("sg_pipeline_poll", [_vp])
sg_pipeline_wait = _proto("sg_pipeline_wait", [_vp, ctypes.c_uint64])
sg_pipeline_drain = _proto("sg_pipeline_drain", [_vp])
sg_pipeline_get_stats = _sized("sg_pipeline_get_stats", [_vp, _P(sg_pipeline_stats)],
                               [(1, sg_pipeline_stats)])

# Testing support (streamgraph/testing.h); a library may leave it out.
sg_live_allocations = _proto("sg_live_allocations", [], ctypes.c_long, optional=True)

sg_module_options_init = _sized("sg_module_options_init", [_P(sg_module_options)],
                                [(0, sg_module_options)], None, optional=True)
sg_module_create_from_source = _sized(
    "sg_module_create_from_source", [ctypes.c_char_p, _P(sg_module_options), _P(_vp)],
    [(1, sg_module_options)], optional=True)
sg_module_create_from_image = _sized(
    "sg_module_create_from_image", [_vp, _sz, _P(sg_module_options), _P(_vp)],
    [(2, sg_module_options)], optional=True)
sg_module_create_from_file = _sized(
    "sg_module_create_from_file", [ctypes.c_char_p, _P(sg_module_options), _P(_vp)],
    [(1, sg_module_options)], optional=True)
sg_module_destroy = _proto("sg_module_destroy", [_vp], optional=True)
sg_module_get_kernel = _proto("sg_module_get_kernel", [_vp, ctypes.c_char_p, _P(_vp)],
                              optional=True)
sg_module_get_log = _proto("sg_module_get_log", [_vp, _P(ctypes.c_char_p)], optional=True)
sg_module_get_stats = _sized("sg_module_get_stats", [_P(sg_module_stats)], [(0, sg_module_stats)],
                             optional=True)
