#!/usr/bin/env python3
"""A reference engine adapter for the attnproof conformance corpus, written from docs/system.md.

It reads a corpus (``attnproof corpus export DIR``), runs every case with a plain NumPy implementation of the
attention it describes, and writes ``OUT/<case id>.npy``, which ``attnproof corpus check DIR --outputs OUT --engine
numpy`` then judges. Replace ``union_attention`` and ``sinks_attention`` with calls into your own engine (Rust, PyTorch,
a CUDA kernel ...) and keep the rest: that is all an adapter is.

    python3 examples/engines/numpy_engine.py CORPUS OUT [--bug window+1|sink-in-numerator|batch-position|no-sinks-as-zero]

``--bug`` plants one of four classic bugs so that you can see the corpus name the claims it breaks:
  window+1           the sliding window admits W+1 keys (upstream make_swa_mask's width)
  sink-in-numerator  the sink's e^(sink-m) is added to every attended key's numerator too
  batch-position     a ragged cohort is run at the batch-wide position (rowQ0 ignored)
  no-sinks-as-zero   a sinks case without sinks is run with zero sink logits (weight 1) instead of none
"""
import argparse
import json
import os
import sys

import numpy as np

BUGS = ("window+1", "sink-in-numerator", "batch-position", "no-sinks-as-zero")


def round_to(x, dtype):
    """The value an engine working in ``dtype`` returns (F32 as is, F16 and BF16 rounded to nearest even)."""
    x = np.asarray(x, dtype=np.float32)
    if dtype == "F16":
        return x.astype(np.float16).astype(np.float32)
    if dtype == "BF16":
        bits = x.view(np.uint32).astype(np.uint64)
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
        return np.where(np.isnan(x), x, rounded.view(np.float32))
    return x


def softmax_with_sink(logits, valid, sink, bug):
    """Softmax over the valid keys with the sink in the denominator only (docs/system.md 4.7 and 8), float64.

    logits [..., n], valid [..., n] (bool), sink broadcastable to [..., 1]; a row with nothing valid and no sink gives
    zeros. Returns the weights [..., n]."""
    s = np.where(valid, logits, -np.inf)
    m = np.maximum(sink, s.max(axis=-1, keepdims=True))
    safe_m = np.where(np.isfinite(m), m, 0.0)
    e = np.where(valid, np.exp(s - safe_m), 0.0)
    e_sink = np.where(np.isneginf(sink), 0.0, np.exp(sink - safe_m))
    den = e.sum(axis=-1, keepdims=True) + e_sink
    if bug == "sink-in-numerator":
        e = e + np.where(valid, e_sink, 0.0)
    den = np.where(den == 0, 1.0, den)
    return e / den


def union_attention(case, t, bug):
    """dsv4_attention (docs/system.md 4 and 5): one softmax over the narrowed raw window plus the compressed blocks."""
    cfg = case["config"]
    q = t["q"].astype(np.float64)                       # [B, H, tq, D]
    k = t["k"].astype(np.float64)[:, 0]                 # [B, tk, D]
    v = t["v"].astype(np.float64)[:, 0] if "v" in t else k
    ckv = t["compressed_kv"].astype(np.float64)[:, 0] if "compressed_kv" in t else None
    sinks = t["sinks"].astype(np.float64)               # [H]
    b, h, tq, d = q.shape
    tk = k.shape[1]
    ratio, window, raw_prefix = cfg["ratio"], cfg["window"], cfg["rawPrefix"]
    if ratio == 0:
        ckv = None
    tc = 0 if ckv is None else ckv.shape[1]
    tk_full = raw_prefix + tk
    q0 = tk_full - tq
    keep = min(tq + window - 1, tk_full)
    base = tk_full - keep                               # keys before base are invisible to every row: narrow
    kn, vn = k[:, base - raw_prefix:], v[:, base - raw_prefix:]
    j = np.arange(base, tk_full)                        # absolute positions of the kept raw keys
    row_q0 = cfg.get("rowQ0")
    if row_q0 is None or bug == "batch-position":
        row_q0 = [q0] * b
    w = window + 1 if bug == "window+1" else window
    mask = t.get("mask")
    out = np.zeros((b, h, tq, d))
    for bi in range(b):
        lead = q0 - row_q0[bi]
        p = q0 + np.arange(tq)[:, None]                 # batch position of each row (cache-column space)
        raw_valid = (p - w < j[None, :]) & (j[None, :] <= p) & (j[None, :] >= lead)
        if tc:
            own = row_q0[bi] + np.arange(tq)[:, None]   # the row's own position decides its compressed blocks
            comp_valid = np.arange(tc)[None, :] < (own + 1) // ratio
            keys = np.concatenate([kn[bi], ckv[bi]])
            vals = np.concatenate([vn[bi], ckv[bi]])
            valid = np.concatenate([raw_valid, comp_valid], axis=1)
        else:
            keys, vals, valid = kn[bi], vn[bi], raw_valid
        bias = np.zeros((h, tq, keys.shape[0]))
        if mask is not None and mask.size > 1:
            m4 = mask.reshape((1, 1) + mask.shape) if mask.ndim == 2 else mask
            mb = m4[0 if m4.shape[0] == 1 else bi].astype(np.float64)   # [H|1, tq|1, n']
            cols = mb[..., base:tk_full]
            comp = mb[..., tk_full:tk_full + tc] if m4.shape[3] == tk_full + tc else np.zeros(mb.shape[:-1] + (tc,))
            bias = bias + np.concatenate([cols, comp], axis=-1)
        live = valid.any(axis=0)                         # keys no row attends are never read (NaN canaries)
        keys = np.where(live[:, None], keys, 0.0)
        vals = np.where(live[:, None], vals, 0.0)
        logits = np.einsum("htd,nd->htn", q[bi], keys) / np.sqrt(d) + bias
        y = softmax_with_sink(logits, valid[None] & (bias > -np.inf), sinks[:, None, None], bug)
        out[bi] = np.einsum("htn,nd->htd", y, vals)
    return out


