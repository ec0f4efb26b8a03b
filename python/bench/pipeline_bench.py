"""NumPy batches through upload -> kernel -> download on the GPU: a
streamgraph pipeline from Python against the same pipeline written by hand
with PyTorch streams and pin_memory, side by side in one run.

Each batch is two pageable NumPy inputs x, y (n float32 each) and one
pageable NumPy output, out = a*x + y. Cases, in interleaved rounds:

- streamgraph graph / streams: sg.Pipeline (depth 3), the kernel compiled at
  run time, pageable arrays moved by the library's pinned staging;
- torch pinned x3: what a strong PyTorch user writes: three slots, each with
  pinned host buffers (pin_memory, allocated once), device tensors and a
  stream; the host copies pageable -> pinned with torch's copy_ (which
  spreads a large CPU copy over torch's intra-op threads, where NumPy's
  copyto uses one), copy_(non_blocking), the same computation in PyTorch
  ops, copy back, an event per slot;
- torch naive: torch.from_numpy(x).cuda() ... .cpu() per batch;
- bound: the link's limit measured in the same run: pinned host->device
  and device->host copies of one batch with torch (they overlap), the
  slower direction times the batch count.

Results are checked against NumPy (bit for bit: --fmad=false). Prints a
table and writes JSON (argument 1, default pipeline_bench.json).
`--chunk-bytes N` sets the streamgraph cases' staging chunk (default 0: the
library's own choice).

    STREAMGRAPH_LIBRARY=build/release/src/libstreamgraph.so PYTHONPATH=python \
        python3 python/bench/pipeline_bench.py out.json
"""
import json
import statistics
import sys
import time

import numpy as np
import torch

import streamgraph as sg

SOURCE = r"""
extern "C" __global__ void axpy(float *out, const float *x, const float *y, float a, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = a * x[i] + y[i];
}
"""
ROUNDS = 5
DEPTH = 3


def now():
    return time.perf_counter()


class Batches:
    def __init__(self, n, count):
        rng = np.random.default_rng(5)
        base_x = rng.random(n, dtype=np.float32)
        base_y = rng.random(n, dtype=np.float32)
        # Distinct arrays per batch (a pipeline's inputs are new memory each time).
        self.xs = [base_x + np.float32(b) for b in range(count)]
        self.ys = [base_y - np.float32(b) for b in range(count)]
        self.alphas = [np.float32(1 + b % 7) for b in range(count)]
        self.outs = [np.empty(n, np.float32) for _ in range(count)]
        self.n, self.count = n, count

    def poison(self):
        for o in self.outs:
            o.fill(np.nan)

    def check(self, what):
        for b in range(self.count):
            want = self.alphas[b] * self.xs[b] + self.ys[b]
            if not np.array_equal(self.outs[b], want):
                raise SystemExit("WRONG result: %s, batch %d" % (what, b))


class StreamgraphCase:
    def __init__(self, batches, kernel, mode, chunk_bytes):
        n = batches.n
        self.batches = batches
        tx, ty, to = (torch.empty(n, device="cuda") for _ in range(3))
        g = sg.Graph()
        self.ux, self.uy = g.copy(tx, batches.xs[0]), g.copy(ty, batches.ys[0])
        self.k = g.kernel(kernel, 1024, 256, [to, tx, ty, 1.0, n], after=[self.ux, self.uy])
        self.down = g.copy(batches.outs[0], to, after=self.k)

        def setup(inst):
            x, y, o = (torch.empty(n, device="cuda") for _ in range(3))
            inst.bind([sg.bind_dst(self.ux, x), sg.bind_dst(self.uy, y),
                       sg.bind_arg(self.k, 0, o), sg.bind_arg(self.k, 1, x),
                       sg.bind_arg(self.k, 2, y), sg.bind_src(self.down, o)])
            inst.data = (x, y, o)

        # The library's staging geometry unless --chunk-bytes sets one. The
        # graph-mode instances hold their rings for their lifetime, and both
        # streamgraph cases share the default pinned pool (512 MiB cap).
        staging = {"chunk_bytes": chunk_bytes} if chunk_bytes else {}
        self.pipeline = sg.Pipeline(g, depth=DEPTH, setup=setup, mode=mode, staging=staging)
        self.graph = g

    def run(self):
        b = self.batches
        for i in range(b.count):
            self.pipeline.submit([sg.bind_src(self.ux, b.xs[i]), sg.bind_src(self.uy, b.ys[i]),
                                  sg.bind_arg(self.k, 3, b.alphas[i]),
                                  sg.bind_dst(self.down, b.outs[i])])
        self.pipeline.drain()


class TorchPinnedCase:
    """Three slots of pinned buffers, device tensors and a stream each."""

    def __init__(self, batches):
        n = batches.n
        self.batches = batches
        self.slots = []
        for _ in range(DEPTH):
            hx, hy, ho = (torch.empty(n, pin_memory=True) for _ in range(3))
            self.slots.append({
                "hx": hx, "hy": hy, "ho": ho, "dx": torch.empty(n, device="cuda"),
                "dy": torch.empty(n, device="cuda"), "do": torch.empty(n, device="cuda"),
                "stream": torch.cuda.Stream(), "event": None, "batch": None})

    def _finish(self, slot):
        if slot["event"] is not None:
            slot["event"].synchronize()
            torch.from_numpy(self.batches.outs[slot["batch"]]).copy_(slot["ho"])
            slot["event"] = None

    def run(self):
        b = self.batches
        for i in range(b.count):
            s = self.slots[i % DEPTH]
            self._finish(s)  # the slot's previous batch is home before its buffers are reused
            s["hx"].copy_(torch.from_numpy(b.xs[i]))
            s["hy"].copy_(torch.from_numpy(b.ys[i]))
            with torch.cuda.stream(s["stream"]):
                s["dx"].copy_(s["hx"], non_blocking=True)
                s["dy"].copy_(s["hy"], non_blocking=True)
                torch.mul(s["dx"], float(b.alphas[i]), out=s["do"])
                s["do"].add_(s["dy"])
                s["ho"].copy_(s["do"], non_blocking=True)
                s["event"] = torch.cuda.Event()
                s["event"].record()
            s["batch"] = i
        for s in self.slots:
            self._finish(s)


