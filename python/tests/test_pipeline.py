"""Pipelines over batches with NumPy inputs, on the host backend: results
equal NumPy's, completions come in order, failures stop the pipeline."""
import numpy as np
import pytest

import streamgraph as sg

SEED = 7321


def saxpy_twin(launch, y, x, a, n):
    yv, xv = sg.host_view(y, np.float32, n), sg.host_view(x, np.float32, n)
    yv[:] = np.float32(a) * xv + yv


SAXPY = sg.Kernel(None, ["ptr", "ptr", "float32", "int32"], host_twin=saxpy_twin, name="saxpy")


def build(n, x_dev, y_dev, x_host, y_host, out_host):
    g = sg.Graph()
    ux = g.copy(x_dev, x_host, name="up x")
    uy = g.copy(y_dev, y_host, name="up y")
    k = g.kernel(SAXPY, (n + 127) // 128, 128, [y_dev, x_dev, 1.0, n], after=[ux, uy])
    down = g.copy(out_host, y_dev, after=k, name="down")
    return g, ux, uy, k, down


@pytest.mark.parametrize("mode,depth", [("streams", 3), ("graph", 2), ("streams", 1)])
def test_batches_equal_numpy(mode, depth, live_allocations):
    r = np.random.default_rng(SEED)
    n, batches = 3000, 9
    xs = [r.random(n, dtype=np.float32) for _ in range(batches)]
    ys = [r.random(n, dtype=np.float32) for _ in range(batches)]
    alphas = [np.float32(r.integers(1, 9)) for _ in range(batches)]
    outs = [np.full(n, np.nan, np.float32) for _ in range(batches)]
    template = [sg.empty(n, "float32", backend="host") for _ in range(2)]
    g, ux, uy, k, down = build(n, template[0], template[1], xs[0], ys[0], outs[0])
    done = []

    def setup(inst):  # each instance gets device buffers of its own
        x, y = sg.empty(n, "float32", backend="host"), sg.empty(n, "float32", backend="host")
        inst.bind([sg.bind_dst(ux, x), sg.bind_dst(uy, y), sg.bind_arg(k, 0, y),
                   sg.bind_arg(k, 1, x), sg.bind_src(down, y)])
        inst.data = (x, y)

    def on_complete(index, error, data):
        assert error is None, error
        np.testing.assert_allclose(outs[index], alphas[index] * xs[index] + ys[index],
                                   rtol=1e-6, err_msg="batch %d seed %d" % (index, SEED))
        done.append(data)

    p = sg.Pipeline(g, depth=depth, setup=setup, on_complete=on_complete, backend="host",
                    mode=mode)
    for i in range(batches):
        idx = p.submit([sg.bind_src(ux, xs[i]), sg.bind_src(uy, ys[i]),
                        sg.bind_arg(k, 2, alphas[i]), sg.bind_dst(down, outs[i])], data=i)
        assert idx == i
    p.drain()
    assert done == list(range(batches))
    s = p.stats
    assert s["submitted"] == batches and s["reported"] == batches and s["rebuilds"] == 0
    assert not s["stopped"]
    p.destroy()
    g.destroy()
    del template


def test_dict_binds_choose_the_host_side():
    n = 64
    d = sg.empty(n, "int32", backend="host")
    src, out = np.zeros(n, np.int32), np.zeros(n, np.int32)
    g = sg.Graph()
    up = g.copy(d, src)
    down = g.copy(out, d, after=up)
    with sg.Pipeline(g, depth=2, backend="host") as p:
        results = [np.zeros(n, np.int32) for _ in range(4)]
        for i in range(4):
            p.submit({up: np.full(n, i, np.int32), down: results[i]})
        p.drain()
    for i in range(4):
        assert (results[i] == i).all()
    with pytest.raises(ValueError, match="not a copy node"):
        sg.pipeline.make_binds({g.empty(): src})


def test_host_data_binds_reach_the_callable():
    got = []
    held = len(sg.callbacks._objects)
    g = sg.Graph()
    h = g.host(lambda data=None: got.append(data), name="h")
    with sg.Pipeline(g, depth=2, backend="host") as p:
        for i in range(5):
            p.submit([sg.bind_host(h, {"batch": i})])
        p.drain()
    # Instances run at the same time: the calls come in any order.
    assert sorted(got, key=lambda d: d["batch"]) == [{"batch": i} for i in range(5)]
    assert len(sg.callbacks._objects) == held, "held objects were not released"


def test_a_failing_batch_stops_the_pipeline():
    g = sg.Graph()

    def fail_on(data):
        if data == 2:
            raise RuntimeError("batch two fails")

    h = g.host(fail_on, name="checker")
    reports = []
    p = sg.Pipeline(g, depth=1, backend="host",
                    on_complete=lambda i, err, data: reports.append((i, err and err.status)))
    with pytest.raises(sg.StreamgraphError) as info:
        for i in range(6):
            p.submit([sg.bind_host(h, i)])
        p.drain()
    assert info.value.status in ("SG_ERR_STOPPED", "SG_ERR_CALLBACK")
    assert isinstance(info.value.__cause__, RuntimeError)
    assert p.stats["stopped"] and p.stats["failed_batch"] == 2
    assert reports[:2] == [(0, None), (1, None)]
    assert reports[2] == (2, "SG_ERR_CALLBACK")
    p.destroy()


def test_setup_exception_fails_creation():
    g = sg.Graph()
    g.empty()

    def setup(inst):
        raise OSError("no buffers")

    with pytest.raises(sg.StreamgraphError) as info:
        sg.Pipeline(g, depth=2, setup=setup, backend="host")
    assert info.value.status == "SG_ERR_CALLBACK"
    assert isinstance(info.value.__cause__, OSError)


def test_try_submit_returns_none_when_full():
    import threading
    gate = threading.Event()
    g = sg.Graph()
    g.host(lambda: gate.wait(10), name="gate")
    with sg.Pipeline(g, depth=1, queue=2, backend="host") as p:
        assert p.submit() == 0
        assert p.submit(block=False) == 1  # queued behind batch 0
        assert p.submit(block=False) is None
        assert p.stats["would_block"] == 1
        gate.set()
        p.drain()


def test_bad_binds_are_refused_without_stopping():
    n = 16
    d = sg.empty(n, "float32", backend="host")
    g = sg.Graph()
    up = g.copy(d, np.zeros(n, np.float32))
    with sg.Pipeline(g, depth=2, backend="host") as p:
        with pytest.raises(TypeError):
            p.submit(["not a bind"])
        with pytest.raises(ValueError, match="moves 64 bytes"):
            p.submit([sg.bind_src(up, np.zeros(n // 2, np.float32))])
        with pytest.raises(ValueError, match="not a kernel node"):
            p.submit([sg.bind_arg(up, 0, 1)])
        assert p.submit([sg.bind_src(up, np.ones(n, np.float32))]) == 0
        p.drain()
    assert (d.to_numpy() == 1).all()


def test_release_whose_finalizer_releases_does_not_deadlock():
    # Regression: callbacks.release dropped the object while holding its
    # lock, and an object whose finalizer releases another key (a batch's
    # binds held by a pipeline) waited on that lock forever.
    from streamgraph import callbacks

    inner = callbacks.hold(object())

    class Owner:
        def __del__(self):
            callbacks.release(inner)

    outer = callbacks.hold(Owner())
    callbacks.release(outer)
    assert callbacks.lookup(inner) is None
