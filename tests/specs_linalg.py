"""Specs of the linear-algebra primitives (primitives/matrix.py and spectral.py).

Inputs are generic (no symmetry imposed): the primitives that read one triangle are checked
as exactly that function of all the entries. Each spec has an unbatched and a stacked shape.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla  # (in the `test` extra)
from spec_lib import Spec, normal

from vecgrad.primitives.spectral import pack


def wellcond(r: np.random.Generator, s: tuple) -> np.ndarray:
    """Square matrices far from singular."""
    return r.standard_normal(s) + 3 * np.eye(s[-1])


def spd(r: np.random.Generator, s: tuple) -> np.ndarray:
    """Symmetric positive definite matrices (perturbations keep the read triangle SPD)."""
    x = r.standard_normal(s)
    return x @ np.swapaxes(x, -1, -2) / s[-1] + np.eye(s[-1])


def spd_junk_upper(r: np.random.Generator, s: tuple) -> np.ndarray:
    """SPD in the lower triangle, junk in the strict upper one (cholesky never reads it)."""
    a = spd(r, s)
    return a + np.triu(r.standard_normal(s), 1)


def triangular(r: np.random.Generator, s: tuple) -> np.ndarray:
    """A diagonal away from zero; both triangles random (one is ignored)."""
    x = r.standard_normal(s)
    n = s[-1]
    return x * (1 - np.eye(n)) + np.eye(n) * r.choice([-1.0, 1.0], s[:-1] + (1,)) * \
        r.uniform(1.5, 2.5, s[:-1] + (1,))


def tri_ref(lower: bool, trans: bool, unit: bool):
    def ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        t = np.tril(a) if lower else np.triu(a)
        if unit:
            e = np.eye(a.shape[-1], dtype=a.dtype)
            t = t * (1 - e) + e
        return np.linalg.solve(np.swapaxes(t, -1, -2) if trans else t, b)
    return ref


def _eigh_ref(uplo: str):
    return lambda a: pack(list(np.linalg.eigh(a, uplo)), a.ndim - 2)


def _svd_ref(full: bool):
    return lambda a: pack(list(np.linalg.svd(a, full_matrices=full)), a.ndim - 2)


def _qr_ref(complete: bool):
    return lambda a: pack(list(np.linalg.qr(a, "complete" if complete else "reduced")),
                          a.ndim - 2)


def _slogdet_ref(a: np.ndarray) -> np.ndarray:
    s, l = np.linalg.slogdet(a)
    return np.stack([s, l], -1)


SQ = ((4, 4),)
SQ_B = (((2, 3, 3),),)
TOL = 1e-5

SPECS: list[Spec] = [
    Spec("solve", ((4, 4), (4, 2)), np.linalg.solve, gens=(wellcond, normal),
         bcast=(((2, 3, 3), (2, 3, 5)),), tol=TOL),
    Spec("inv", SQ, np.linalg.inv, gens=wellcond, bcast=SQ_B, tol=TOL),
    Spec("det", SQ, np.linalg.det, gens=wellcond, bcast=SQ_B, tol=TOL),
    Spec("slogdet", SQ, _slogdet_ref, gens=wellcond, bcast=SQ_B, tol=TOL),
    Spec("slogdet", SQ, _slogdet_ref, gens=normal, bcast=SQ_B, tol=TOL, label="any-sign"),
    Spec("cholesky", SQ, np.linalg.cholesky, gens=spd_junk_upper, bcast=SQ_B, tol=TOL),
    Spec("pinv", ((5, 3),), lambda a: np.linalg.pinv(a), {"rcond": None, "hermitian": False},
         bcast=(((2, 3, 4),), ((4, 4),)), tol=TOL),
    Spec("eigh", SQ, _eigh_ref("L"), {"UPLO": "L"}, bcast=SQ_B, tol=TOL, label="L", gauge=True),
    Spec("eigh", SQ, _eigh_ref("U"), {"UPLO": "U"}, bcast=SQ_B, tol=TOL, label="U",
         gauge=True),
    Spec("eigvalsh", SQ, lambda a: np.linalg.eigvalsh(a), {"UPLO": "L"}, bcast=SQ_B, tol=TOL,
         label="L"),
    Spec("eigvalsh", SQ, lambda a: np.linalg.eigvalsh(a, "U"), {"UPLO": "U"}, bcast=SQ_B,
         tol=TOL, label="U"),
    Spec("svd", ((4, 3),), _svd_ref(False), {"full_matrices": False},
         bcast=(((2, 3, 5),), ((2, 4, 4),)), tol=TOL, gauge=True),
    Spec("svd", ((4, 4),), _svd_ref(True), {"full_matrices": True},
         bcast=(((2, 3, 3),),), tol=TOL, label="full-square", gauge=True),
    Spec("svd", ((4, 2),), _svd_ref(True), {"full_matrices": True}, no_grad=True,
         bcast=(((2, 2, 3),),), label="full", gauge=True),
    Spec("svdvals", ((4, 3),), lambda a: np.linalg.svd(a, compute_uv=False),
         bcast=(((2, 3, 5),), ((3, 3),)), tol=TOL),
    Spec("qr", ((5, 3),), _qr_ref(False), {"complete": False},
         bcast=(((2, 3, 3),), ((2, 3, 5),)), tol=TOL, gauge=True),
    Spec("qr", ((5, 3),), _qr_ref(True), {"complete": True}, no_grad=True, label="complete",
         gauge=True),
    Spec("eig", SQ, lambda a: pack(list(np.linalg.eig(a)), a.ndim - 2).astype(
         np.result_type(a.dtype, np.complex64)),
         gens=wellcond, bcast=SQ_B, phase=True),
    Spec("sylvester", ((3, 3), (2, 2), (3, 2)),
         sla.solve_sylvester,
         gens=(wellcond, wellcond, normal), bcast=(((2, 3, 3), (2, 2, 2), (2, 3, 2)),), tol=TOL),
    Spec("sqrtm", SQ, lambda a: sla.sqrtm(a).astype(np.result_type(a.dtype, np.complex64)),
         gens=wellcond, bcast=SQ_B, tol=TOL),
    Spec("sqrtm", SQ, lambda a: sla.sqrtm(a).astype(np.result_type(a.dtype, np.complex64)),
         gens=normal, tol=TOL, label="negative-eigenvalues"),
    Spec("expm", SQ, sla.expm,
         gens=lambda r, s: 0.5 * r.standard_normal(s), bcast=SQ_B, tol=TOL),
] + [
    Spec("triangular_solve", ((4, 4), (4, 2)), tri_ref(lo, tr, un),
         {"lower": lo, "trans": tr, "unit_diagonal": un}, gens=(triangular, normal),
         bcast=(((2, 3, 3), (2, 3, 2)), ((64, 3, 3), (64, 3, 2))), tol=TOL,  # (substitution)
         label=f"{'L' if lo else 'U'}{'T' if tr else 'N'}{'u' if un else ''}")
    for lo in (True, False) for tr in (False, True) for un in (False, True)
]
