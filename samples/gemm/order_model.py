#!/usr/bin/env python3
"""Orders of C's tiles for GEMM 1024^3 on ascend-like (int8 and fp16), against MTE2.

An estimate, not a simulator: it was written to decide whether a traversal that is
not band by band (a square of tiles growing by a row band and a column panel per
step) is worth building
(samples/gemm/README.md, "A growing square of tiles, estimated"). run() models the
int8 bench schedule's shapes (ascend_bpanel256_int8.json): 64 x 256 tiles, each 8 L0
chunks of 128-deep products (256 matrix cycles each); A per tile in two 32 KiB L1
chunks (three buffers); the 256-column B panel (8 pieces of 32 KiB) held in a ring
of 13 slots, kept while consecutive tiles use the same panel.

MTE2 costs are the simulator's, read off `tessel run --trace` (seed 1): a 32 KiB
descriptor costs 1088 cycles from GM, 362 as an L2 hit, 1394 / 451 when its runs
start off the 512-byte alignment (B panels 1 and 3). Data is visible 500 cycles
after its load ends, and reaches L0 150 cycles later.

The model is optimistic: MTE2 takes, whenever it is free, the earliest-needed load
whose buffer is free (not the program's fixed order), and when no buffer is free it
reads a future cold load ahead into a scratch buffer, so that load later costs an
L2 hit (what ring_panels' .warm buffer does). For the bench's band order it gives
155404 cycles against the simulator's 157004.

run_fp16() models fp16 with 128 x 128 tiles (ascend_bpanel_k256.json's shapes): 8 L0
chunks of 128 deep per tile (512 matrix cycles each); each operand of a tile either read
from a held panel (a ring of 10 slots of 32 KiB, 8 pieces of 128 k per panel) or
streamed per tile in 4 chunks of 64 KiB (three buffers). Costs from the traces of
ascend_bpanel_k256.json and ascend_panel_k256.json. It has no read-ahead into the L2:
for the B-panel band order with the shapes of a0233cf's parent (12 slots, two buffers)
it gives 343222 against the simulator's 344773.

Run: python3 samples/gemm/order_model.py
"""

LATENCY = 500
MTE1 = 150
COLD = {"A": 1088, "B_even": 1088, "B_odd": 1394}
HIT = {"A": 362, "B_even": 362, "B_odd": 451}
PRODUCTS = 131072  # 1024^3 / 8192 MAC per cycle


def next_load(pending, buffer_free, mte2, window):
    """MTE2's next load among the first `window` pending ones, in program order: the first whose
    buffer is free by `mte2`, else None; and (time, load) of the one whose buffer frees soonest."""
    soonest = None
    for x in sorted(pending)[:window]:
        f = buffer_free(x)
        if f is not None and f <= mte2:
            return x, soonest
        if f is not None and (soonest is None or f < soonest[0]):
            soonest = (f, x)
    return None, soonest


