"""Contractions of 2-D patches that keep the patches' offsets (each pixel's query scored
against its neighbours' features) run on one contiguous copy of the patches from
patches.COPY_TERMS offsets (im2col: every contraction of those patches reads the copy), below
that as one product of plain slices per offset, stacked (batch/patches.py), never as
np.einsum over the overlapping view; windows along one axis stay one contraction. Batched equals unbatched, gradients equal central differences (float64,
random directions)."""
from __future__ import annotations

import pytest
from test_batch import check, entry, rng

import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.batch import patches


def scores(r, flat=True, p=None):
    # channels-last features, each interior pixel's query against its (2r+1)^2 neighbours
    # (or its p x p patch)
    def f(F, Q):
        w = 2 * r + 1 if p is None else p
        total = 0.0
        for i in range(F.shape[0] - w + 1):
            for j in range(F.shape[1] - w + 1):
                if flat:
                    s = F[i:i + w, j:j + w].reshape(w * w, F.shape[2]) @ Q[i, j]
                else:
                    s = vnp.einsum("abc,c->ab", F[i:i + w, j:j + w], Q[i, j])
                total = total + vnp.sum(vnp.tanh(s) ** 2)
        return total
    return f


def rect_scores(ph, pw):
    # a ph x pw rectangle of neighbours, a log-sum-exp of the scores
    def f(F, Q):
        total = 0.0
        for i in range(F.shape[0] - ph + 1):
            for j in range(F.shape[1] - pw + 1):
                s = F[i:i + ph, j:j + pw].reshape(ph * pw, F.shape[2]) @ Q[i, j]
                total = total + vnp.log(vnp.sum(vnp.exp(s)))
        return total
    return f


def dilated_scores(d):
    # a 3 x 3 grid of neighbours d pixels apart, scores through a sine
    def f(F, Q):
        span = 2 * d + 1
        total = 0.0
        for i in range(F.shape[0] - span + 1):
            for j in range(F.shape[1] - span + 1):
                s = vnp.einsum("abc,c->ab", F[i:i + span:d, j:j + span:d], Q[i, j])
                total = total + vnp.sum(vnp.sin(s))
        return total
    return f


def attention(p):
    # softmax over the p x p patch's scores, the patch's features pooled by them
    def f(F, Q):
        out = []
        for i in range(F.shape[0] - p + 1):
            for j in range(F.shape[1] - p + 1):
                P_ = F[i:i + p, j:j + p].reshape(p * p, F.shape[2])
                s = P_ @ Q[i, j]
                a = vnp.exp(s - vnp.max(s))
                out.append(a @ P_ / vnp.sum(a))
        return vnp.sum(vnp.stack(out) ** 2)
    return f


def rows_of_patches(p):
    # one row of output pixels at a time: (W, p, p, C) patches against the row's queries
    def f(F, Q):
        total = 0.0
        for i in range(F.shape[0] - p + 1):
            for j in range(F.shape[1] - p + 1):
                total = total + vnp.sum(vnp.sin(vnp.einsum("abc,c->ab", F[i:i + p, j:j + p],
                                                           Q[i, j])))
        return total
    return f


def _fq(H, W, C, p):
    return lambda g: (g.standard_normal((H, W, C)),
                      g.standard_normal((H - p + 1, W - p + 1, C)))


CASES = [
    ("scores_r1_c4", scores(1), _fq(7, 8, 4, 3)),
    ("scores_r1_c1", scores(1, flat=False), _fq(6, 6, 1, 3)),
    ("scores_r2_c3", scores(2), _fq(9, 8, 3, 5)),
    ("attention_p2_c3", attention(2), _fq(6, 7, 3, 2)),
    ("attention_p3_c2", attention(3), _fq(7, 6, 2, 3)),
    ("sin_p3_c5", rows_of_patches(3), _fq(6, 7, 5, 3)),
]


@pytest.mark.parametrize("name,f,make", CASES, ids=[c[0] for c in CASES])
def test_kept_patches_batched_equals_unbatched(name, f, make):
    check(f, make(rng(6)), (0, 1))


def _view_contractions(g):
    views = {e.out for e in g.eqns if e.prim is P.strided and e.out.aval.ndim >= 5}
    return [e for e in g.eqns if e.prim in (P.einsum, P.muladd) and views & set(e.inputs)]


def _copied_contractions(g):
    views = {e.out for e in g.eqns if e.prim is P.strided and e.out.aval.ndim >= 5}
    cols = {e.out for e in g.eqns if e.prim is P.relayout and views & set(e.inputs)}
    return [e for e in g.eqns if e.prim in (P.einsum, P.muladd) and cols & set(e.inputs)]


