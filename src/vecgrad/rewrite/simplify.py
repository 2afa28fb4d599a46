"""Algebraic simplification: the table of rewrite rules, in the order they are tried (see
`rewrite` for the engine). The rules live with their idea: identities (neutral elements,
folding), regions (whole-array indexing, scans read at their end), scalings (small factors
onto the smallest operand), factors (a large factor shared by a sum's terms taken out),
contract and distribute (sums and contractions), layout (transposes, reshapes, broadcasts),
narrow and hoist (reads of results, gathers), segments
(scatters and segment sums), addchain (sums of many terms), softmax (stable log-domain forms),
complexparts, and batch's windows and col2im."""
from __future__ import annotations

from .. import primitives as P
from ..batch.col2im import taps_as_coefficients
from ..batch.convgrads import windows_added_by_residues
from ..batch.patches import einsum_of_kept_patches
from ..batch.patchgrads import patches_added_gathered
from ..batch.taps import elementwise_of_windows_tap_major, extreme_of_windows_tap_major
from ..batch.winadds import windows_added_einsum
from ..batch.windows import (
    einsum_of_windows,
    elementwise_of_windows,
    reduce_of_view_rows,
    strided_is_basic,
    sum_of_windows,
    windows_add_loops_first,
    windows_added_product,
)
from ..ir import Graph
from .addchain import repeated_terms, small_terms_first
from .blocksums import segment_sum_of_blocks, total_of_reshape
from .cells import gather_of_cells, scatter_into_cells
from .closed_form import closed_affine_scan
from .columns import columns_as_contraction
from .comoments import comoment_of_running_means
from .complexparts import (
    conj_of_scaled_conj,
    imag_of_conj,
    imag_of_real,
    of_conj,
    of_real,
)
from .contract import (
    contraction_of_scatter_add,
    einsum_of_broadcast,
    norm_of_squares,
    scale_into_contraction,
    sum_of_einsum,
    sum_of_neg,
    sum_of_product,
    sum_of_scaled,
    sum_of_sum,
)
from .correlate import correlate_of_zero_padded, read_of_correlate
from .counts import product_of_counts
from .diagonals import einsum_of_diagonal_pairs
from .distribute import (
    einsum_of_broadcast_sum,
    einsum_of_own_sums,
    sqdist_of_differences,
    sum_of_shared_contractions,
)
from .engine import Rule, rewrite
from .factors import factor_out_of_sum
from .fewreads import read_of_one_part, whole_read_of_reshape
from .hoist import einsum_of_gather, einsum_of_pair_gathers, gather_of_gather
from .identities import (
    double,
    einsum_by_one,
    einsum_by_ones,
    einsum_of_einsum,
    fold,
    neg_neg,
    no_axes,
    periodic_operand,
    plus_zero,
    reshape_reshape,
    same_shape,
    times_one,
    transpose_id,
    transpose_transpose,
    uniform_operand,
    where_of_where,
)
from .layout import (
    concatenate_of_empty,
    concatenate_of_slices,
    einsum_of_transpose,
    einsum_permutation,
    elementwise_of_broadcasts,
    elementwise_of_explicit_broadcast,
    elementwise_of_reshapes,
    elementwise_of_transposes,
    read_of_write,
    reduction_of_transpose,
    sum_of_reshaped_view,
    writes_tiling_zeros,
)
from .logistic import log_of_complement, logistic_of_exp
from .narrow import read_of_contraction, read_of_elementwise
from .onehot import einsum_of_scattered
from .orderings import gather_of_picks, scatter_of_picks, scatter_of_slice, sort_by_permutation
from .reads import read_of_broadcast, read_of_read, read_of_reshaped
from .regions import add_everywhere, end_of_scan, full_index, index_is_reshape
from .rowreads import join_of_reads
from .runrows import running_extremes_read_at_ends
from .scalings import (
    common_factor,
    div_of_neg,
    div_of_scaled,
    einsum_of_neg,
    into_linear_operand,
    neg_into_small_factor,
    neg_onto_small_factor,
    scalar_out,
    shared_scale,
    small_factors_first,
    small_quotients_first,
)
from .segments import (
    gather_of_broadcast,
    grid_of_gathers,
    row_into_segment_sum,
    scatter_of_scaled,
    segment_sum_of_boxes,
    segment_sum_of_shifts,
    slice_of_gather,
    sum_of_scatter,
    sum_of_segment_sums,
)
from .softmax import log_of_logistic, logistic_share, logsumexp_pattern, softmax_pattern
from .symmetry import einsum_of_symmetric
from .telescope import end_of_telescoping_scan
from .views import elementwise_of_reshaped_view, read_of_reshaped_view