def q_heads(case, t):
    """Hq of a sinks case: q is [B, Hq, tq, D] dense, [total_q, Hq, D] packed."""
    return t["q"].shape[1]


def sinks_attention(case, t, bug):
    """sinks_attn / sinks_attn_cpu_varlen (docs/system.md 8): GQA, bottom-right causality, optional window and mask."""
    cfg = case["config"]
    window = cfg["window"]
    # An absent sinks field is no sink term: -inf for every query head (never zero logits).
    if "sinks" in t:
        sinks = t["sinks"].astype(np.float64)
    else:
        sinks = np.full(q_heads(case, t), 0.0 if bug == "no-sinks-as-zero" else -np.inf)
    q, k = t["q"].astype(np.float64), t["k"].astype(np.float64)
    v = t["v"].astype(np.float64) if "v" in t else k
    if "cu_seqlens_q" in cfg:
        cq, ck = cfg["cu_seqlens_q"], cfg["cu_seqlens_k"]
        max_q = max(cq[i + 1] - cq[i] for i in range(len(cq) - 1))
        out = np.zeros((len(cq) - 1, q.shape[1], max_q, q.shape[2]))
        for i in range(len(cq) - 1):
            qi = q[cq[i]:cq[i + 1]].transpose(1, 0, 2)[None]
            ki = k[ck[i]:ck[i + 1]].transpose(1, 0, 2)[None]
            vi = v[ck[i]:ck[i + 1]].transpose(1, 0, 2)[None]
            out[i, :, :qi.shape[2]] = dense_sinks(qi, ki, vi, sinks, None, window, bug)[0]
        return out
    return dense_sinks(q, k, v, sinks, t.get("mask"), window, bug)


def dense_sinks(q, k, v, sinks, mask, window, bug):
    b, hq, tq, d = q.shape
    hkv, tk = k.shape[1], k.shape[2]
    group = hq // hkv
    kh = np.repeat(k, group, axis=1)                     # query head h reads KV head h // group
    vh = np.repeat(v, group, axis=1)
    r = np.arange(tq)[:, None]
    j = np.arange(tk)[None, :]
    diag = r + (tk - tq)
    w = window + 1 if (bug == "window+1" and window > 0) else window
    valid = (j <= diag) & ((w == 0) | (j > diag - w))
    bias = np.zeros((1, 1, tq, tk))
    if mask is not None:
        bias = (mask.reshape(1, 1, tq, tk) if mask.ndim == 2 else mask).astype(np.float64)
    logits = np.einsum("bhtd,bhnd->bhtn", q, kh) / np.sqrt(d) + bias
    allowed = valid[None, None] & (bias > -np.inf)
    y = softmax_with_sink(logits, allowed, sinks[None, :, None, None], bug)
    return np.einsum("bhtn,bhnd->bhtd", y, vh)


def load_case(path):
    with open(path) as f:
        case = json.load(f)
    folder = os.path.dirname(path)
    tensors = {}
    for field in ("q", "k", "v", "sinks", "compressed_kv", "mask"):
        if field in case:
            tensors[field] = np.load(os.path.join(folder, case[field]))
    return case, tensors


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("out")
    ap.add_argument("--bug", choices=BUGS, help="plant a bug (see the module doc)")
    args = ap.parse_args(argv)
    with open(os.path.join(args.corpus, "manifest.json")) as f:
        manifest = json.load(f)
    os.makedirs(args.out, exist_ok=True)
    for entry in manifest["cases"]:
        case, tensors = load_case(os.path.join(args.corpus, entry["case"]))
        kind = case.get("kind", "union")
        with np.errstate(invalid="ignore", over="ignore"):
            out = union_attention(case, tensors, args.bug) if kind == "union" else sinks_attention(case, tensors, args.bug)
        np.save(os.path.join(args.out, entry["id"] + ".npy"), round_to(out, case["config"]["dtype"]))
    print("numpy engine: %d outputs in %s%s" % (len(manifest["cases"]), args.out,
                                                 " (bug: %s)" % args.bug if args.bug else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
