"""Geometry from the device on the host backend (Graph.bind_grid): a host
node writes the grid (three uint32) into host-backend memory, and a kernel
node bound to it runs min(words, bound) blocks in each dimension, none when
a word is 0. Its Python twin gets the live grid as an sg_grid_ref.

Each test draws its sizes from a seed it names in its assertion messages."""
import gc
import os
import random
import weakref

import numpy as np
import pytest

import streamgraph as sg

BOUND = (5, 4, 3)  # the kernel node's declared grid (x, y, z)
POISON = 0xDEADBEEF
BIG = 0xFFFFFFFF


def block_value(tag, bx, by, bz, live):
    """What the twin writes for a block: its coordinates, the live grid it
    saw and the launch's tag, so that a stale or misplaced write shows."""
    return (tag * 1000003 + bx + 8 * by + 64 * bz
            + 512 * (live[0] + 8 * live[1] + 64 * live[2])) & 0xFFFFFFFF


def reference(words, bound, tag):
    """The outputs the rule gives: per block of the live grid its value,
    the poison everywhere else."""
    live = tuple(min(w, b) for w, b in zip(words, bound))
    want = np.full(bound[::-1], POISON, np.uint32)
    for bz in range(live[2]):
        for by in range(live[1]):
            for bx in range(live[0]):
                want[bz, by, bx] = block_value(tag, bx, by, bz, live)
    return live, want


def sizes(rng, bound, count):
    """Random words, with the cases that matter among them: a 0 in each
    dimension (no block), each dimension above its bound (clamped), the
    largest uint32, exactly the bound, a single block."""
    fixed = [(0, 2, 1), (3, 0, 2), (1, 1, 0), (0, 0, 0),
             (bound[0] + 3, 2, 1), (1, bound[1] + 1, bound[2] + 7), (BIG, BIG, BIG),
             tuple(bound), (1, 1, 1)]
    drawn = [tuple(rng.randrange(0, b + 4) for b in bound) for _ in range(count)]
    out = fixed + drawn
    rng.shuffle(out)
    return out


class Fill:
    """A kernel node whose twin writes block_value into `out` for each
    block it runs and records what it was given."""

    def __init__(self, bound):
        self.bound = bound
        self.out = sg.empty(bound[::-1], "uint32", backend="host")
        self.seen = []
        self.refs = []
        self.kernel = sg.Kernel(argtypes=["ptr", sg.sg_grid_ref, "uint32"],
                                host_twin=self.twin, name="fill")

    def twin(self, launch, out, ref, tag):
        self.seen.append((launch.grid, ref.live(), bool(ref.words), type(ref)))
        # A copy owning its memory (ctypes' documented _b_needsfree_), not a
        # view of the library's argument, which lasts only this call.
        self.refs.append((ref, ref._b_needsfree_))
        view = sg.host_view(out, "uint32", self.bound[::-1])
        gx, gy, gz = launch.grid
        for bz in range(gz):
            for by in range(gy):
                for bx in range(gx):
                    if not ref.has_block(bx, by, bz):
                        continue
                    view[bz, by, bx] = block_value(tag, bx, by, bz, ref.live())

    def args(self, tag):
        return [self.out, sg.sg_grid_ref(), np.uint32(tag)]

    def check(self, words, tag, what, bound=None):
        bound = bound or self.bound
        live, want = reference(words, bound, tag)
        got = self.out.host_view()
        full = np.full(self.bound[::-1], POISON, np.uint32)
        full[:bound[2], :bound[1], :bound[0]] = want
        assert np.array_equal(got, full), "%s: words %r, live %r" % (what, words, live)
        if 0 in live:
            assert self.seen == [], "%s: words %r ran the twin: %r" % (what, words, self.seen)
        else:
            assert self.seen == [(live, live, False, sg.sg_grid_ref)], \
                "%s: words %r: %r" % (what, words, self.seen)
            kept, owned = self.refs[0]
            assert owned, "%s: the twin's sg_grid_ref is a view of the library's memory" % what
            assert (kept.x, kept.y, kept.z, bool(kept.words)) == live + (False,), \
                "%s: words %r: the twin's sg_grid_ref changed after the call: %r" % (
                    what, words, kept)

    def poison(self):
        self.out.host_view()[...] = POISON
        self.seen.clear()
        self.refs.clear()


