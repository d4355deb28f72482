"""The peer Triton kernels of the benchmark.

add_k, silu_fma_k, softmax_k, ln_k, mm_k (the tutorial matmul with its
autotune configs) and attn_k (FA2-style attention) are copied verbatim from
../shared/bench/peers.py (the project's shared peer script, which runs its
benchmarks at import time and so cannot be imported); BENCH.md asks for
exactly these peers. rmsnorm_k, denoise_k, rope_k, attn_bsparse_k,
decode_paged_k and grouped_mm_k cover workloads peers.py lacks, written in the same style (marked "added" below).

Imported only on the GPU machine (needs triton)."""
import triton
import triton.language as tl


# ---------------------------------------------------------------- verbatim from peers.py

@triton.jit
def add_k(x, y, o, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


@triton.jit
def silu_fma_k(a, b, c, o, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    t = tl.load(a + offs, mask=m).to(tl.float32) + tl.load(b + offs, mask=m).to(tl.float32) * tl.load(c + offs, mask=m).to(tl.float32)
    tl.store(o + offs, (t * tl.sigmoid(t)).to(tl.bfloat16), mask=m)


@triton.jit
def softmax_k(out, inp, in_stride, out_stride, n_rows, n_cols, BLOCK: tl.constexpr, num_stages: tl.constexpr):
    start = tl.program_id(0); step = tl.num_programs(0)
    for r in tl.range(start, n_rows, step, num_stages=num_stages):
        cols = tl.arange(0, BLOCK)
        row = tl.load(inp + r * in_stride + cols, mask=cols < n_cols, other=-float("inf"))
        row = row - tl.max(row, axis=0)
        num = tl.exp(row)
        tl.store(out + r * out_stride + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)


@triton.jit
def ln_k(X, Y, W, Bb, stride, N, eps, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    cols = tl.arange(0, BLOCK); m = cols < N
    x = tl.load(X + r * stride + cols, mask=m, other=0.).to(tl.float32)
    mean = tl.sum(x, 0) / N
    d = tl.where(m, x - mean, 0.)
    rstd = 1 / tl.sqrt(tl.sum(d * d, 0) / N + eps)
    w = tl.load(W + cols, mask=m); bb = tl.load(Bb + cols, mask=m)
    tl.store(Y + r * stride + cols, (d * rstd * w + bb).to(tl.bfloat16), mask=m)


# ---------------------------------------------------------------- added (same style)

@triton.jit
def rmsnorm_k(X, Y, W, stride, N, eps, BLOCK: tl.constexpr):
    # added: y = x * rsqrt(mean(x^2) + eps) * w, bf16 in/out, f32 inside (ln_k's form)
    r = tl.program_id(0)
    cols = tl.arange(0, BLOCK); m = cols < N
    x = tl.load(X + r * stride + cols, mask=m, other=0.).to(tl.float32)
    rstd = 1 / tl.sqrt(tl.sum(x * x, 0) / N + eps)
    w = tl.load(W + cols, mask=m).to(tl.float32)
    tl.store(Y + r * stride + cols, (x * rstd * w).to(tl.bfloat16), mask=m)


@triton.jit
def denoise_k(xn, eps, prev, o, sab_t, alpha_t, t, w, lo, hi, n, BLOCK: tl.constexpr):
    # added: stdlib/diffusion.blk denoise_blend — denoise, temporal blend, clamp (bf16, f32 inside)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    sab = tl.load(sab_t + t); a = tl.load(alpha_t + t)
    d = (tl.load(xn + offs, mask=m).to(tl.float32) - sab * tl.load(eps + offs, mask=m).to(tl.float32)) / a
    v = w * d + (1.0 - w) * tl.load(prev + offs, mask=m).to(tl.float32)
    tl.store(o + offs, tl.minimum(tl.maximum(v, lo), hi).to(tl.bfloat16), mask=m)


@triton.jit
def rope_k(out, x, cos_t, sin_t, seq, heads, D: tl.constexpr, BH: tl.constexpr):
    # added: stdlib/attn_variants.blk rope — rotate-half RoPE of x[n_tokens, heads, D] bf16,
    # f32 cos/sin tables [max_pos, D/2], position = token % seq; grid (n_tokens, cdiv(heads, BH))
    tok = tl.program_id(0); p = tok % seq
    d = tl.arange(0, D // 2)
    c = tl.load(cos_t + p * (D // 2) + d); s = tl.load(sin_t + p * (D // 2) + d)
    h = tl.program_id(1) * BH + tl.arange(0, BH)
    m = h[:, None] < heads
    p1 = tok.to(tl.int64) * heads * D + h[:, None] * D + d[None, :]
    x1 = tl.load(x + p1, mask=m).to(tl.float32); x2 = tl.load(x + p1 + D // 2, mask=m).to(tl.float32)
    tl.store(out + p1, (x1 * c[None, :] - x2 * s[None, :]).to(tl.bfloat16), mask=m)
    tl.store(out + p1 + D // 2, (x2 * c[None, :] + x1 * s[None, :]).to(tl.bfloat16), mask=m)


@triton.jit
def attn_bsparse_k(Q, K, V, O, KV_PTR, KV_IDX, sm_scale, N_CTX, D: tl.constexpr, BM: tl.constexpr,
                   BN: tl.constexpr):
    # added: stdlib/fused_attn.blk attn_fwd_blocksparse's loop in attn_k's form — query block sm visits
    # key blocks KV_IDX[KV_PTR[sm] .. KV_PTR[sm + 1] - 1] (CSR, shared by the heads); not causal,
    # N_CTX a multiple of BM and BN, no empty list (the bench's pattern)
    sm = tl.program_id(0); bh = tl.program_id(1)
    base = bh.to(tl.int64) * N_CTX * D
    om = sm * BM + tl.arange(0, BM); od = tl.arange(0, D); on = tl.arange(0, BN)
    q = tl.load(Q + base + om[:, None] * D + od[None, :])
    m_i = tl.full((BM,), -float("inf"), tl.float32); l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    qk_scale = sm_scale * 1.44269504
    for j in range(tl.load(KV_PTR + sm), tl.load(KV_PTR + sm + 1)):
        s = tl.load(KV_IDX + j) * BN
        k = tl.load(K + base + (s + on)[None, :] * D + od[:, None])
        qk = tl.dot(q, k) * qk_scale
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V + base + (s + on)[:, None] * D + od[None, :])
        acc = tl.dot(p.to(tl.bfloat16), v, acc)
        m_i = m_new
    tl.store(O + base + om[:, None] * D + od[None, :], (acc / l_i[:, None]).to(tl.bfloat16))



@triton.jit
def decode_paged_k(Q, KC, VC, TABLE, LENS, O, sm_scale, H, MAX_BLOCKS, D: tl.constexpr, PAGE: tl.constexpr,
                   GROUP: tl.constexpr, BN: tl.constexpr):
    # added: stdlib/fused_attn.blk attn_decode_paged in one pass (no split-K, no combine) — one program per
    # batch*query head walks its sequence's keys BN at a time (BN // PAGE pages through the block table
    # TABLE[b * MAX_BLOCKS + page]); q, O [B, H, D] bf16; caches [blocks, PAGE, H / GROUP, D] bf16, query
    # head h reads K/V head h // GROUP; online softmax in f32; grid (B * H,)
    bh = tl.program_id(0); b = bh // H; kvh = (bh % H) // GROUP
    KH = H // GROUP
    n = tl.load(LENS + b)
    od = tl.arange(0, D); on = tl.arange(0, BN)
    q = tl.load(Q + bh.to(tl.int64) * D + od).to(tl.float32)
    m_i = -float("inf"); l_i = 0.0
    acc = tl.zeros((D,), tl.float32)
    qk_scale = sm_scale * 1.44269504
    for s in range(0, n, BN):
        pos = s + on; valid = pos < n
        page = tl.load(TABLE + b * MAX_BLOCKS + pos // PAGE, mask=valid, other=0)
        rows = (page.to(tl.int64) * PAGE + pos % PAGE) * KH + kvh
        k = tl.load(KC + rows[:, None] * D + od[None, :], mask=valid[:, None], other=0.).to(tl.float32)
        qk = tl.where(valid, tl.sum(k * q[None, :], 1) * qk_scale, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 0))  # finite: every step holds a key < n
        p = tl.math.exp2(qk - m_new)
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 0)
        v = tl.load(VC + rows[:, None] * D + od[None, :], mask=valid[:, None], other=0.).to(tl.float32)
        acc = acc * alpha + tl.sum(p[:, None] * v, 0)
        m_i = m_new
    tl.store(O + bh.to(tl.int64) * D + od, (acc / l_i).to(tl.bfloat16))


@triton.jit
def grouped_mm_k(X, W, O, TILE_E, TILE_M, TILE_END, NT, N, K, BM: tl.constexpr, BN: tl.constexpr,
                 BK: tl.constexpr, G: tl.constexpr):
    # added: stdlib/moe.blk moe_grouped_gemm in mm_k's form — O[r] = X[r] @ W[e]^T for the rows r of expert e
    # (X [R, K] sorted by expert, W [E, N, K], O [R, N] bf16, f32 accumulation); one launch over the NT row
    # tiles of a host-built table (tile i: expert TILE_E[i], rows TILE_M[i] .. min(TILE_M[i] + BM, TILE_END[i])
    # - 1) times the N tiles, in the tutorial's grouped order; K a multiple of BK; grid (NT * cdiv(N, BN),)
    pid = tl.program_id(0)
    npm = NT; npn = tl.cdiv(N, BN)
    gid = pid // (G * npn); fm = gid * G; gs = min(npm - fm, G)
    pm = fm + (pid % (G * npn)) % gs; pn = (pid % (G * npn)) // gs
    e = tl.load(TILE_E + pm); m0 = tl.load(TILE_M + pm); m1 = tl.load(TILE_END + pm)
    om = tl.minimum(m0 + tl.arange(0, BM), m1 - 1).to(tl.int64)  # rows past the expert's end re-read its last
    on = (pn * BN + tl.arange(0, BN)) % N; ok = tl.arange(0, BK)
    ap = X + om[:, None] * K + ok[None, :]
    bp = W + e.to(tl.int64) * N * K + on[None, :] * K + ok[:, None]  # [BK, BN]: W[e]^T
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(tl.load(ap), tl.load(bp), acc)
        ap += BK; bp += BK
    cm = m0 + tl.arange(0, BM); cn = pn * BN + tl.arange(0, BN)
    tl.store(O + cm.to(tl.int64)[:, None] * N + cn[None, :], acc.to(tl.bfloat16), mask=(cm[:, None] < m1) & (cn[None, :] < N))

# ---------------------------------------------------------------- verbatim from peers.py: matmul, attention
@triton.autotune(configs=[
    triton.Config({'BM': 128, 'BN': 256, 'BK': 64, 'G': 8}, num_stages=3, num_warps=8),
    triton.Config({'BM': 128, 'BN': 128, 'BK': 64, 'G': 8}, num_stages=4, num_warps=8),
    triton.Config({'BM': 128, 'BN': 256, 'BK': 64, 'G': 8}, num_stages=4, num_warps=8),
    triton.Config({'BM': 256, 'BN': 128, 'BK': 64, 'G': 8}, num_stages=3, num_warps=8),
], key=['M', 'N', 'K'])
@triton.jit
def mm_k(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, G: tl.constexpr):
    pid = tl.program_id(0)
    npm = tl.cdiv(M, BM); npn = tl.cdiv(N, BN)
    gid = pid // (G * npn); fm = gid * G; gs = min(npm - fm, G)
    pm = fm + (pid % (G * npn)) % gs; pn = (pid % (G * npn)) // gs
    om = (pm * BM + tl.arange(0, BM)) % M; on = (pn * BN + tl.arange(0, BN)) % N; ok = tl.arange(0, BK)
    ap = a + om[:, None] * sam + ok[None, :] * sak
    bp = b + ok[:, None] * sbk + on[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(tl.load(ap), tl.load(bp), acc)
        ap += BK * sak; bp += BK * sbk
    cm = pm * BM + tl.arange(0, BM); cn = pn * BN + tl.arange(0, BN)
    tl.store(c + cm[:, None] * scm + cn[None, :] * scn, acc.to(tl.bfloat16), mask=(cm[:, None] < M) & (cn[None, :] < N))

@triton.jit
def attn_k(Q, K, V, O, sm_scale, N_CTX, H: tl.constexpr, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, CAUSAL: tl.constexpr):
    sm = tl.program_id(0); bh = tl.program_id(1)
    base = bh.to(tl.int64) * N_CTX * D
    om = sm * BM + tl.arange(0, BM); od = tl.arange(0, D); on = tl.arange(0, BN)
    q = tl.load(Q + base + om[:, None] * D + od[None, :])
    m_i = tl.full((BM,), -float("inf"), tl.float32); l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    qk_scale = sm_scale * 1.44269504
    hi = (sm + 1) * BM if CAUSAL else N_CTX
    for s in range(0, hi, BN):
        k = tl.load(K + base + (s + on)[None, :] * D + od[:, None])
        qk = tl.dot(q, k) * qk_scale
        if CAUSAL:
            qk = tl.where(om[:, None] >= (s + on)[None, :], qk, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V + base + (s + on)[:, None] * D + od[None, :])
        acc = tl.dot(p.to(tl.bfloat16), v, acc)
        m_i = m_new
    tl.store(O + base + om[:, None] * D + od[None, :], (acc / l_i[:, None]).to(tl.bfloat16))
