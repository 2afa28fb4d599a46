"""The agenda's schedule (batch/agenda.py) on random dependence graphs: every live node runs
once, in a group of one key, after every node it depends on (joins passed through), and a
key's members that `_Lows` reports as not ready are exactly those not yet emitted.

The graphs mix independent iterations (keys that run complete), chains with side work of the
chain's own key (held members), joins (ordering points, among them roots and joins of joins)
and dead nodes. Whole programs are checked end to end by test_held_side_work and the seeds."""
from __future__ import annotations

import random

import pytest

from vecgrad.batch import agenda
from vecgrad.batch.nodes import EQN, JOIN, Plan
from vecgrad.ir import Graph


def _plan(seed: int) -> Plan:
    rnd = random.Random(seed)
    p = Plan(Graph((), (), ()))
    n = rnd.randrange(5, 120)
    for i in range(n):
        join = rnd.random() < 0.15
        p.add(JOIN if join else EQN, ("k", rnd.randrange(1 + seed % 6)), None, (), None)
        for u in rnd.sample(range(i), min(i, rnd.randrange(3))):  # edges go forward
            p.edge(u, i)
    for u in rnd.sample(range(n), n // 10):
        p.kill(u)
    return p


def _preds(p: Plan) -> list[list[int]]:
    pred: list[list[int]] = [[] for _ in p.kind]
    for u, ss in enumerate(p.succ):
        for s in ss:
            pred[s].append(u)
    return pred


@pytest.mark.parametrize("seed", range(60))
def test_schedule_runs_every_node_once_after_its_dependences(seed: int) -> None:
    p = _plan(seed)
    pred = _preds(p)
    done: set[int] = set()
    passed: set[int] = set()  # joins: done once all their predecessors are

    def ready(i: int) -> bool:
        return all(u in done or (u in passed and ready(u)) for u in pred[i])

    for i, k in enumerate(p.kind):
        if k == JOIN:
            passed.add(i)
    npred0 = list(p.npred)
    for members in agenda.schedule(p):
        assert members == sorted(members) and len(set(members)) == len(members)
        assert len({p.key[m] for m in members}) == 1
        for m in members:
            assert not p.dead[m] and p.kind[m] != JOIN and m not in done
            assert ready(m), f"node {m} ran before a node it depends on"
        done.update(members)
    live = {i for i, k in enumerate(p.kind) if k != JOIN and not p.dead[i]}
    assert done == live
    assert p.npred == npred0  # (the plan is not consumed: schedule counts on a copy)


def test_lows_made_lazily_answer_as_made_eagerly() -> None:
    for seed in range(30):
        p = _plan(seed)
        h = agenda.heights(p)
        lows = agenda._Lows(p, h, len(p.key_of))
        assert lows.heaps is None  # (not made until asked)
        rnd = random.Random(seed)
        order = [i for i in range(len(p.kind)) if p.kind[i] != JOIN and not p.dead[i]]
        rnd.shuffle(order)
        for step, i in enumerate(order + [None]):
            for k in range(len(p.key_of)):
                want = min((h[j] for j in order[step:] if p.key[j] == k), default=float("inf"))
                assert lows.least(k) == want
            if i is not None:
                lows.is_ready[i] = True
