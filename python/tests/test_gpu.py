"""On a GPU, with PyTorch (and CuPy when present): kernels compiled from
source, device memory from __cuda_array_interface__ and DLPack used in place,
NumPy batches through a pipeline whose results equal PyTorch's, launches
ordered on PyTorch's stream, in-place updates, compile errors and the cache.
Skips without a GPU or without PyTorch."""
import numpy as np
import pytest

import streamgraph as sg

pytestmark = pytest.mark.gpu

SOURCE = r"""
extern "C" __global__ void axpy(float *out, const float *x, const float *y, float a, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = a * x[i] + y[i];
}
extern "C" __global__ void scale(float *p, float f, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    p[i] *= f;
}
"""
AXPY_TYPES = ["ptr", "ptr", "ptr", "float32", "int32"]
SEED = 90210


@pytest.fixture
def module(gpu, tmp_path):
    # --fmad=false: a*x+y rounded as two operations, as NumPy and PyTorch do.
    m = sg.Module(SOURCE, options=["--fmad=false"], name="test.cu", cache_dir=str(tmp_path))
    yield m
    m.destroy()


@pytest.mark.parametrize("mode", ["streams", "graph"])
def test_vector_op_from_source_with_numpy_arrays(module, mode):
    r = np.random.default_rng(SEED)
    n = 1 << 20
    x, y = r.random(n, dtype=np.float32), r.random(n, dtype=np.float32)
    out = np.full(n, np.nan, np.float32)
    dx, dy, dout = (sg.empty(n, "float32") for _ in range(3))
    axpy = module.kernel("axpy", AXPY_TYPES)
    g = sg.Graph()
    ux, uy = g.copy(dx, x), g.copy(dy, y)
    k = g.kernel(axpy, 512, 256, [dout, dx, dy, 3.0, n], after=[ux, uy])
    g.copy(out, dout, after=k)
    e = g.compile(mode=mode)
    e.run()
    np.testing.assert_array_equal(out, np.float32(3.0) * x + y, err_msg="seed %d" % SEED)
    assert e.stats["staged_copies"] >= 3 or mode == "streams", e.stats


def test_torch_tensors_are_used_in_place(module, torch_cuda):
    torch = torch_cuda
    gen = torch.Generator(device="cuda").manual_seed(SEED)
    n = 300001
    x = torch.rand(n, device="cuda", generator=gen)
    y = torch.rand(n, device="cuda", generator=gen)
    out = torch.full((n,), float("nan"), device="cuda")
    assert sg.pointer(x).address == x.data_ptr() and sg.pointer(x).nbytes == 4 * n
    g = sg.Graph()
    g.kernel(module.kernel("axpy", AXPY_TYPES), 256, 256, [out, x, y, 0.5, n])
    torch.cuda.synchronize()
    g.compile(mode="graph").run()
    assert torch.equal(out, 0.5 * x + y)
    # A strided view is refused rather than copied.
    with pytest.raises(ValueError, match="C-contiguous"):
        sg.pointer(torch.zeros(4, 4, device="cuda").t())


class DLPackOnly:
    """An object that offers only the DLPack protocol."""

    def __init__(self, t):
        self.t = t

    def __dlpack__(self, stream=None):
        return self.t.__dlpack__()

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def test_dlpack_objects_are_used_in_place(module, torch_cuda):
    torch = torch_cuda
    n = 4096
    t = torch.arange(n, dtype=torch.float32, device="cuda")
    p = sg.pointer(DLPackOnly(t))
    assert p.address == t.data_ptr() and p.nbytes == 4 * n and p.device
    back = np.zeros(n, np.float32)
    g = sg.Graph()
    k = g.kernel(module.kernel("scale", ["ptr", "float32", "int32"]), 16, 256,
                 [DLPackOnly(t), 2.0, n])
    g.copy(back, DLPackOnly(t), after=k)
    torch.cuda.synchronize()
    g.compile().run()
    np.testing.assert_array_equal(back, 2 * np.arange(n, dtype=np.float32))


def test_cupy_arrays_are_used_in_place(module):
    cp = pytest.importorskip("cupy")
    n = 10000
    x = cp.arange(n, dtype=cp.float32)
    g = sg.Graph()
    g.kernel(module.kernel("scale", ["ptr", "float32", "int32"]), 16, 256, [x, -1.5, n])
    cp.cuda.runtime.deviceSynchronize()
    g.compile().run()
    np.testing.assert_array_equal(cp.asnumpy(x), -1.5 * np.arange(n, dtype=np.float32))


def test_device_arrays_are_seen_by_torch(torch_cuda):
    torch = torch_cuda
    a = sg.to_device(np.arange(100, dtype=np.float32))
    t = torch.as_tensor(a, device="cuda")
    assert t.data_ptr() == a.address
    assert torch.equal(t.cpu(), torch.arange(100, dtype=torch.float32))


def test_launches_follow_torch_stream_order(module, torch_cuda):
    torch = torch_cuda
    n = 1 << 22
    x = torch.empty(n, device="cuda")
    out = torch.empty(n, device="cuda")
    g = sg.Graph()
    g.kernel(module.kernel("axpy", AXPY_TYPES), 1024, 256, [out, x, x, 2.0, n])
    e = g.compile(mode="graph")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        for i in range(5):
            x.fill_(float(i))          # queued on s, not yet done
            e.launch(s)                # ordered after the fill
            ok = torch.equal(out, torch.full_like(out, 3.0 * i))  # ordered after the launch
            assert ok, "launch %d did not follow the fill on the stream" % i
    e.wait()


