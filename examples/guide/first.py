"""The guide's Python program: a graph of NumPy copies and a kernel, on the
host backend (the kernel's host twin runs on the CPU)."""
import numpy as np
import streamgraph as sg


def scale_host(launch, out, x, a, n):       # what the host backend runs for the kernel
    o, v = sg.host_view(out, np.float32, n), sg.host_view(x, np.float32, n)
    o[:] = a * v


scale = sg.Kernel(None, ["ptr", "ptr", "float32", "int32"], host_twin=scale_host, name="scale")

n = 100_000
x = np.arange(n, dtype=np.float32)
y = np.empty(n, np.float32)
dx, dy = sg.empty(n, "float32", backend="host"), sg.empty(n, "float32", backend="host")
g = sg.Graph()
up = g.copy(dx, x, name="upload")
k = g.kernel(scale, (n + 255) // 256, 256, [dy, dx, 3.0, n], after=up)
g.copy(y, dy, after=k, name="download")
with g.compile(backend="host", mode="graph", trace=True) as e:
    e.run()
    assert np.allclose(y, 3 * x)
    e.set_kernel(k, args=[dy, dx, 5.0, n])  # in place: no re-planning
    e.run()
    assert np.allclose(y, 5 * x)
    e.write_trace_svg("guide_python_timeline.svg")
print("python: correct")