def grid_graph(fill, state, tag=7):
    """admit (host node: writes state["words"]) -> fill (bound to them)."""
    words = sg.empty(3, "uint32", backend="host")
    at = words.address  # not `words`: only the binding keeps the memory alive
    g = sg.Graph()

    def admit():
        sg.host_view(at, "uint32", 3)[:] = state["words"]

    a = g.host(admit, name="admit")
    k = g.kernel(fill.kernel, BOUND, 32, fill.args(tag), after=a, name="fill")
    g.bind_grid(k, 1, words)
    return g, k, words


def test_one_executable_runs_every_grid_it_is_given():
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    fill = Fill(BOUND)
    state = {"words": (0, 0, 0)}
    g, _, _ = grid_graph(fill, state, tag=seed & 0xFFFF)
    with g.compile(backend="host") as e:
        for words in sizes(rng, BOUND, 12):
            state["words"] = words
            fill.poison()
            e.run()
            fill.check(words, seed & 0xFFFF, "seed %d" % seed)


def test_set_kernel_keeps_the_binding_and_the_new_bound_applies():
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    fill = Fill(BOUND)
    state = {"words": (0, 0, 0)}
    g, k, _ = grid_graph(fill, state)
    with g.compile(backend="host") as e:
        small = (2, 3, 1)
        e.set_kernel(k, grid=small, args=fill.args(11))
        g.set_kernel(k, args=fill.args(12))
        for words in sizes(rng, small, 4):
            state["words"] = words
            fill.poison()
            e.run()
            fill.check(words, 11, "exec, seed %d" % seed, bound=small)
    with g.compile(backend="host") as e:
        for words in sizes(rng, BOUND, 4):
            state["words"] = words
            fill.poison()
            e.run()
            fill.check(words, 12, "graph, seed %d" % seed)
        other = sg.Kernel(argtypes=["ptr", "uint64", "uint32"], host_twin=fill.twin)
        with pytest.raises(sg.StreamgraphError, match="keep an sg_grid_ref there") as err:
            e.set_kernel(k, kernel=other, args=[fill.out, 0, 1])
        assert err.value.status == "SG_ERR_INVALID_KERNEL_ARGS"


def test_a_kernel_in_a_body_takes_its_grid_from_the_device():
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    fill = Fill(BOUND)
    words = sg.empty(3, "uint32", backend="host")
    state = {"words": (0, 0, 0)}
    g = sg.Graph()
    c = g.cond(default=1)

    def admit():
        words.host_view()[:] = state["words"]

    a = g.host(admit, name="admit")
    _, (body,) = g.conditional("if", c, after=a, name="if")
    k = body.kernel(fill.kernel, BOUND, 32, fill.args(3), name="fill")
    body.bind_grid(k, 1, words)
    with g.compile(backend="host") as e:
        for w in sizes(rng, BOUND, 3):
            state["words"] = w
            fill.poison()
            e.run()
            fill.check(w, 3, "seed %d" % seed)


def test_the_words_live_as_long_as_the_node_needs_them():
    fill = Fill(BOUND)
    state = {"words": (2, 2, 2)}
    g, k, words = grid_graph(fill, state)
    gone = weakref.ref(words)
    e = g.compile(backend="host")
    del words, k
    g.destroy()
    del g
    gc.collect()
    assert gone() is not None, "the executable's words were freed"
    fill.poison()
    e.run()
    fill.check((2, 2, 2), 7, "after the graph was destroyed")
    e.destroy()
    del e
    gc.collect()
    assert gone() is None, "the words outlived every node bound to them"