def test_in_place_updates_in_graph_mode(module):
    n = 1 << 16
    x = sg.to_device(np.ones(n, np.float32))
    y = sg.to_device(np.full(n, 2, np.float32))
    out, out2 = sg.empty(n, "float32"), sg.empty(n, "float32")
    g = sg.Graph()
    k = g.kernel(module.kernel("axpy", AXPY_TYPES), 64, 256, [out, x, y, 1.0, n])
    e = g.compile(mode="graph")
    e.run()
    assert (out.to_numpy() == 3).all()
    e.set_kernel(k, args=[out2, x, y, 10.0, n])
    e.run()
    assert (out2.to_numpy() == 12).all()
    s = e.stats
    assert s["in_place_updates"] == 1 and s["rebuilds"] == 0, s


def test_host_nodes_run_python_between_gpu_work(module):
    n = 1 << 12
    d = sg.to_device(np.ones(n, np.float32))
    back = np.zeros(n, np.float32)
    seen = []
    g = sg.Graph()
    scale = module.kernel("scale", ["ptr", "float32", "int32"])
    k1 = g.kernel(scale, 4, 256, [d, 3.0, n])
    down = g.copy(back, d, after=k1)
    h = g.host(lambda: seen.append(float(back[0])), after=down)
    g.kernel(scale, 4, 256, [d, 2.0, n], after=h)
    for mode in ("streams", "graph"):
        seen.clear()
        d.copy_from(np.ones(n, np.float32))
        g.compile(mode=mode).run()
        assert seen == [3.0], mode
        assert (d.to_numpy() == 6).all(), mode


def test_compile_errors_carry_the_log(gpu, tmp_path):
    with pytest.raises(sg.CompileError) as info:
        sg.Module('extern "C" __global__ void k() { not_declared(); }', name="broken.cu",
                  cache_dir=str(tmp_path))
    assert info.value.status == "SG_ERR_COMPILE"
    assert "broken.cu" in info.value.message
    assert "not_declared" in info.value.log


def test_second_module_is_a_cache_hit(gpu, tmp_path):
    before = sg.module_stats()
    a = sg.Module(SOURCE, cache_dir=str(tmp_path))
    mid = sg.module_stats()
    b = sg.Module(SOURCE, cache_dir=str(tmp_path))
    after = sg.module_stats()
    assert mid["compiles"] == before["compiles"] + 1
    assert after["compiles"] == mid["compiles"]
    assert after["cache_hits"] == mid["cache_hits"] + 1
    a.destroy()
    b.destroy()


def test_missing_kernel_names_are_errors(module):
    with pytest.raises(sg.StreamgraphError) as info:
        module.kernel("nope")
    assert "nope" in info.value.message


@pytest.mark.parametrize("mode,depth", [("graph", 3), ("streams", 2)])
def test_pipeline_of_numpy_batches_equals_torch(module, torch_cuda, mode, depth):
    """Batches of NumPy inputs through upload -> kernel -> download with
    per-instance PyTorch tensors; each result equals PyTorch's own a*x+y."""
    torch = torch_cuda
    r = np.random.default_rng(SEED)
    n, batches = 1 << 20, 10
    xs = [r.standard_normal(n, dtype=np.float32) for _ in range(batches)]
    ys = [r.standard_normal(n, dtype=np.float32) for _ in range(batches)]
    alphas = [np.float32(r.uniform(-4, 4)) for _ in range(batches)]
    outs = [np.full(n, np.nan, np.float32) for _ in range(batches)]
    axpy = module.kernel("axpy", AXPY_TYPES)
    tx, ty, tout = (torch.empty(n, device="cuda") for _ in range(3))
    g = sg.Graph()
    ux, uy = g.copy(tx, xs[0]), g.copy(ty, ys[0])
    k = g.kernel(axpy, 1024, 256, [tout, tx, ty, 1.0, n], after=[ux, uy])
    down = g.copy(outs[0], tout, after=k)

    def setup(inst):
        x, y, o = (torch.empty(n, device="cuda") for _ in range(3))
        inst.bind([sg.bind_dst(ux, x), sg.bind_dst(uy, y), sg.bind_arg(k, 0, o),
                   sg.bind_arg(k, 1, x), sg.bind_arg(k, 2, y), sg.bind_src(down, o)])
        inst.data = (x, y, o)

    done = []
    with sg.Pipeline(g, depth=depth, setup=setup, mode=mode,
                     on_complete=lambda i, err, data: done.append((i, err))) as p:
        for b in range(batches):
            p.submit([sg.bind_src(ux, xs[b]), sg.bind_src(uy, ys[b]),
                      sg.bind_arg(k, 3, alphas[b]), sg.bind_dst(down, outs[b])])
        p.drain()
        assert p.stats["rebuilds"] == 0
        if mode == "graph":
            assert p.stats["in_place_updates"] > 0
    assert done == [(b, None) for b in range(batches)]
    for b in range(batches):
        want = (torch.from_numpy(xs[b]).cuda() * float(alphas[b]) +
                torch.from_numpy(ys[b]).cuda()).cpu().numpy()
        np.testing.assert_array_equal(outs[b], want, err_msg="batch %d seed %d" % (b, SEED))