class TorchNaiveCase:
    def __init__(self, batches):
        self.batches = batches

    def run(self):
        b = self.batches
        for i in range(b.count):
            x = torch.from_numpy(b.xs[i]).cuda()
            y = torch.from_numpy(b.ys[i]).cuda()
            o = x * float(b.alphas[i])
            o += y
            b.outs[i][:] = o.cpu().numpy()


def link_bound(n, count):
    """Seconds for `count` batches at the pinned copy rate measured now: two
    inputs up and one output down per batch, the directions overlapping."""
    h = torch.empty(n, pin_memory=True)
    d = torch.empty(n, device="cuda")
    up, down = [], []
    for _ in range(5):
        torch.cuda.synchronize()
        t = now()
        d.copy_(h, non_blocking=True)
        torch.cuda.synchronize()
        up.append(now() - t)
        t = now()
        h.copy_(d, non_blocking=True)
        torch.cuda.synchronize()
        down.append(now() - t)
    bytes_ = 4 * n
    up_rate = bytes_ / min(up)
    down_rate = bytes_ / min(down)
    return max(2 * bytes_ / up_rate, bytes_ / down_rate) * count, up_rate, down_rate


def main(path, chunk_bytes):
    if sg.resolve_backend() != "cuda" or not torch.cuda.is_available():
        raise SystemExit("pipeline_bench: needs a GPU (and a library built with CUDA)")
    module = sg.Module(SOURCE, options=["--fmad=false"], name="axpy.cu")
    kernel = module.kernel("axpy", ["ptr", "ptr", "ptr", "float32", "int32"])
    print("streamgraph %s, torch %s, %s" % (sg.library_path, torch.__version__,
                                            torch.cuda.get_device_name()))
    results = []
    for n, count in ((1 << 20, 48), (1 << 24, 12)):  # 4 MiB and 64 MiB per array
        b = Batches(n, count)
        cases = {
            "streamgraph graph": StreamgraphCase(b, kernel, "graph", chunk_bytes),
            "streamgraph streams": StreamgraphCase(b, kernel, "streams", chunk_bytes),
            "torch pinned x3": TorchPinnedCase(b),
            "torch naive": TorchNaiveCase(b),
        }
        times = {name: [] for name in cases}
        for name, case in cases.items():  # warm-up (allocations, JIT, pools) and check
            b.poison()
            case.run()
            torch.cuda.synchronize()
            b.check(name)
        for _ in range(ROUNDS):
            for name, case in cases.items():
                torch.cuda.synchronize()
                t = now()
                case.run()
                times[name].append(now() - t)
        bound, up_rate, down_rate = link_bound(n, count)
        best = statistics.median(times["torch pinned x3"])
        for name in cases:
            med = statistics.median(times[name])
            results.append({
                "case": name, "array_bytes": 4 * n, "batches": count, "median_s": med,
                "min_s": min(times[name]), "moved_gbps": 12 * n * count / med / 1e9,
                "vs_torch_pinned": med / best, "vs_bound": med / bound})
        results.append({"case": "bound (pinned link)", "array_bytes": 4 * n, "batches": count,
                        "median_s": bound, "h2d_gbps": up_rate / 1e9,
                        "d2h_gbps": down_rate / 1e9})
        for case in cases.values():
            if isinstance(case, StreamgraphCase):
                case.pipeline.destroy()
        del cases, b

    print("\n%-22s %9s %7s %10s %9s %10s %9s" % ("case", "array", "batches", "median ms",
                                               "GB/s", "vs torch", "vs bound"))
    for r in results:
        print("%-22s %6d MiB %7d %10.2f %9s %10s %9s" % (
            r["case"], r["array_bytes"] >> 20, r["batches"], r["median_s"] * 1e3,
            "%.1f" % r["moved_gbps"] if "moved_gbps" in r else "",
            "%.2f" % r["vs_torch_pinned"] if "vs_torch_pinned" in r else "",
            "%.2f" % r["vs_bound"] if "vs_bound" in r else ""))
    with open(path, "w") as f:
        json.dump({"bench": "python pipeline", "rounds": ROUNDS, "depth": DEPTH,
                   "chunk_bytes": chunk_bytes,
                   "device": torch.cuda.get_device_name(), "torch": torch.__version__,
                   "results": results}, f, indent=1)
    print("\nwrote %s (GB/s: NumPy bytes in and out per second; ratios are times, lower "
          "is faster)" % path)


if __name__ == "__main__":
    args = sys.argv[1:]
    chunk = 0
    if "--chunk-bytes" in args:
        at = args.index("--chunk-bytes")
        chunk = int(args[at + 1])
        del args[at:at + 2]
    main(args[0] if args else "pipeline_bench.json", chunk)