@pytest.mark.parametrize("new,make,n", [(lambda: scores(1), _fq(40, 40, 16, 3), 1),
                                        (lambda: attention(3), _fq(40, 40, 8, 3), 2)])
def test_kept_offsets_copied_or_split_into_slices(new, make, n, monkeypatch):
    # 9 offsets: the patches copied once (im2col), every contraction of them reads the copy
    e, _ = entry(new(), make(rng(1)), (0, 1))
    g = e.stages["simplify"]
    assert not _view_contractions(g)
    assert len(_copied_contractions(g)) == n
    assert sum(q.prim is P.relayout for q in g.eqns) == 1
    # below COPY_TERMS offsets, one product of slices per offset, stacked
    monkeypatch.setattr(patches, "COPY_TERMS", 10)
    e, _ = entry(new(), make(rng(1)), (0, 1))
    g = e.stages["simplify"]
    assert not _view_contractions(g) and not _copied_contractions(g)
    assert any(q.prim is P.stack and len(q.inputs) == 9 for q in g.eqns)
    # and with the rule's work threshold out of reach, the one view contraction stays
    monkeypatch.setattr(patches, "WORK", 10**9)
    e, _ = entry(new(), make(rng(1)), (0, 1))
    assert _view_contractions(e.stages["simplify"])


def test_two_by_two_patches_stay_split():
    # 4 offsets: the copy and the per-pixel matmuls cost more than 4 products of slices
    e, _ = entry(scores(0, p=2), _fq(40, 40, 24, 2)(rng(4)), (0, 1))
    g = e.stages["simplify"]
    assert not _copied_contractions(g)
    assert any(q.prim is P.stack and len(q.inputs) == 4 for q in g.eqns)


COPIED = [
    ("scores_3x3", scores(1), _fq(7, 8, 4, 3)),
    ("scores_3x3_einsum", scores(1, flat=False), _fq(8, 7, 3, 3)),
    ("attention_3x3", attention(3), _fq(7, 7, 3, 3)),
    ("sin_3x3", rows_of_patches(3), _fq(7, 6, 5, 3)),
    ("scores_2x3", rect_scores(2, 3), lambda g: (g.standard_normal((6, 8, 3)),
                                                 g.standard_normal((5, 6, 3)))),
    ("scores_dilated", dilated_scores(2), _fq(9, 9, 3, 5)),
]


@pytest.mark.parametrize("name,f,make", COPIED, ids=[c[0] for c in COPIED])
def test_copied_patches_batched_equals_unbatched(name, f, make, monkeypatch):
    monkeypatch.setattr(patches, "WORK", 0)  # (small sizes, so the unbatched graph is quick)
    e = check(f, make(rng(8)), (0, 1))
    assert _copied_contractions(e.stages["simplify"])


def test_one_axis_windows_stay_one_contraction():
    # local attention scores K[t-r:t+r+1] @ Q[t]: np.einsum reads that view in long runs
    def f(K, Q):
        return vnp.sum(vnp.stack([vnp.tanh(K[t:t + 5] @ Q[t]) for t in range(Q.shape[0])]))
    g0 = rng(2)
    e, _ = entry(f, (g0.standard_normal((404, 16)), g0.standard_normal((400, 16))), (0, 1))
    assert not any(q.prim is P.stack for q in e.stages["simplify"].eqns)


def cost_volume(r):
    # the mean product of a and b shifted by (dy, dx): the summed columns move along the
    # same image axis as the shifts
    def f(a, b):
        H, W = a.shape[0] - 2 * r, a.shape[1] - 2 * r
        costs = []
        for dy in range(2 * r + 1):
            for dx in range(2 * r + 1):
                costs.append(vnp.mean(a[r:r + H, r:r + W] * b[dy:dy + H, dx:dx + W], axis=1))
        c = vnp.stack(costs)
        return vnp.sum(vnp.log(vnp.sum(vnp.exp(c), axis=0)))
    return f


def test_offsets_summed_along_their_shifts_stay_one_contraction():
    g0 = rng(3)
    check(cost_volume(1), (g0.standard_normal((7, 8)), g0.standard_normal((7, 8))), (0, 1))
    e, _ = entry(cost_volume(2), (g0.standard_normal((124, 124)),
                                  g0.standard_normal((124, 124))), (0, 1))
    assert not any(q.prim is P.stack and len(q.inputs) == 25
                   for q in e.stages["simplify"].eqns)
