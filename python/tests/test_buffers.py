"""Declared access and planned temporaries from Python, on the host backend:
nodes ordered only by their declarations, intermediates as temporaries with
NumPy-style shapes, bitwise against NumPy; the arena reuses memory and keeps
its addresses across launches and parameter updates."""
import numpy as np
import pytest

import streamgraph as sg

SEED = 20261202


def scale_twin(launch, out, a, n, k):
    o, x = (sg.host_view(p, np.float32, n) for p in (out, a))
    o[:] = x * np.float32(k)


def add_twin(launch, out, a, b, n):
    o, x, y = (sg.host_view(p, np.float32, n) for p in (out, a, b))
    o[:] = x + y


SCALE = sg.Kernel(None, ["ptr", "ptr", "int32", "float32"], host_twin=scale_twin, name="scale")
ADD = sg.Kernel(None, ["ptr", "ptr", "ptr", "int32"], host_twin=add_twin, name="add")


def build(n, x, out, layers):
    """x -> t0 = 2x -> t1 = t0 + x -> t2 = 2 t1 -> ... -> out: each step a
    temporary, ordered by declarations only."""
    g = sg.Graph()
    prev, nodes, temps = x, [], []
    for i in range(layers):
        t = g.temp((n,), "float32", name="t%d" % i)
        temps.append(t)
        if i % 2 == 0:
            k = g.kernel(SCALE, 1, 1, [t, prev, n, 2.0], name="scale%d" % i)
            g.access(k, reads=[prev], writes=[t])
        else:
            k = g.kernel(ADD, 1, 1, [t, prev, x, n], name="add%d" % i)
            g.access(k, reads=[prev, x], writes=[t])
        nodes.append(k)
        prev = t
    k = g.kernel(SCALE, 1, 1, [out, prev, n, 1.0], name="out")
    g.access(k, reads=[prev], writes=[out])
    nodes.append(k)
    return g, nodes, temps


def reference(x, layers):
    v = x.copy()
    for i in range(layers):
        v = v * np.float32(2.0) if i % 2 == 0 else v + x
    return v


@pytest.mark.parametrize("streams", [1, 4])
def test_declared_chain_of_temporaries_matches_numpy(streams):
    n, layers = 1000, 9
    x = np.random.default_rng(SEED).random(n, dtype=np.float32)
    out = np.full(n, np.nan, np.float32)
    g, nodes, temps = build(n, x, out, layers)
    assert g.edge_count == 0 and g.inferred_edge_count >= layers
    with g.compile(backend="host", max_streams=streams) as e:
        addresses = [e.temp_address(t) for t in temps]
        for _ in range(3):
            out[:] = np.nan
            e.run()
            np.testing.assert_array_equal(out, reference(x, layers))
        mem = e.memory
        assert mem["temp_count"] == layers
        # A chain lives in two temporaries' worth of memory.
        assert mem["arena_bytes"] <= 2 * n * 4 + 256 < mem["no_reuse_bytes"]
        assert [e.temp_address(t) for t in temps] == addresses
        # A parameter change keeps the bound temporary.
        e.set_kernel(nodes[0], args=[temps[0], x, n, 3.0])
        e.run()
        want = x * np.float32(3.0)
        for i in range(1, layers):
            want = want * np.float32(2.0) if i % 2 == 0 else want + x
        np.testing.assert_array_equal(out, want)
    g.destroy()


def test_slices_accumulates_and_refusals():
    g = sg.Graph()
    t = g.temp((4, 256), "float32")
    assert t.nbytes == 4096 and t[1024:2048].nbytes == 1024
    a = g.empty(name="a")
    b = g.empty(name="b")
    g.access(a, accumulates=[t])
    g.access(b, accumulates=[t])
    assert g.inferred_edge_count == 0  # commutative writes run together
    c = g.empty(name="c")
    g.access(c, reads=[t[0:16]])
    assert g.inferred_edge_count == 2
    other = sg.Graph()
    with pytest.raises(ValueError):
        other.access(other.empty(), reads=[t])
    with pytest.raises(ValueError):
        g.temp((0,), "float32")
    bad = g.empty()
    g.access(bad, accumulates=[t], reads=[t])  # declared; refused when planned
    with pytest.raises(sg.StreamgraphError, match="commutative"):
        g.validate()
    other.destroy()
    g.destroy()


def test_copies_and_memsets_of_temporaries():
    n = 512
    x = np.random.default_rng(SEED + 1).random(n, dtype=np.float32)
    out = np.full(n, np.nan, np.float32)
    g = sg.Graph()
    a = g.temp(n, "float32", name="a")
    b = g.temp(n, "float32", name="b")
    up = g.copy(a, x, name="up")                 # NumPy -> temporary
    g.access(up, reads=[x], writes=[a])
    k = g.kernel(SCALE, 1, 1, [b, a, n, 3.0])
    g.access(k, reads=[a], writes=[b])
    down = g.copy(out, b, name="down")           # temporary -> NumPy
    g.access(down, reads=[b], writes=[out])
    fill = g.memset(a[0:64], 0, element_size=4)  # after the kernel: a is read before
    g.access(fill, writes=[a[0:64]])
    with g.compile(backend="host", max_streams=4) as e:
        e.run()
        np.testing.assert_array_equal(out, x * np.float32(3.0))
        # In place: the download goes elsewhere; the temporary side stays.
        out2 = np.zeros(n, np.float32)
        e.set_copy(down, dst=out2)
        e.run()
        np.testing.assert_array_equal(out2, x * np.float32(3.0))
    g.destroy()