def test_refusals_carry_the_library_message():
    fill = Fill(BOUND)
    words = sg.empty(3, "uint32", backend="host")
    g = sg.Graph()
    h = g.host(lambda: None, name="writer")
    k = g.kernel(fill.kernel, BOUND, 32, fill.args(1), after=h, name="fill")

    def refused(node, arg, w, status, text):
        with pytest.raises(sg.StreamgraphError, match=text) as err:
            g.bind_grid(node, arg, w)
        assert err.value.status == status, str(err.value)
        assert "sg_graph_kernel_bind_grid" in err.value.message

    refused(k, 0, words, "SG_ERR_INVALID_KERNEL_ARGS",
            r"whose size is not sizeof\(sg_grid_ref\) \(24 bytes")
    refused(k, 2, words, "SG_ERR_INVALID_KERNEL_ARGS",
            r"whose size is not sizeof\(sg_grid_ref\)")
    refused(k, 3, words, "SG_ERR_INVALID_KERNEL_ARGS", "has no argument at that index")
    refused(h, 0, words, "SG_ERR_INVALID_ARGUMENT", "is a host node, not a kernel node")
    refused(k, 1, 0, "SG_ERR_INVALID_ARGUMENT", "words is NULL")
    refused(k, 1, words.address + 1, "SG_ERR_INVALID_ARGUMENT", "is not aligned")
    refused(k, 1, words.address + 4, "SG_ERR_INVALID_ARGUMENT",
            "run past the end of their block")
    with pytest.raises(ValueError, match="12 bytes"):
        g.bind_grid(k, 1, np.zeros(2, np.uint32))
    with pytest.raises(ValueError, match="negative"):
        g.bind_grid(k, -1, words)
    other = sg.Graph()
    with pytest.raises(ValueError, match="not a node of this graph"):
        other.bind_grid(k, 1, words)
    g.bind_grid(k, 1, words)  # the right call still goes through after the refusals


def test_a_library_without_grid_sources_says_so(monkeypatch):
    fill = Fill(BOUND)
    g = sg.Graph()
    k = g.kernel(fill.kernel, BOUND, 32, fill.args(1))
    monkeypatch.setattr(sg._lib, "sg_graph_kernel_bind_grid", None)
    with pytest.raises(sg.UnsupportedError, match="lacks sg_graph_kernel_bind_grid"):
        g.bind_grid(k, 1, sg.empty(3, "uint32", backend="host"))


# ---- on a GPU: the same kernel in CUDA C, every mode against the reference ---

GRID_HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "include",
                           "streamgraph", "grid_device.h")
FILL_SOURCE = r"""
#include <streamgraph/grid_device.h>
extern "C" __global__ void fill(unsigned *out, sg_grid_ref g, unsigned tag) {
  if (!sg_grid_has_block(g, blockIdx.x, blockIdx.y, blockIdx.z)) return;
  const sg_grid_dims live = sg_grid_live(g);   /* not gridDim: the bound in graph mode */
  if (threadIdx.x != 0) return;
  const unsigned bx = blockIdx.x, by = blockIdx.y, bz = blockIdx.z;
  out[(bz * %(by)du + by) * %(bx)du + bx] =
      tag * 1000003u + bx + 8u * by + 64u * bz + 512u * (live.x + 8u * live.y + 64u * live.z);
}
"""


@pytest.mark.gpu
@pytest.mark.parametrize("mode,build", [("streams", "explicit"), ("graph", "explicit"),
                                        ("graph", "capture")])
def test_gpu_modes_run_the_live_grid_as_the_reference(gpu, tmp_path, mode, build):
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    with open(GRID_HEADER, encoding="utf-8") as f:
        header = f.read()
    m = sg.Module(FILL_SOURCE % {"bx": BOUND[0], "by": BOUND[1]}, name="fill.cu",
                  headers={"streamgraph/grid_device.h": header}, cache_dir=str(tmp_path))
    fill = m.kernel("fill", ["ptr", sg.sg_grid_ref, "uint32"])
    tag = seed & 0xFFFF
    host_words = np.zeros(3, np.uint32)             # pageable: staged by the copy node
    poison = np.full(BOUND[::-1], POISON, np.uint32)
    got = np.zeros(BOUND[::-1], np.uint32)
    words, out = sg.empty(3, "uint32"), sg.empty(BOUND[::-1], "uint32")
    g = sg.Graph()
    up = g.copy(words, host_words, name="words")
    clear = g.copy(out, poison, name="poison")
    k = g.kernel(fill, BOUND, 32, [out, sg.sg_grid_ref(), np.uint32(tag)], after=[up, clear],
                 name="fill")
    g.bind_grid(k, 1, words)
    g.copy(got, out, after=k, name="down")
    with g.compile(mode=mode, build=build) as e:
        for w in sizes(rng, BOUND, 12):
            host_words[:] = w
            got[...] = 0
            e.run()
            live, want = reference(w, BOUND, tag)
            assert np.array_equal(got, want), "%s/%s seed %d: words %r, live %r" % (
                mode, build, seed, w, live)
    m.destroy()