def run(order, ring_slots=13, a_buffers=3, chunks=8, mmad=256, warm=True):
    """order: (row tile 0..15, column panel 0..3) per tile. Returns (cycles, MTE2 busy)."""
    # The held panel: a new instance whenever the panel changes between two tiles.
    inst, prev, panel_inst = -1, None, []
    for _, j in order:
        if j != prev:
            inst += 1
        panel_inst.append(inst)
        prev = j
    last_tile = {p: t for t, p in enumerate(panel_inst)}

    # Loads in the order the matrix unit needs them.
    loads, a_load, piece_load = [], {}, {}
    for t, (i, j) in enumerate(order):
        p = panel_inst[t]
        for c in range(chunks):
            if c % 4 == 0:
                a_load[(t, c // 4)] = len(loads)
                loads.append({"kind": "A", "key": ("A", i, c // 4), "t": t, "c": c})
            if (p, c) not in piece_load:
                piece_load[(p, c)] = len(loads)
                kind = "B_odd" if j % 2 else "B_even"
                loads.append({"kind": kind, "key": ("B", j, c), "t": t, "c": c, "p": p})
    a_seq = [x for x, l in enumerate(loads) if l["kind"] == "A"]
    b_seq = [x for x, l in enumerate(loads) if l["kind"] != "A"]
    a_pos = {x: k for k, x in enumerate(a_seq)}
    b_pos = {x: k for k, x in enumerate(b_seq)}

    n = len(order) * chunks
    mstart = [None] * n  # matrix start of each chunk (None: not started yet)

    def buffer_free(x):
        """When load x's buffer is free (None: not known yet, its last reader has not started)."""
        l = loads[x]
        if l["kind"] == "A":
            k = a_pos[x]
            if k < a_buffers:
                return 0
            q = loads[a_seq[k - a_buffers]]
            return mstart[q["t"] * chunks + q["c"] + 3]
        k = b_pos[x]
        if k < ring_slots:
            return 0
        q = loads[b_seq[k - ring_slots]]
        return mstart[last_tile[q["p"]] * chunks + q["c"]]

    in_l2, visible, pending = set(), {}, set(range(len(loads)))
    mte2 = busy = m_free = 0
    for g in range(n):
        t, c = divmod(g, chunks)
        deps = (a_load[(t, c // 4)], piece_load[(panel_inst[t], c)])
        while any(d in pending for d in deps):
            pick, soonest = next_load(pending, buffer_free, mte2, 40)
            if pick is None:
                cold = [x for x in sorted(pending) if loads[x]["key"] not in in_l2]
                if warm and cold and (soonest is None or soonest[0] > mte2 + COLD[loads[cold[0]]["kind"]] // 2):
                    d = COLD[loads[cold[0]]["kind"]]
                    mte2 += d
                    busy += d
                    in_l2.add(loads[cold[0]]["key"])
                    continue
                mte2, pick = soonest
            l = loads[pick]
            d = HIT[l["kind"]] if l["key"] in in_l2 else COLD[l["kind"]]
            mte2 += d
            busy += d
            in_l2.add(l["key"])
            visible[pick] = mte2 + LATENCY
            pending.discard(pick)
        start = max(m_free, max(visible[d] for d in deps) + MTE1)
        mstart[g] = start
        m_free = start + mmad
    return m_free + 1100, busy  # + the last tile's FIX write (1.1k cycles in the trace)


def bands():
    return [(i, j) for j in range(4) for i in range(16)]


def square(blocks_of_shell):
    """A growing square of 256 x 256 blocks (4 tiles each), shell by shell."""
    return [(4 * bi + r, bj) for s in range(4) for bi, bj in blocks_of_shell(s) for r in range(4)]


ORDERS = {
    "bands (the bench's order)": bands(),
    "square: row part, diagonal, column part": square(
        lambda s: [(s, b) for b in range(s + 1)] + [(a, s) for a in range(s - 1, -1, -1)]),
    "square: column part, diagonal, row part": square(
        lambda s: [(a, s) for a in range(s + 1)] + [(s, b) for b in range(s - 1, -1, -1)]),
    "square: diagonal first": square(
        lambda s: [(s, s)] + [(a, s) for a in range(s - 1, -1, -1)] + [(s, b) for b in range(s - 1, -1, -1)]),
    "512 x 512 regions in 2-D order, bands inside": [
        (i, j) for ri, rj in ((0, 0), (1, 0), (0, 1), (1, 1)) for j in (2 * rj, 2 * rj + 1)
        for i in range(8 * ri, 8 * ri + 8)],
}

MMAD_FP16 = 512  # matrix cycles of one 128 x 128 x 128 fp16 chunk


def piece_cost(op, idx, p, hit, aligned_a):
    """A 32 KiB ring piece: of an A panel (128 rows x 128 k; odd pieces start 256 bytes
    into a 512-byte unit unless aligned_a) or of a B panel (128 k x 128 columns; odd
    panels start 256 bytes off)."""
    mis = (p % 2 == 1 and not aligned_a) if op == "A" else idx % 2 == 1
    return (451 if mis else 362) if hit else (1394 if mis else 1088)


def chunk_cost(op, idx, hit):
    """A streamed 64 KiB chunk: A 128 rows x 256 k (aligned), B 256 k x 128 columns."""
    mis = op == "B" and idx % 2 == 1
    return (838 if mis else 660) if hit else (2724 if mis else 2112)


def run_fp16(tiles, ring_slots=10, stream_buffers=3, aligned_a=False):
    """tiles: (i, j, source of A, source of B) per 128 x 128 tile, source "H" (the held
    panel, a ring instance; a new instance whenever a tile reads a panel that is not live)
    or "S" (streamed for this tile). Returns (cycles, MTE2 busy)."""
    chunks = 8
    live, tile_inst, insts, last_reader = [], [], [], {}
    for t, (i, j, sa, sb) in enumerate(tiles):
        m = {}
        for op, idx, src in (("A", i, sa), ("B", j, sb)):
            if src != "H":
                continue
            same = [x for x in live if x[0] == op and x[1] == idx]
            if same:
                m[op] = same[-1][2]
            else:
                live.append((op, idx, len(insts)))
                m[op] = len(insts)
                insts.append((op, idx))
            last_reader[m[op]] = t
        live = [x for x in live if x[2] in m.values()]
        tile_inst.append(m)

    loads, need, piece_load, chunk_load = [], {}, {}, {}
    for t, (i, j, sa, sb) in enumerate(tiles):
        for c in range(chunks):
            for op, idx, src in (("A", i, sa), ("B", j, sb)):
                if src == "H":
                    key = (tile_inst[t][op], c)
                    if key not in piece_load:
                        piece_load[key] = len(loads)
                        loads.append({"kind": "P", "op": op, "idx": idx, "p": c, "inst": key[0], "t": t, "c": c})
                    need.setdefault((t, c), []).append(piece_load[key])
                else:
                    key = (t, op, c // 2)
                    if key not in chunk_load:
                        chunk_load[key] = len(loads)
                        loads.append({"kind": "C", "op": op, "idx": idx, "q": c // 2, "t": t, "c": c})
                    need.setdefault((t, c), []).append(chunk_load[key])
    p_seq = [x for x, l in enumerate(loads) if l["kind"] == "P"]
    c_seq = [x for x, l in enumerate(loads) if l["kind"] == "C"]
    p_pos = {x: k for k, x in enumerate(p_seq)}
    c_pos = {x: k for k, x in enumerate(c_seq)}
    mstart = [None] * (len(tiles) * chunks)

    def buffer_free(x):
        l = loads[x]
        if l["kind"] == "P":
            k = p_pos[x]
            if k < ring_slots:
                return 0
            q = loads[p_seq[k - ring_slots]]
            return mstart[last_reader[q["inst"]] * chunks + q["p"]]
        k = c_pos[x]
        if k < stream_buffers:
            return 0
        q = loads[c_seq[k - stream_buffers]]
        return mstart[q["t"] * chunks + q["c"] + 1]

    in_l2 = set()  # 32 KiB pieces (op, panel, k-piece); a chunk covers two

    def parts(l):
        return [(l["op"], l["idx"], l["p"])] if l["kind"] == "P" else [
            (l["op"], l["idx"], 2 * l["q"]), (l["op"], l["idx"], 2 * l["q"] + 1)]

    def cost(l):
        hit = all(k in in_l2 for k in parts(l))
        return (piece_cost(l["op"], l["idx"], l["p"], hit, aligned_a) if l["kind"] == "P"
                else chunk_cost(l["op"], l["idx"], hit))

    pending, visible = set(range(len(loads))), {}
    mte2 = busy = m_free = 0
    for g in range(len(mstart)):
        deps = need[divmod(g, chunks)]
        while any(d in pending for d in deps):
            pick, soonest = next_load(pending, buffer_free, mte2, 60)
            if pick is None:
                mte2, pick = soonest
            l = loads[pick]
            d = cost(l)
            mte2 += d
            busy += d
            in_l2.update(parts(l))
            visible[pick] = mte2 + LATENCY
            pending.discard(pick)
        start = max(m_free, max(visible[d] for d in deps) + MTE1)
        mstart[g] = start
        m_free = start + MMAD_FP16
    return m_free + 1100, busy


def fp16_bands():
    """The fp16 bench order: the B panel held per column band, A streamed."""
    return [(i, j, "S", "H") for j in range(8) for i in range(8)]


def fp16_square(handoff):
    """A square growing by one row band and one column panel per shell. Shell s: the row
    part holds A_s and streams B, the diagonal tile (s, s) reads the dying A_s and loads B_s
    as the next held panel, the column part holds B_s and streams A. With handoff, shell s
    starts at (s, s-1), which reads the dying B_{s-1} and loads A_s as the next held panel,
    so that every tile but the first loads exactly one 256 KiB operand."""
    order = [(0, 0, "S", "H")]
    for s in range(1, 8):
        if handoff:
            order.append((s, s - 1, "H", "H"))
            order += [(s, j, "H", "S") for j in range(s - 2, -1, -1)]
        else:
            order += [(s, j, "H", "S") for j in range(s)]
        order.append((s, s, "H", "H"))
        order += [(i, s, "S", "H") for i in range(s - 1, -1, -1)]
    return order


FP16_ORDERS = {
    "column bands (the bench's order)": fp16_bands(),
    "square, no hand-off": fp16_square(False),
    "square with hand-off tiles": fp16_square(True),
}

if __name__ == "__main__":
    print("int8 1024^3, 64 x 256 tiles")
    print(f"{'order':46} {'cycles':>7} {'eff.':>6} {'MTE2 busy':>9}   unbounded buffers")
    for name, order in ORDERS.items():
        assert sorted(order) == sorted(bands())
        cycles, busy = run(order)
        ideal, _ = run(order, ring_slots=64, a_buffers=64)
        print(f"{name:46} {cycles:7d} {PRODUCTS / cycles:6.3f} {busy:9d}   {ideal:7d} ({PRODUCTS / ideal:.3f})")
    print()
    print("fp16 1024^3, 128 x 128 tiles (no read-ahead into the L2)")
    print(f"{'order':46} {'cycles':>7} {'eff.':>6} {'MTE2 busy':>9}   unbounded buffers")
    full = sorted((i, j) for i in range(8) for j in range(8))
    for name, order in FP16_ORDERS.items():
        assert sorted((i, j) for i, j, _, _ in order) == full
        for aligned in (False, True) if any(a == "H" for _, _, a, _ in order) else (False,):
            cycles, busy = run_fp16(order, aligned_a=aligned)
            ideal, _ = run_fp16(order, ring_slots=64, stream_buffers=64, aligned_a=aligned)
            label = name + (", A pieces aligned" if aligned else "")
            print(f"{label:46} {cycles:7d} {262144 / cycles:6.3f} {busy:9d}   {ideal:7d} ({262144 / ideal:.3f})")
    cycles, _ = run_fp16(fp16_bands(), ring_slots=12, stream_buffers=2)
    print(f"calibration: bands, 12 slots, A in two buffers: {cycles} (simulator before a0233cf: 344773)")