RULES: list[Rule] = [
    *[Rule(p, fold, "f(constants) = its value, computed once while compiling")
      for p in P.REGISTRY.values()],
    Rule(P.einsum, comoment_of_running_means,
         "sum_t (x_t - mx_{t-1})(y_t - my_t) = sum_t (x_t - mx_T)(y_t - my_T), mx, my the "
         "running means (Welford's co-moment, and with t/(t+1) dx dy): two-pass"),
    *[Rule(p, uniform_operand, "f(x, full(c)) = f(x, c) by broadcasting")
      for p in P.REGISTRY.values() if p.elementwise],
    *[Rule(p, periodic_operand, "f(reshape(x), C) = reshape(f(x, C')), C' one period of "
           "C in x's shape") for p in P.REGISTRY.values() if p.elementwise],
    Rule(P.mul, times_one, "x * 1 = x"),
    Rule(P.mul, product_of_counts, "cast(a, f) * cast(b, f) = cast(a * b, f), a and b small "
         "integer counts"),
    Rule(P.mul, small_factors_first, "a * (b * x) = (a * b) * x, a and b small"),
    Rule(P.mul, scalar_out, "(s * x) * y = s * (x * y), s a scalar, x and y large"),
    Rule(P.mul, small_quotients_first, "a * (x / b) = (a / b) * x, a and b small"),
    Rule(P.neg, neg_into_small_factor, "-(a * x) = (-a) * x, a small"),
    Rule(P.mul, neg_onto_small_factor, "(-x) * a = x * (-a), a small"),
    *[Rule(p, into_linear_operand, "-L(g, ..) = L(-g, ..), s * L(g, ..) = L(s * g, ..), L "
           "linear in g (reduce_prod_grad, cumprod_grad), g small or constant")
      for p in (P.neg, P.mul)],
    *[Rule(p, no_axes, "reduce(x, axes=()) = x: nothing reduced") for p in
      (P.reduce_sum, P.reduce_max, P.reduce_min, P.reduce_prod)],
    Rule(P.reduce_sum, sum_of_neg, "sum(-x) = -sum(x)"),
    Rule(P.reduce_sum, sum_of_sum, "sum(sum(x, A), B) = sum(x, A and B): one pass"),
    Rule(P.reduce_sum, sum_of_scaled, "sum(s * x) = s * sum(x), s a scalar, the sum smaller"),
    Rule(P.einsum, einsum_of_neg,
         "einsum(-x, y) = -einsum(x, y), einsum(s * x, y) = s * einsum(x, y), the result "
         "smaller"),
    Rule(P.div, div_of_neg, "(-x) / a = x / (-a), a small"),
    Rule(P.div, div_of_scaled, "(a * x) / b = x * (a / b), a and b small"),
    Rule(P.reduce_sum, sum_of_einsum, "sum(einsum(a, b), axes) = einsum(a, b) to fewer axes"),
    Rule(P.add, plus_zero, "x + 0 = x"),
    Rule(P.add, double, "x + x = 2 * x"),
    *[Rule(p, common_factor, "x * a + x * b = x * (a + b), a and b small (and -)")
      for p in (P.add, P.sub)],
    *[Rule(p, factor_out_of_sum, "x * A + x * B = x * (A + B), x large, A and B products "
           "(and -): fewer passes over large arrays") for p in (P.add, P.sub)],
    *[Rule(p, shared_scale, "a * x + b * y = a * (x + y), b = a (a * (x - y), b = -a), "
           "constant scalars (and -)")
      for p in (P.add, P.sub)],
    Rule(P.setitem_add, add_everywhere, "x.at[:, ..., :].add(v) = x + v; "
         "x.at[::-1, :].add(v) = x + v[::-1, :]"),
    Rule(P.add, repeated_terms, "a + t + b + t = (a + b) + 2 * t"),
    Rule(P.add, columns_as_contraction, "sum_j B[:, j] * c[k_j] = einsum(B[:, J], c[K]): "
         "distinct columns of one array scaled by entries of one vector"),
    Rule(P.add, small_terms_first, "a + r1 + b + r2 = (a + b) + (r1 + r2), the r's small"),
    Rule(P.neg, neg_neg, "-(-x) = x"),
    Rule(P.where, where_of_where, "where(m, where(m, x, y), z) = where(m, x, z) (and in z)"),
    Rule(P.log, log_of_logistic, "log(logistic(x)) = -logaddexp(0, -x)"),
    Rule(P.div, logistic_of_exp, "1 / (1 + exp(u)) = logistic(-u)"),
    *[Rule(p, log_of_complement, "log(1 - logistic(z)) = log1p(-logistic(z)) = "
           "-logaddexp(0, z)") for p in (P.log, P.log1p)],
    Rule(P.einsum, einsum_by_one, "einsum(1, x) = x"),
    Rule(P.einsum, einsum_by_ones, "einsum(ones, x) = x, broadcast over the ones' own axes"),
    Rule(P.einsum, lambda e, c: einsum_of_einsum(e, c) if len(e.inputs) == 1 else None,
         "einsum('ii->i', einsum(a, b)) = einsum(a, b) with letters renamed"),
    Rule(P.reshape, same_shape, "reshape(x, x.shape) = x"),
    Rule(P.reshape, reshape_reshape, "reshape(reshape(x, s1), s2) = reshape(x, s2)"),
    Rule(P.transpose, transpose_id, "transpose(x, id) = x"),
    Rule(P.transpose, transpose_transpose, "transpose(transpose(x, p), q) = transpose(x, p[q])"),
    Rule(P.broadcast_to, same_shape, "broadcast_to(x, x.shape) = x"),
    Rule(P.getitem, lambda e, c: e.inputs[0] if full_index(e) else None, "x[:, ..., :] = x"),
    Rule(P.getitem, index_is_reshape, "x[:, None] = reshape(x)"),
    Rule(P.getitem, end_of_telescoping_scan, "affine_scan(c0, exp(u[k:k+T] - u[k+1:k+T+1]), "
         "b)[T-1] = exp(u[k] - u[k+T]) c0 + sum_s exp(u[k+s+1] - u[k+T]) b[s]"),
    Rule(P.getitem, end_of_scan, "cumsum(x, a)[.., -1, ..] = sum(x, a), and cumprod, cummax, "
         "cummin alike (the first entry of a reverse scan)"),
    Rule(P.add, sum_of_segment_sums,
         "segment_sum(u, i) + segment_sum(v, j) = segment_sum(concat(u, v), concat(i, j))"),
    *[Rule(p, grid_of_gathers, "f(x[i1], y[i2]) = f(x[I][:, None], y[J][None]) reshaped, "
           "the pairs (i1, i2) all of I x J") for p in P.REGISTRY.values() if p.elementwise],
    Rule(P.affine_scan, closed_affine_scan, "affine_scan(c0, a, b) = P * (c0 + cumsum(b / P)), "
         "a constant, P = cumprod(a) well inside the floating-point range (or within blocks "
         "of steps where it is)"),
    Rule(P.getitem, read_of_one_part, "concatenate(xs)[.., i, ..] = xs_i[.., 0, ..], xs_i one row"),
    Rule(P.getitem, whole_read_of_reshape, "reshape(x)[r] = reshape(x), r every element"),
    Rule(P.reduce_sum, total_of_reshape, "sum(reshape(x), every axis) = sum(x, every axis)"),
    Rule(P.segment_sum, segment_sum_of_blocks, "segment_sum(concatenate(x_0, .., x_K-1), ids) "
         "= stack(sum(x_p(k))), each part one whole segment: no joined copy, no scatter"),
    Rule(P.segment_sum, segment_sum_of_shifts, "segment_sum(x[ids], seg) = sum of shifted "
         "slices x[lo+d:hi+d] at lo:hi, the (seg, ids) pairs on a few diagonals"),
    Rule(P.segment_sum, segment_sum_of_boxes, "segment_sum(x[rows, cols], seg) over x's pixels "
         "= sum of shifted boxes x[lo+d:hi+d] at lo:hi, the pairs on a few diagonals of the grid"),
    Rule(P.reduce_sum, sum_of_scatter,
         "sum(scatter_add_along(g, i, a), dims) = scatter_add_along(g, i) with dims joined to a"),
    *[Rule(p, sort_by_permutation, "sort(x) = take_along(x, argsort(x)), argsort(x) computed "
           "anyway (partition alike)") for p in (P.sort, P.partition)],
    Rule(P.scatter_add_along, scatter_of_picks, "scatter_add_along(zeros.at[K].add(v), "
         "argsort(x)) = scatter_add_along(v, first index of x == sort(x)[K]), K a few "
         "positions"),
    Rule(P.scatter_add_along, scatter_of_slice, "scatter_add_along(zeros.at[s].set(v), i) = "
         "scatter_add_along(v, i[s]), s a slice along the axis"),
    Rule(P.take_along, gather_of_picks, "take_along(x, argsort(x)[K]) = sort(x)[K], K a few "
         "positions and the argsort read only at a few"),
    Rule(P.take_along, gather_of_broadcast, "take_along(broadcast_to(x), i) = take_along(x, i)"),
    Rule(P.scatter_add_along, scatter_of_scaled,
         "scatter_add_along(c * g, i) = c * scatter_add_along(g, i), c = -1 or a scalar"),
    Rule(P.einsum, einsum_of_diagonal_pairs, "einsum(x[I], y[J]) over the terms = einsums of "
         "slices x[lo:hi], y[lo+d:hi+d] joined and gathered, the pairs (I, J) on a few diagonals"),
    Rule(P.einsum, einsum_of_gather, "einsum(x[ids], y) = einsum(x, y)[ids]: on x's rows, "
         "when fewer"),
    Rule(P.einsum, einsum_of_pair_gathers, "einsum('ak,ak->a', x[I], y[J]) = (x @ y.T)"
         ".ravel()[I * m + J]: dense pair sets"),
    Rule(P.take, gather_of_gather, "x[a][b] = x[a[b]]"),
    Rule(P.getitem, gather_of_gather, "x[a][b] = x[a[b]]"),
    Rule(P.getitem, slice_of_gather, "take_along(x, i)[s] = take_along(x[s], i[s]), slices its "
         "only readers"),
    Rule(P.setitem_add, scatter_into_cells, "x.at[r, c].add(u) = x + segment_sum(u, r * W + c) "
         "reshaped (no add into zeros); of segment_sum(v, i): segment_sum(v, (r * W + c)[i])"),
    Rule(P.getitem, gather_of_cells, "x[r, c] = x.reshape(H * W, ...)[r * W + c], the cells "
         "an eighth of x or more"),
    Rule(P.setitem_add, row_into_segment_sum,
         "segment_sum(u, i).at[r].add(v) = segment_sum(concat(u, v), concat(i, [r]))"),
    Rule(P.getitem, read_of_write,
         "x.at[w].set(v)[r] = v[r - w] for r inside w, = x[r] for r apart from w"),
    Rule(P.getitem, read_of_reshaped_view, "reshape(windows(x))[j::k] = x[j:j+n]: a read at "
         "whole steps of flattened view axes is a view of x"),
    Rule(P.getitem, read_of_read, "x[w][r] = x[w∘r], ints and slices"),
    Rule(P.getitem, read_of_reshaped, "reshape(x)[j::k] = x[:, j] (x: (n, k)): flattened axes "
         "read apart"),
    Rule(P.getitem, read_of_broadcast, "broadcast_to(x, S)[.., j, ..] = x[.., 0, ..]: a "
         "broadcast axis read at one position"),
    Rule(P.getitem, read_of_elementwise, "f(a, b)[r] = f(a[r], b[r]), f(a, b) read only there"),
    Rule(P.getitem, read_of_contraction,
         "einsum(xs)[r] = einsum(xs[r]), sum(x)[r] = sum(x[r]), read only there"),
    Rule(P.cast, same_shape, "x.astype(x.dtype) = x"),
    Rule(P.conj, of_real, "conj(x) = x for real x"),
    Rule(P.real, of_real, "real(x) = x for real x"),
    Rule(P.imag, imag_of_real, "imag(x) = zeros for real x"),
    *[Rule(p, of_conj, f"{p.name}(conj(x)) = " + ("x" if p is P.conj else f"{p.name}(x)"))
      for p in (P.conj, P.real, P.abs_)],
    Rule(P.imag, imag_of_conj, "imag(conj(x)) = -imag(x)"),
    Rule(P.conj, conj_of_scaled_conj, "conj(r * conj(z)) = r * z, conj(conj(z) / r) = z / r "
         "for real r"),
    Rule(P.concatenate, concatenate_of_empty, "concatenate(x, empty, y) = concatenate(x, y)"),
    Rule(P.concatenate, concatenate_of_slices, "concatenate(x[a:b], x[b:c]) = x[a:c]"),
    *[Rule(p, join_of_reads, "join(x[.., p_1, ..], .., x[.., p_k, ..]) = x[.., [p_1, .., p_k], "
           "..]: reads at single positions stacked or concatenated") for p in (P.concatenate,
                                                                              P.stack)],
    Rule(P.setitem_add, writes_tiling_zeros,
         "zeros.at[:b].add(u).at[b:].add(v) = concatenate(u, v): pieces that tile the array"),
    Rule(P.div, softmax_pattern, "exp(x - max x) / sum(exp(x - max x)) = softmax(x)"),
    Rule(P.add, logsumexp_pattern, "log(sum(exp(x - m))) + m = logsumexp(x), m = max x"),
    Rule(P.log, logsumexp_pattern, "log(sum(exp(x))) = logsumexp(x)"),
    Rule(P.where, logistic_share, "where(x == L, 1, exp(x - L)) = logistic(x - k), L = "
         "logaddexp(x, k), k a finite constant"),
    *[Rule(p, elementwise_of_transposes, "f(x.T, y.T) = f(x, y).T")
      for p in P.REGISTRY.values() if p.elementwise],
    *[Rule(p, elementwise_of_reshapes, "f(reshape(x), reshape(y)) = reshape(f(x, y))")
      for p in P.REGISTRY.values() if p.elementwise],
    *[Rule(p, elementwise_of_explicit_broadcast, "f(broadcast_to(y), x) = f(y, x), implicitly")
      for p in P.REGISTRY.values() if p.elementwise],
    Rule(P.einsum, einsum_permutation, "einsum('abc->cba', x) = transpose(x)"),
    *[Rule(p, elementwise_of_broadcasts, "f(bcast(y), x) = f(y, x) by NumPy broadcasting")
      for p in P.REGISTRY.values() if p.elementwise],
    *[Rule(p, reduction_of_transpose, "reduce(x.T, axes) = reduce(x, axes').T")
      for p in (P.reduce_sum, P.reduce_max, P.reduce_min, P.softmax, P.logsumexp)],
    Rule(P.reduce_sum, sum_of_reshaped_view,
         "sum(reshape(view), axes) = reshape(sum(view, axes')), the axes whole axes of view"),
    Rule(P.einsum, einsum_of_transpose, "einsum(.., x.T, ..) = einsum(.., x, ..), letters permuted"),
    *[Rule(p, contraction_of_scatter_add,
           "contract(x.at[i].add(v)) = contract(x) + contract(v) over the region i")
      for p in (P.einsum, P.reduce_sum)],
    Rule(P.mul, scale_into_contraction, "c * einsum(a, b) = einsum(c * a, b), a the smaller"),
    Rule(P.sqrt, norm_of_squares, "sqrt(einsum(x, x)) = norm(x)"),
    Rule(P.reduce_sum, sum_of_product, "sum(a * b, axes) = einsum(a, b): no product array"),
    Rule(P.einsum, einsum_of_broadcast,
         "einsum(.., reshape(broadcast(y)), ..) = reshape(einsum(.., y, ..)): no broadcast copy"),
    Rule(P.einsum, einsum_of_own_sums,
         "einsum('ab,bc->bc', p, y) = einsum('b,bc->bc', einsum('ab->b', p), y)"),
    Rule(P.einsum, sqdist_of_differences,
         "einsum('ijk,ijk->ij', x_i - y_j, x_i - y_j) = sqdist(x, y): no (n, m, k) differences"),
    *[Rule(p, sum_of_shared_contractions,
           "einsum(x, a) + einsum(x, b) = einsum(x, a + b.T), a and b small (and for -)")
      for p in (P.add, P.sub)],
    Rule(P.einsum, einsum_of_broadcast_sum,
         "einsum(.., a - b, ..) = einsum(.., a, ..) - einsum(.., b, ..), a and b broadcast"),
    Rule(P.strided, strided_is_basic, "strided(x) with axes that tile x = x[slices] reshaped"),
    Rule(P.einsum, einsum_of_windows,
         "einsum(windows(x), w) = sum_a einsum(x[a:a+T], w[a]): one product per offset"),
    Rule(P.einsum, einsum_of_kept_patches,
         "einsum(patches(x), y) -> ..ab = stack_ab einsum(x[a:a+H, b:b+W], y): offsets kept "
         "(or einsum(copy(patches(x)), y))"),
    Rule(P.reduce_sum, sum_of_windows, "sum(windows(x), window axis) = sum_a x[a:a+T]"),
    *[Rule(p, reduce_of_view_rows, "reduce(windows(x), axes along whole axes of x) = "
           "windows(reduce(x, those axes)): once per element")
      for p in (P.reduce_sum, P.reduce_max, P.reduce_min)],
    *[Rule(p, extreme_of_windows_tap_major, "max(windows(x), axes) = max(windows(x) in memory "
           "order, axes): long inner runs") for p in (P.reduce_max, P.reduce_min)],
    Rule(P.strided_add, windows_added_product,
         "windows(out) += x * w = sum_a out[a:a+T] += x * w[a]: no (T, k) product"),
    Rule(P.setitem_add, taps_as_coefficients,
         "dx[S_a] += g (x) w_a for taps a = dx += Z @ stack(w_a), Z[S_a, a] = g (col2im)"),
    Rule(P.strided_add, patches_added_gathered,
         "patches(out) += g (x) q = out += einsum(antidiagonals(pad(g)), copy(patches(pad(q)))): "
         "each pixel gathers its terms"),
    Rule(P.strided_add, windows_added_by_residues,
         "windows(out) += einsum(g, w), offsets in w alone = out += einsum(windows(pad(g)), "
         "w by residue class): a convolution's input cotangent as one product"),
    Rule(P.strided_add, windows_added_einsum,
         "windows(out) += einsum(g, w) = sum_i out[view at i] += einsum(g, w at i): no (k, T) "
         "product"),
    Rule(P.strided_add, windows_add_loops_first,
         "windows(out) += einsum(..->ia) = windows'(out) += einsum(..->ai): offsets first"),
    *[Rule(p, elementwise_of_reshaped_view, "f(reshape(windows(x))) = reshape(windows(f(x))): "
           "once per element") for p in P.REGISTRY.values() if p.elementwise],
    *[Rule(p, elementwise_of_windows, "f(windows(x), c) = windows(f(x, c)): once per element")
      for p in P.REGISTRY.values() if p.elementwise],
    *[Rule(p, elementwise_of_windows_tap_major, "f(windows(x), y) = f(windows(x) in "
           "memory order, y).T: long inner runs") for p in P.REGISTRY.values() if p.elementwise],
    Rule(P.getitem, read_of_correlate, "correlate(x, w, mode)[s:t] = correlate(x[s-o:t+k-1-o], "
         "w, 'valid'), x read as zeros beyond its ends: the outputs read only"),
    Rule(P.correlate, correlate_of_zero_padded, "correlate(zeros.at[a:b].set(g), w) = "
         "correlate(g, w, 'full') at shifted positions: the run alone"),
    Rule(P.einsum, einsum_of_scattered, "einsum(scatter(v, idx, n) as 'a', A) = einsum(v, "
         "A[idx]) (a contracted), scatter(einsum(v, B), idx) (a kept): the m entries only"),
    Rule(P.einsum, einsum_of_symmetric, "einsum(.., S as 'ij', ..) = einsum(.., S as 'ji', ..), "
         "S symmetric: one orientation, so that G^T X and G X meet"),
]


def simplify(g: Graph) -> Graph:
    """Run RULES to a fixpoint, then dead-code elimination; then the sweep that needs every
    reader of a value as RULES left them (rewrite/runrows.py)."""
    return running_extremes_read_at_ends(rewrite(g, RULES), RULES)

