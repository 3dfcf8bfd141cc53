#!/usr/bin/env python3
"""The NumPy float32 implementation of the same math on the same shapes as the Java benchmarks (bench/src/main/java/
io/attnproof/bench/Shapes.java, SinksBench.java): dsv4_attention of a uniform batch, one softmax over the narrowed raw window plus the
compressed blocks, the per-head sink in the denominator only, and GPT-OSS sinks attention (GQA, causal, windowed), written the way NumPy is written: dense additive mask,
all heads of a batch entry in one matmul against the shared K/V head, in-place elementwise steps. Prints one JSON object: per shape the mean seconds of a call and the useful flops (4 D per
query row and admitted key, as Shapes.java counts them)."""
import json
import os
import sys
import time

import numpy as np

H, D, W, RAW = 64, 512, 128, 128
F32 = np.float32


def union_attention(q, k, c, sinks, window, ratio, raw_prefix):
    """q [B,H,tq,D], k [B,tk,D] (V = K), c [B,tc,D] or None, sinks [H]; all float32."""
    b, h, tq, d = q.shape
    tk = k.shape[1]
    tc = 0 if c is None else c.shape[1]
    tk_full = raw_prefix + tk
    q0 = tk_full - tq
    keep = min(tq + window - 1, tk_full)
    base = tk_full - keep
    keys = k[:, base - raw_prefix:, :]
    if tc:
        keys = np.concatenate([keys, c], axis=1)                      # [B, n, D]
    p = q0 + np.arange(tq)[:, None]
    j = base + np.arange(keep)[None, :]
    admitted = np.concatenate([(p - window < j) & (j <= p),
                               np.arange(tc)[None, :] < (p + 1) // ratio], axis=1)
    mask = np.where(admitted, F32(0), F32(-np.inf)).astype(F32)      # [tq, n]
    n = keys.shape[1]
    scale = F32(1.0 / np.sqrt(d))
    # One shared K/V head: every head's rows go through one matmul per batch entry (a GEMM, not H GEMVs).
    scores = np.matmul(q.reshape(b, h * tq, d), keys.transpose(0, 2, 1)).reshape(b, h, tq, n)
    scores *= scale
    scores += mask
    s = sinks[None, :, None, None]
    m = np.maximum(scores.max(axis=-1, keepdims=True), s)
    scores -= m
    np.exp(scores, out=scores)
    denom = scores.sum(axis=-1, keepdims=True) + np.exp(s - m)
    out = np.matmul(scores.reshape(b, h * tq, n), keys).reshape(b, h, tq, d)
    out /= denom
    return out


def sinks_attention(q, k, v, sinks, window):
    """GPT-OSS sinks attention, q [B,Hq,T,D], k, v [B,Hkv,T,D] (GQA: query head h reads KV head h // (Hq/Hkv)),
    bottom-right causal with a sliding window, the per-head sink in the denominator only; all float32. The NumPy way:
    the query heads of one KV head in one matmul, a dense additive mask."""
    b, hq, tq, d = q.shape
    hkv, tk = k.shape[1], k.shape[2]
    g = hq // hkv
    r = np.arange(tq)[:, None] + (tk - tq)
    j = np.arange(tk)[None, :]
    admitted = (j <= r) & ((window == 0) | (j >= r - window + 1))
    mask = np.where(admitted, F32(0), F32(-np.inf)).astype(F32)      # [tq, tk]
    scale = F32(1.0 / np.sqrt(d))
    scores = np.matmul(q.reshape(b, hkv, g * tq, d), k.transpose(0, 1, 3, 2)).reshape(b, hq, tq, tk)
    scores *= scale
    scores += mask
    s = sinks[None, :, None, None]
    m = np.maximum(scores.max(axis=-1, keepdims=True), s)
    scores -= m
    np.exp(scores, out=scores)
    denom = scores.sum(axis=-1, keepdims=True) + np.exp(s - m)
    out = np.matmul(scores.reshape(b, hkv, g * tq, tk), v).reshape(b, hq, tq, d)
    out /= denom
    return out


def admitted_pairs(tq, tk, tc, raw_prefix, window, ratio):
    q0 = raw_prefix + tk - tq
    pairs = 0
    for r in range(tq):
        pos = q0 + r
        pairs += min(pos + 1, window) + min(tc, (pos + 1) // ratio)
    return pairs


def timed(fn, min_seconds=3.0, min_calls=5):
    fn()
    fn()
    times = []
    start = time.perf_counter()
    while len(times) < min_calls or time.perf_counter() - start < min_seconds:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return sum(times) / len(times), len(times)


def main():
    rng = np.random.default_rng(2026)
    shapes = {}
    for b in (1, 32, 128):
        for tc in (32, 512):
            shapes["decode_B%d_tc%d" % (b, tc)] = dict(batch=b, tq=1, tk=RAW, tc=tc, raw_prefix=4 * tc - RAW)
    shapes["prefill_tq512"] = dict(batch=1, tq=512, tk=512, tc=128, raw_prefix=0)
    out = {}
    for name, s in shapes.items():
        b = s["batch"]
        q = rng.standard_normal((b, H, s["tq"], D), dtype=F32)
        k = rng.standard_normal((b, s["tk"], D), dtype=F32)
        c = rng.standard_normal((b, s["tc"], D), dtype=F32)
        sinks = (rng.standard_normal(H, dtype=F32) + F32(np.log(RAW + s["tc"]))).astype(F32)
        fn = lambda: union_attention(q, k, c, sinks, W, 4, s["raw_prefix"])
        assert fn().dtype == F32
        seconds, calls = timed(fn)
        flops = 4.0 * b * H * D * admitted_pairs(s["tq"], s["tk"], s["tc"], s["raw_prefix"], W, 4)
        out[name] = dict(seconds=seconds, calls=calls, flops=flops)
        print("numpy %-16s %9.3f ms  %6.1f GFLOP/s" % (name, seconds * 1e3, flops / seconds / 1e9), file=sys.stderr)
    # The GPT-OSS sinks shape of bench/SinksBench.java: B 1, Hq 64, Hkv 8, D 64, t 512, window 128.
    sq, skv, sd, st, sw = 64, 8, 64, 512, 128
    q = rng.standard_normal((1, sq, st, sd), dtype=F32)
    k = rng.standard_normal((1, skv, st, sd), dtype=F32)
    v = rng.standard_normal((1, skv, st, sd), dtype=F32)
    sinks = (rng.standard_normal(sq, dtype=F32) + F32(np.log(sw))).astype(F32)
    fn = lambda: sinks_attention(q, k, v, sinks, sw)
    assert fn().dtype == F32
    seconds, calls = timed(fn)
    flops = 4.0 * sq * sd * sum(min(r + 1, sw) for r in range(st))
    out["sinks_t512_w128"] = dict(seconds=seconds, calls=calls, flops=flops)
    print("numpy %-16s %9.3f ms  %6.1f GFLOP/s" % ("sinks_t512_w128", seconds * 1e3, flops / seconds / 1e9),
          file=sys.stderr)
    blas = "unknown BLAS"
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg["Build Dependencies"]["blas"]["name"] + " " + cfg["Build Dependencies"]["blas"].get("version", "")
    except Exception:  # older NumPy: no dict mode
        pass
    threads = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS") or (
        "default (%d CPUs)" % os.cpu_count())
    print(json.dumps(dict(numpy=np.__version__, blas=blas.strip(), threads=threads, shapes=out)))


if __name__ == "__main__":
    main()
