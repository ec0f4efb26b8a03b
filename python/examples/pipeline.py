"""A stream of NumPy batches through upload -> kernel -> download, three
batches in flight, with streamgraph from Python.

The kernel is CUDA C compiled at run time (NVRTC, cached on disk) when a GPU
is present; on the host backend its Python host twin runs instead. Each
batch's result is checked against NumPy's.

    tools/demo-python            (builds the library, then runs this)
    STREAMGRAPH_LIBRARY=build/release/src/libstreamgraph.so \
        PYTHONPATH=python python3 python/examples/pipeline.py [batches] [elements]
"""
import sys
import time

import numpy as np

import streamgraph as sg

SOURCE = r"""
extern "C" __global__ void saxpy(float *y, const float *x, float a, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    y[i] = a * x[i] + y[i];
}
"""


def saxpy_twin(launch, y, x, a, n):
    """What the host backend runs: the same computation on host memory."""
    yv, xv = sg.host_view(y, np.float32, n), sg.host_view(x, np.float32, n)
    yv[:] = np.float32(a) * xv + yv


def main(batches=24, n=1 << 20):
    backend = sg.resolve_backend()
    argtypes = ["ptr", "ptr", "float32", "int32"]
    if backend == "cuda":
        # --fmad=false: a*x+y rounded as NumPy rounds it, so results match bit for bit.
        module = sg.Module(SOURCE, options=["--fmad=false"], name="saxpy.cu")
        saxpy = module.kernel("saxpy", argtypes, host_twin=saxpy_twin)
    else:
        saxpy = sg.Kernel(None, argtypes, host_twin=saxpy_twin, name="saxpy")
    print("streamgraph from Python: %s backend, %d batches of %d floats, library %s"
          % (backend, batches, n, sg.library_path))

    rng = np.random.default_rng(1)
    xs = [rng.random(n, dtype=np.float32) for _ in range(batches)]
    ys = [rng.random(n, dtype=np.float32) for _ in range(batches)]
    alphas = [np.float32(1 + b % 5) for b in range(batches)]
    outs = [np.empty(n, np.float32) for _ in range(batches)]

    # The graph is a template, built on the first batch and placeholder buffers.
    x_dev, y_dev = sg.empty(n, "float32"), sg.empty(n, "float32")
    g = sg.Graph()
    up_x = g.copy(x_dev, xs[0], name="upload x")
    up_y = g.copy(y_dev, ys[0], name="upload y")
    k = g.kernel(saxpy, 256, 256, [y_dev, x_dev, 1.0, n], after=[up_x, up_y], name="saxpy")
    down = g.copy(outs[0], y_dev, after=k, name="download")

    def setup(inst):  # each instance in flight gets device buffers of its own
        x, y = sg.empty(n, "float32"), sg.empty(n, "float32")
        inst.bind([sg.bind_dst(up_x, x), sg.bind_dst(up_y, y), sg.bind_arg(k, 0, y),
                   sg.bind_arg(k, 1, x), sg.bind_src(down, y)])
        inst.data = (x, y)

    wrong = []

    def on_complete(b, error, data):
        if error is not None or not np.array_equal(outs[b], alphas[b] * xs[b] + ys[b]):
            wrong.append(b)

    start = time.perf_counter()
    with sg.Pipeline(g, depth=3, setup=setup, on_complete=on_complete,
                     mode="graph" if backend == "cuda" else "streams") as p:
        for b in range(batches):
            p.submit([sg.bind_src(up_x, xs[b]), sg.bind_src(up_y, ys[b]),
                      sg.bind_arg(k, 2, alphas[b]), sg.bind_dst(down, outs[b])])
        p.drain()
        stats = p.stats
    seconds = time.perf_counter() - start
    moved = 3 * 4 * n * batches
    print("%d batches in %.1f ms (%.2f GB/s of NumPy data in and out); %d in-place "
          "updates, %d rebuilds" % (batches, seconds * 1e3, moved / seconds / 1e9,
                                     stats["in_place_updates"], stats["rebuilds"]))
    if wrong:
        print("WRONG results in batches %s" % wrong)
        return 1
    print("every batch equals NumPy's a * x + y")
    return 0


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    sys.exit(main(*args))
