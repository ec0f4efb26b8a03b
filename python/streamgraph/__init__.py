"""streamgraph: GPU work as a graph of copy, kernel, memset and host nodes,
run on several CUDA streams, as one CUDA Graph, or on host threads, and
pipelined over batches. A thin layer (ctypes) over the C library.

    import numpy as np, streamgraph as sg
    g = sg.Graph()
    x = sg.empty(n, "float32")                  # device memory (or a torch/CuPy array)
    up = g.copy(x, host_array)                  # pageable NumPy: staged through pinned memory
    k = g.kernel(kern, grid, block, [x, np.int32(n)], after=up)
    down = g.copy(host_out, x, after=k)
    g.compile(mode="graph").run()

See python/README.md for the library lookup (STREAMGRAPH_LIBRARY).
"""
from ._lib import path as library_path
from ._lib import sg_grid_ref
from .buffers import Temp, TempRange
from .errors import (BackendUnavailableError, CompileError, StreamgraphError,
                     UnsupportedError)
from .executable import Exec
from .graph import Cond, Graph, Node
from .kernel import Kernel
from .memory import (DeviceArray, cuda_device_count, empty, host_view, pointer,
                     resolve_backend, to_device)
from .module import Module, module_stats
from .pipeline import Pipeline, bind_arg, bind_dst, bind_host, bind_src

__version__ = "0.1.0"

__all__ = [
    "BackendUnavailableError", "CompileError", "Cond", "DeviceArray", "Exec", "Graph", "Kernel",
    "Temp", "TempRange",
    "Module", "Node", "Pipeline", "StreamgraphError", "UnsupportedError", "bind_arg",
    "bind_dst", "bind_host", "bind_src", "cuda_device_count", "empty", "host_view",
    "library_path", "module_stats", "pointer", "resolve_backend", "sg_grid_ref", "to_device",
]
