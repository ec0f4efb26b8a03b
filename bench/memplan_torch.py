"""The MLP graphs of memplan_bench replayed through PyTorch's caching
allocator: what an eager PyTorch program running the same nodes one at a
time on one stream holds, beside the planned arena, its lower bound and no
reuse.

    build/.../bench/memplan_bench memplan_bench.json --export-mlp mlp-replay
    python3 bench/memplan_torch.py mlp-replay memplan_torch.json

memplan_bench --export-mlp writes one file per MLP row: the temporaries'
sizes, the temporaries each node touches, and serial orders of the nodes
(`issue`: the plan's issue order; `creation`: the order the graph was built
in, micro-batch after micro-batch, as a program running the layers one
after the other writes them) with each order's live peak. The replay walks
an order, allocating each temporary just before the node that uses it
first (torch.empty(bytes, dtype=torch.uint8, device="cuda")) and dropping
it right after the node that uses it last, which is what such a program
does with its intermediates. Nothing runs on the GPU: the allocator sees
only the allocations and frees, in this order, on one stream.

Per graph and order, after torch.cuda.empty_cache() and
reset_peak_memory_stats(), over --iterations replays (default 3: a server
runs many, and cached segments carry over):
- torch allocated: max_memory_allocated(), the blocks handed out (requests
  rounded up to 512 B, and a cached block may be handed out whole);
- torch reserved: max_memory_reserved(), the segments cudaMalloc'd (2 MiB
  for requests up to 1 MiB, 20 MiB for those up to 10 MiB, larger ones
  rounded up to 2 MiB): what the process really holds;
- live / live@512: the live bytes of the order computed here, exact and
  with each temporary rounded up to 512 B (allocated can be no lower).

--dry-run replays without torch: the live peak computed here must equal the
one memplan_bench computed in C for the same order (a check of both and of
the export); the JSON then has no torch figures. Without torch or CUDA and
without --dry-run it says why and exits 0.

This is a report, not a benchmark with targets: the planned arena holds
what concurrent streams keep live, the eager replay what one stream does,
and neither is a limit for the other (docs/buffers.md). The JSON's
`targets` list is empty.
"""
import datetime
import glob
import json
import os
import sys

MiB = 1048576.0
ROUND = 512  # the caching allocator's rounding of a request (kMinBlockSize)


def usage(msg):
    sys.stderr.write("memplan_torch: %s\nusage: memplan_torch.py DIR [out.json] [--dry-run] "
                     "[--iterations N]\n  DIR: the folder memplan_bench --export-mlp wrote\n"
                     % msg)
    sys.exit(2)


def load(folder):
    paths = sorted(glob.glob(os.path.join(folder, "mlp-*.json")))
    if not paths:
        usage("no mlp-*.json in %s: run memplan_bench --export-mlp %s first" % (folder, folder))
    graphs = []
    for path in paths:
        with open(path) as f:
            g = json.load(f)
        if g.get("benchmark") != "memplan_bench export":
            usage("%s is not a memplan_bench --export-mlp file" % path)
        n, t = g["nodes"], len(g["temps"])
        if len(g["node_temps"]) != n or any(x["id"] != i for i, x in enumerate(g["temps"])):
            usage("%s: node_temps or temps inconsistent (re-export it)" % path)
        for o in g["orders"]:
            if sorted(o["nodes"]) != list(range(n)):
                usage("%s: order %s is not every node once" % (path, o["name"]))
        if any(not 0 <= x < t for ts in g["node_temps"] for x in ts):
            usage("%s: a node touches an unknown temporary" % path)
        g["path"] = path
        graphs.append(g)
    return graphs


def steps(g, order):
    """[(allocate, free)] per position of `order`: the temporaries first used
    there (allocated before the node) and last used there (freed after)."""
    first, last = {}, {}
    for pos, v in enumerate(order):
        for t in g["node_temps"][v]:
            first.setdefault(t, pos)
            last[t] = pos
    out = [([], []) for _ in order]
    for pos, v in enumerate(order):
        for t in g["node_temps"][v]:
            if first[t] == pos:
                out[pos][0].append(t)
    for t, pos in sorted(last.items()):
        out[pos][1].append(t)
    return out


