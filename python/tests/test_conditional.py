"""Conditional nodes on the host backend: WHILE with a data-dependent trip
count, IF/ELSE and SWITCH, conditions set from host callbacks."""
import random

import pytest

import streamgraph as sg


def test_while_runs_until_the_body_clears_the_condition():
    k = random.Random().randrange(0, 40)
    state = {"left": k, "done": 0}
    g = sg.Graph()
    more = g.cond(default=0)

    def init():
        more.set(state["left"] != 0)

    def step():
        state["left"] -= 1
        state["done"] += 1
        more.set(state["left"] != 0)

    first = g.host(init, name="init")
    loop, (body,) = g.conditional("while", more, after=first, name="loop")
    body.host(step, name="step")
    with g.compile(backend="host") as e:
        e.run()
    assert state == {"left": 0, "done": k}


@pytest.mark.parametrize("kind,bodies", [("if", 2), ("switch", 3)])
def test_if_else_and_switch_pick_their_body(kind, bodies):
    runs = [0] * bodies
    g = sg.Graph()
    c = g.cond(default=0, reset=False)
    value = {"v": 0}
    setter = g.host(lambda: c.set(value["v"]), name="decide")
    node, graphs = g.conditional(kind, c, bodies=bodies, after=setter, name=kind)
    assert len(graphs) == bodies
    for i, b in enumerate(graphs):
        b.host(lambda i=i: runs.__setitem__(i, runs[i] + 1), name="body %d" % i)
    want = [0] * bodies
    with g.compile(backend="host") as e:
        for v in [0, 1, 2, 3, 1]:
            value["v"] = v
            e.run()
            if kind == "if":
                want[0 if v else 1] += 1
            elif v < bodies:
                want[v] += 1
            assert runs == want, "value %d" % v


def test_refusals_name_the_rule():
    g = sg.Graph()
    c = g.cond()
    with pytest.raises(sg.StreamgraphError, match="WHILE node has 1 body"):
        g.conditional("while", c, bodies=2)
    _, (body,) = g.conditional("if", c)
    with pytest.raises(sg.StreamgraphError, match="top-level graph"):
        body.cond()
    with pytest.raises(ValueError):
        g.conditional("loop", c)


def test_a_library_without_conditional_nodes_says_so(monkeypatch):
    monkeypatch.setattr(sg._lib, "sg_graph_cond_create", None)
    with pytest.raises(sg.UnsupportedError, match="lacks sg_graph_cond_create"):
        sg.Graph().cond()
