"""Graphs and executables on the host backend: copies from NumPy arrays,
kernels with host twins, memset and host nodes, modes, in-place updates,
errors as exceptions."""
import ctypes
import threading

import numpy as np
import pytest

import streamgraph as sg

SEED = 20240611


def vadd_twin(launch, out, a, b, n):
    o, x, y = (sg.host_view(p, np.float32, n) for p in (out, a, b))
    o[:] = x + y


VADD = sg.Kernel(None, ["ptr", "ptr", "ptr", "int32"], host_twin=vadd_twin, name="vadd")


def rng(extra=0):
    return np.random.default_rng(SEED + extra)


@pytest.mark.parametrize("mode", ["streams", "graph"])
def test_copy_kernel_copy_matches_numpy(mode, live_allocations):
    r = rng(1)
    n = 4099
    a, b = r.random(n, dtype=np.float32), r.random(n, dtype=np.float32)
    out = np.full(n, np.nan, np.float32)  # poisoned
    da, db, dout = (sg.empty(n, "float32", backend="host") for _ in range(3))
    g = sg.Graph()
    ua = g.copy(da, a, name="up a")
    ub = g.copy(db, b, name="up b")
    k = g.kernel(VADD, (n + 255) // 256, 256, [dout, da, db, n], after=[ua, ub])
    g.copy(out, dout, after=k, name="down")
    with g.compile(backend="host", mode=mode) as e:
        e.run()
        np.testing.assert_array_equal(out, a + b, err_msg="seed %d" % (SEED + 1))
        assert e.info["backend"] == "host" and e.info["node_count"] == 4
        assert e.stats["launches"] == 1
    g.destroy()
    for d in (da, db, dout):
        d.free()


def test_memset_host_and_edges_run_in_order():
    n = 1000
    d = sg.empty(n, "uint32", backend="host")
    seen = []
    g = sg.Graph()
    m = g.memset(d, 0xDEADBEEF, name="fill")
    h1 = g.host(lambda: seen.append(("h1", int(d.host_view()[7]))), after=m, name="h1")
    h2 = g.host(lambda: seen.append(("h2", threading.current_thread().name)), name="h2")
    g.edge(h1, h2)
    assert g.node_count == 3 and g.edge_count == 2
    g.compile(backend="host").run()
    assert seen[0] == ("h1", 0xDEADBEEF)
    assert seen[1][0] == "h2"


def test_memset_two_byte_elements():
    d = sg.empty(64, "uint16", backend="host")
    g = sg.Graph()
    g.memset(d, 0xABCD, element_size=2)
    g.compile(backend="host").run()
    assert (d.to_numpy() == 0xABCD).all()


def test_in_place_updates_change_args_and_copies():
    r = rng(2)
    n = 512
    a = r.integers(0, 1 << 20, n).astype(np.float32)
    b = r.integers(0, 1 << 20, n).astype(np.float32)
    a2 = r.integers(0, 1 << 20, n).astype(np.float32)
    out = np.zeros(n, np.float32)
    da, db, dout = (sg.empty(n, "float32", backend="host") for _ in range(3))
    db.copy_from(b)
    g = sg.Graph()
    up = g.copy(da, a)
    k = g.kernel(VADD, 2, 256, [dout, da, db, n], after=up)
    down = g.copy(out, dout, after=k)
    e = g.compile(backend="host", mode="graph")
    e.run()
    np.testing.assert_array_equal(out, a + b)
    e.set_copy(up, src=a2)
    e.set_kernel(k, args=[dout, da, da, n])  # out = a2 + a2
    e.run()
    np.testing.assert_array_equal(out, a2 + a2)
    s = e.stats
    assert s["param_updates"] == 2 and s["rebuilds"] == 0
    # The graph itself is unchanged: a new executable computes a + b again.
    out[:] = 0
    g.compile(backend="host").run()
    np.testing.assert_array_equal(out, a + b)
    # Editing the graph and re-applying it to the executable.
    g.set_kernel(k, args=[dout, db, db, n])
    e.update(g)
    e.run()
    np.testing.assert_array_equal(out, b + b)
    assert down.index == 2


def test_host_node_exception_becomes_the_cause():
    g = sg.Graph()

    def boom():
        raise KeyError("inside the host node")

    g.host(boom, name="boom")
    e = g.compile(backend="host")
    with pytest.raises(sg.StreamgraphError) as info:
        e.run()
    assert info.value.status == "SG_ERR_CALLBACK"
    assert "boom" in info.value.message
    assert isinstance(info.value.__cause__, KeyError)
    # The executable is failed now: later launches say so.
    with pytest.raises(sg.StreamgraphError) as again:
        e.launch()
    assert again.value.status == "SG_ERR_EXEC_FAILED"


def test_host_twin_exception_is_raised_by_wait():
    def bad_twin(launch, x):
        raise ValueError("twin failed")

    k = sg.Kernel(None, ["int32"], host_twin=bad_twin, name="bad")
    g = sg.Graph()
    g.kernel(k, 1, 1, [3])
    with pytest.raises(sg.StreamgraphError) as info:
        g.compile(backend="host").run()
    assert isinstance(info.value.__cause__, ValueError)


def test_errors_carry_the_library_message():
    g = sg.Graph()
    a = g.empty(name="a")
    b = g.empty(after=a, name="b")
    g.edge(b, a)
    with pytest.raises(sg.StreamgraphError) as info:
        g.validate()
    assert info.value.status == "SG_ERR_CYCLE"
    assert "'a'" in info.value.message and "'b'" in info.value.message
    with pytest.raises(sg.StreamgraphError) as info:
        g.edge(a, a)
    assert info.value.status == "SG_ERR_SELF_EDGE"
    # A launch shape out of range names the node.
    with pytest.raises(sg.StreamgraphError) as info:
        g.kernel(VADD, 1, 2048, [0, 0, 0, 1], name="too wide")
    assert info.value.status == "SG_ERR_INVALID_LAUNCH"
    assert "too wide" in str(info.value)


def test_kernel_without_host_twin_on_host_backend():
    g = sg.Graph()
    with pytest.raises(sg.StreamgraphError) as info:
        g.kernel(sg.Kernel(None, ["int32"], name="nothing"), 1, 1, [1])
    assert info.value.status == "SG_ERR_INVALID_ARGUMENT" and "nothing" in info.value.message
    # A device function (any address: the host backend never calls it) without a twin.
    g.kernel(sg.Kernel(0x1000, ["int32"], name="device only"), 1, 1, [1])
    with pytest.raises(sg.StreamgraphError) as info:
        g.compile(backend="host")
    assert info.value.status == "SG_ERR_NO_HOST_TWIN"
    assert "device only" in info.value.message


def test_argument_types():
    g = sg.Graph()
    untyped = sg.Kernel(None, name="untyped")
    with pytest.raises(TypeError, match="numpy.int32"):
        g.kernel(untyped, 1, 1, [5])
    with pytest.raises(TypeError, match="takes 4 arguments"):
        g.kernel(VADD, 1, 1, [0, 0])
    seen = []
    twin = sg.Kernel(None, ["uint8", "float64", "ptr", "int64"],
                     host_twin=lambda l, *a: seen.append((l, a)), name="typed")
    arr = np.zeros(3, np.int64)
    g.kernel(twin, (2, 3), (4, 5, 6), [np.uint8(7), 2.5, arr, -(1 << 40)])
    g.compile(backend="host").run()
    launch, values = seen[0]
    assert launch.grid == (2, 3, 1) and launch.block == (4, 5, 6)
    assert values == (7, 2.5, arr.ctypes.data, -(1 << 40))


def test_self_typed_arguments_reach_a_c_twin():
    # numpy scalars and ctypes values carry their own size; the twin here is C.
    libc = ctypes.CDLL(None)
    seen = []

    @sg._lib.host_twin_fn
    def twin(launch, args):
        seen.append((ctypes.cast(args[0], ctypes.POINTER(ctypes.c_int16)).contents.value,
                     ctypes.cast(args[1], ctypes.POINTER(ctypes.c_double)).contents.value))

    k = sg.Kernel(None, host_twin=twin, name="c twin")
    g = sg.Graph()
    g.kernel(k, 1, 1, [np.int16(-3), ctypes.c_double(0.25)])
    g.compile(backend="host").run()
    assert seen == [(-3, 0.25)]
    assert libc is not None


def test_pointer_rules():
    g = sg.Graph()
    d = sg.empty(16, "float32", backend="host")
    with pytest.raises(ValueError, match="C-contiguous"):
        g.copy(d, np.zeros((8, 4), np.float32)[:, ::2])
    with pytest.raises(ValueError, match="differ in size"):
        g.copy(d, np.zeros(8, np.float32))
    ro = np.zeros(16, np.float32)
    ro.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        g.copy(ro, d)
    with pytest.raises(TypeError, match="cannot take the address"):
        g.copy(d, object())
    # A bytearray is host memory too.
    buf = bytearray(range(64))
    g.copy(d, buf)
    g.compile(backend="host").run()
    assert d.to_numpy().tobytes() == bytes(range(64))


def test_nodes_of_another_graph_are_refused():
    g1, g2 = sg.Graph(), sg.Graph()
    a = g1.empty()
    with pytest.raises(ValueError, match="not a node of this graph"):
        g2.empty(after=a)


def test_objects_stay_alive_while_an_executable_uses_them():
    import gc
    n = 256
    src = np.arange(n, dtype=np.uint32)
    dst = sg.empty(n, "uint32", backend="host")
    g = sg.Graph()
    g.copy(dst, src)
    e = g.compile(backend="host")
    del g, src
    gc.collect()
    e.run()
    assert (dst.to_numpy() == np.arange(n, dtype=np.uint32)).all()


def test_destroyed_objects_raise_cleanly():
    g = sg.Graph()
    g.destroy()
    with pytest.raises(ValueError, match="destroyed"):
        g.empty()
    a = sg.empty(4, backend="host")
    a.free()
    with pytest.raises(ValueError, match="freed"):
        a.to_numpy()


def test_unknown_options_are_refused():
    g = sg.Graph()
    g.empty()
    with pytest.raises(ValueError, match="mode"):
        g.compile(mode="fast")
    with pytest.raises(ValueError, match="staging"):
        g.compile(staging={"colour": 1})
    with pytest.raises(ValueError, match="backend"):
        g.compile(backend="tpu")


def test_staging_options_and_trace(tmp_path):
    n = 1 << 16
    src = rng(3).integers(0, 1 << 30, n).astype(np.uint32)
    out = np.zeros_like(src)
    d = sg.empty(n, "uint32", backend="host")
    g = sg.Graph()
    up = g.copy(d, src, name="up")
    g.copy(out, d, after=up, name="down")
    e = g.compile(backend="host", trace=True, staging={"policy": "stage", "chunk_bytes": 4096})
    e.run()
    np.testing.assert_array_equal(out, src)
    path = tmp_path / "trace.json"
    e.write_trace(path)
    assert '"up"' in path.read_text()


def test_leaves_no_allocation_behind(live_allocations):
    n = 128
    d = sg.empty(n, "float32", backend="host")
    g = sg.Graph()
    up = g.copy(d, np.ones(n, np.float32))
    g.host(lambda: None, after=up)
    e = g.compile(backend="host", mode="graph")
    e.run()
    e.destroy()
    g.destroy()
    d.free()