def live_peak(g, plan, rounding=1):
    size = [-(-x["bytes"] // rounding) * rounding for x in g["temps"]]
    live = peak = 0
    for alloc, free in plan:
        live += sum(size[t] for t in alloc)
        peak = max(peak, live)
        live -= sum(size[t] for t in free)
    if live:
        raise SystemExit("memplan_torch: internal error, %d bytes left live" % live)
    return peak


def torch_replay(torch, g, plan, iterations):
    sizes = [x["bytes"] for x in g["temps"]]
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    base_alloc = torch.cuda.memory_allocated()
    base_res = torch.cuda.memory_reserved()
    torch.cuda.reset_peak_memory_stats()
    for _ in range(iterations):
        held = {}
        for alloc, free in plan:
            for t in alloc:
                held[t] = torch.empty(sizes[t], dtype=torch.uint8, device="cuda")
            for t in free:
                del held[t]
        assert not held
    torch.cuda.synchronize()
    stats = torch.cuda.memory_stats()
    return {"torch_allocated_bytes": torch.cuda.max_memory_allocated() - base_alloc,
            "torch_reserved_bytes": torch.cuda.max_memory_reserved() - base_res,
            "torch_segments_peak": stats.get("segment.all.peak")}


def main(argv):
    args, dry, iterations = [], False, 3
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--dry-run":
            dry = True
        elif a == "--iterations":
            if i + 1 >= len(argv) or not argv[i + 1].isdigit() or int(argv[i + 1]) < 1:
                usage("--iterations needs a whole number >= 1")
            iterations = int(argv[i + 1])
            i += 1
        elif a.startswith("-"):
            usage("unknown option %s" % a)
        else:
            args.append(a)
        i += 1
    if not 1 <= len(args) <= 2:
        usage("give the export folder (and the JSON to write)")
    out_path = args[1] if len(args) > 1 else "memplan_torch.json"

    torch = None
    if not dry:
        try:
            import torch
        except ImportError:
            print("memplan_torch: skipped: PyTorch is not installed (--dry-run checks the "
                  "replay without it)")
            return 0
        if not torch.cuda.is_available():
            print("memplan_torch: skipped: PyTorch sees no CUDA device (--dry-run checks the "
                  "replay without it)")
            return 0
        print("torch %s, %s, PYTORCH_CUDA_ALLOC_CONF=%s" % (
            torch.__version__, torch.cuda.get_device_name(),
            os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "(unset)")))

    graphs = load(args[0])
    rows, wrong = [], []
    for g in graphs:
        for o in g["orders"]:
            plan = steps(g, o["nodes"])
            live = live_peak(g, plan)
            if live != o["serial_live_bytes"]:
                wrong.append("%s s%d %s: replay %d, memplan_bench %d" % (
                    g["graph"], g["streams"], o["name"], live, o["serial_live_bytes"]))
            r = {"graph": g["graph"], "streams": g["streams"], "order": o["name"],
                 "temps": len(g["temps"]), "nodes": g["nodes"], "peak_bytes": g["peak_bytes"],
                 "bound_bytes": g["bound_bytes"], "no_reuse_bytes": g["no_reuse_bytes"],
                 "serial_live_bytes": o["serial_live_bytes"], "replay_live_bytes": live,
                 "replay_live_512_bytes": live_peak(g, plan, ROUND)}
            if torch is not None:
                r.update(torch_replay(torch, g, plan, iterations))
            rows.append(r)

    print("\narena: the plan's (streams as shown); bound: its lower bound; live: the order's "
          "live peak,\nexact and with 512 B rounding; torch: the caching allocator replaying "
          "the order (%s)\n" % ("not run: --dry-run" if torch is None else
                               "%d iterations" % iterations))
    print("%-9s %4s %-8s %9s %9s %9s %9s %9s %9s %9s %7s" % (
        "graph", "strm", "order", "arena MiB", "bound", "noreuse", "live", "live@512",
        "torch all", "torch res", "res/ar"))
    for r in rows:
        ta = r.get("torch_allocated_bytes")
        tr = r.get("torch_reserved_bytes")
        print("%-9s %4d %-8s %9.2f %9.2f %9.2f %9.2f %9.2f %9s %9s %7s" % (
            r["graph"], r["streams"], r["order"], r["peak_bytes"] / MiB, r["bound_bytes"] / MiB,
            r["no_reuse_bytes"] / MiB, r["replay_live_bytes"] / MiB,
            r["replay_live_512_bytes"] / MiB, "-" if ta is None else "%.2f" % (ta / MiB),
            "-" if tr is None else "%.2f" % (tr / MiB),
            "-" if tr is None else "%.3f" % (tr / r["peak_bytes"])))

    doc = {"benchmark": "memplan_torch",
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "kind": "report: no targets (the arena and an eager replay answer different "
                   "questions, docs/buffers.md)",
           "targets": [], "dry_run": dry, "iterations": None if dry else iterations,
           "torch": None if torch is None else torch.__version__,
           "device": None if torch is None else torch.cuda.get_device_name(),
           "pytorch_cuda_alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF"),
           "export": os.path.abspath(args[0]), "replay_matches_memplan_bench": not wrong,
           "rows": rows}
    with open(out_path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print("\nwrote %s" % out_path)
    if wrong:
        print("WRONG: the replay's live peak differs from memplan_bench's:\n  " +
              "\n  ".join(wrong))
        return 1
    print("replay live peaks equal memplan_bench's (%d orders)" % len(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
