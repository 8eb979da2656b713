#include "npu_target/passes/RingPanels.h"

#include "npu_target/common/Error.h"
#include "npu_target/passes/AllocateBuffers.h"
#include "npu_target/lower/SplitCores.h"
#include "npu_target/passes/InsertSync.h"

#include <map>
#include <set>
#include <sstream>

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;
using isa::Pipe;

namespace {

// Pieces smaller than this pay the engine's setup too often for the overlap to win.
constexpr int64_t kMinPieceBytes = 32 * 1024;
constexpr int kMaxPieces = 16;
// Loaded once: the last piece's last chunk is loaded on its own when a chunk
// is at least this big, so the reader's work after the panel's last byte is
// one chunk's, not one piece's, for one more setup on the writer (conv2d_q8:
// 4 MMADs after the last 16 KiB instead of 12 after the last 48 KiB, 38034 ->
// 37935 cycles; each chunk of the last piece on its own, two more setups:
// 38000; 9 pieces of one chunk: 38260).
constexpr int64_t kMinTailPieceBytes = 16 * 1024;

// One statement that touches the panel, with the loops between the allocation and it.
struct Touch {
    const Evaluate *stmt = nullptr;
    std::vector<const For *> loops; // outermost first; nullptr = a branch
    Accesses acc;
};

class FindTouches : public nir::LoopPathVisitor {
public:
    FindTouches(const nir::NpuModule &m, const std::string &buf) : m_(m), buf_(buf) {}
    std::vector<Touch> touches;
    bool other = false; // a scalar load/store of the panel, or something not a leaf operation

private:
    const nir::NpuModule &m_;
    const std::string &buf_;
    using nir::LoopPathVisitor::visit;

    void visit(const Evaluate *op) override {
        Accesses a = accesses_of(m_, op);
        auto has = [&](const std::vector<std::string> &v) { return std::find(v.begin(), v.end(), buf_) != v.end(); };
        if (has(a.scalar_reads)) {
            other = true;
        }
        if (has(a.reads) || has(a.writes)) {
            touches.push_back({op, path_, a});
        }
    }
    void visit(const Store *op) override {
        Accesses a = accesses_of(m_, op);
        if (op->name == buf_ || std::find(a.reads.begin(), a.reads.end(), buf_) != a.reads.end()) {
            other = true;
        }
        IRVisitor::visit(op);
    }
    void visit(const Load *op) override {
        other = other || op->name == buf_;
        IRVisitor::visit(op);
    }
};

int64_t const_of(const Expr &e) {
    const int64_t *v = as_const_int(e);
    return v ? *v : -1;
}

// The plan for one panel, everything the rewrite needs.
struct Plan {
    std::string buffer;
    const For *loop = nullptr; // O; nullptr: loaded once (no enclosing loop), the pieces only start the reader early
    const Evaluate *writer = nullptr, *reader = nullptr;
    nir::DmaOp load, read;
    Pipe W = Pipe::S, R = Pipe::S;
    std::vector<const For *> repeat; // reader loops that do not move it through the panel (tiles)
    int64_t chunk = 0, pieces = 0, slots = 0;
    int64_t unit = 0;               // read-index units per piece (elements, or columns of an inner walk)
    int64_t slot_elems = 0;         // elements of one slot
    int64_t src_step = 0;           // source element offset of piece k = k x src_step
    std::vector<nir::Dim> dims;     // one piece's descriptor
    int64_t band_row = 0;           // inner walk: the panel's row length (stored as column bands)
    int64_t tail = 0;                 // loaded once: where the last piece starts, if it is split (0: not split)
    std::vector<int64_t> tail_pieces; // loaded once: the split last piece's parts, in elements
    int64_t row = 0;                  // loaded once: a part's row length
    // A scratch buffer the next iteration's late pieces are read into during
    // this one, so that their loads in its first tile hit in the L2 ("" = none).
    std::string warm;
    int raw = -1, war = -1;
};

class Ring : public IRMutator {
public:
    explicit Ring(nir::NpuModule &m) : m_(m) {}

private:
    nir::NpuModule &m_;
    std::map<std::pair<Pipe, Pipe>, int> taken_; // events taken per pipe pair, from the top id down
    std::vector<const For *> path_;              // enclosing loops; nullptr = a branch
    const Plan *active_ = nullptr;
    std::map<std::string, Plan> applied_;         // loop O -> the plan of the panel in it
    using IRMutator::visit;

    void note(const nir::BufferInfo &b, const std::string &msg) {
        m_.diagnostics.push_back({BackendDiagnostic::Severity::Note, msg, b.directive, b.name});
    }

    // The reader walks the panel along its outermost dimension (whole rows
    // per chunk): a piece is a run of the load's outermost descriptor rows.
    bool outer_walk(Plan &p, const nir::BufferInfo &b) const {
        const nir::Dim &outer = p.load.dims.back();
        int64_t span = 1;
        for (const auto &d : p.read.dims) {
            span += (d.count - 1) * d.src_stride;
        }
        if (outer.count * outer.dst_stride != b.elems || span > p.chunk) {
            return false;
        }
        const int64_t chunks = b.elems / p.chunk;
        if (!p.loop && dense_pieces(p, b, chunks)) {
            return true;
        }
        p.pieces = choose_pieces(chunks, outer.count, b.elems * b.type.bytes());
        if (p.pieces < 2) {
            return false;
        }
        const int64_t rows = outer.count / p.pieces;
        p.unit = b.elems / p.pieces;
        p.slot_elems = p.unit;
        p.src_step = rows * outer.src_stride;
        p.dims = p.load.dims;
        p.dims.back().count = rows;
        return true;
    }
    // The reader walks along the panel's rows (columns per chunk, every
    // row): a piece is a column band of all rows, one 2-D descriptor.
    bool inner_walk(Plan &p, const nir::BufferInfo &b, int64_t row) const {
        const auto &rd = p.read.dims;
        if (b.elems % row != 0 || rd.empty() || rd[0].src_stride != 1 || rd[0].count > p.chunk) {
            return false;
        }
        for (size_t i = 1; i < rd.size(); i++) {
            if (rd[i].src_stride % row != 0) {
                return false;
            }
        }
        const int64_t rows = b.elems / row;
        // The source's row pitch: a dense copy, or rows of `row` elements.
        const auto &wd = p.load.dims;
        int64_t pitch = -1;
        if (std::all_of(wd.begin(), wd.end(), [](const nir::Dim &d) { return d.src_stride == d.dst_stride; }) &&
            wd[0].dst_stride == 1) {
            pitch = row;
        } else if (wd.size() == 2 && wd[0].count == row && wd[0].dst_stride == 1 && wd[0].src_stride == 1 &&
                   wd[1].dst_stride == row) {
            pitch = wd[1].src_stride;
        }
        const int64_t max_count = m_.arch->engines[p.load.engine].max_count;
        if (pitch < 0 || rows > max_count) {
            return false;
        }
        p.pieces = choose_pieces(row / p.chunk, row, b.elems * b.type.bytes());
        if (p.pieces < 2 || row / p.pieces > max_count) {
            return false;
        }
        // Each column band is stored contiguously (band k at k x rows x
        // width, rows `width` apart), so a piece being written and a chunk
        // being read never share a byte range; the reader is re-addressed.
        p.unit = row / p.pieces;
        p.slot_elems = rows * p.unit;
        p.src_step = p.unit;
        p.dims = {nir::Dim{p.unit, 1, 1}, nir::Dim{rows, p.unit, pitch}};
        p.band_row = row;
        return true;
    }
    // A load-once panel copied densely (both sides contiguous): a piece may be
    // any whole number of chunks, re-described as rows of at most the load's
    // innermost count; as many pieces as chunks allow, each >= kMinPieceBytes.
    bool dense_pieces(Plan &p, const nir::BufferInfo &b, int64_t chunks) const {
        const auto &wd = p.load.dims;
        int64_t run = 1;
        for (const auto &d : wd) {
            if (d.dst_stride != run || d.src_stride != run) {
                return false;
            }
            run *= d.count;
        }
        p.pieces = choose_pieces(chunks, chunks, b.elems * b.type.bytes());
        if (p.pieces < 2) {
            return false;
        }
        p.unit = b.elems / p.pieces;
        int64_t row = std::min(wd[0].count, p.unit);
        while (p.unit % row != 0) {
            row--;
        }
        if (p.unit / row > m_.arch->engines[p.load.engine].max_count) {
            return false;
        }
        p.slot_elems = p.unit;
        p.src_step = p.unit;
        p.dims = rows_of(row, p.unit);
        // The last piece in two: all but its last chunk, then that chunk (kMinTailPieceBytes).
        if (p.unit > p.chunk && p.unit % p.chunk == 0 && p.chunk * b.type.bytes() >= kMinTailPieceBytes) {
            p.row = std::min(row, p.chunk);
            while (p.chunk % p.row != 0) {
                p.row--;
            }
            p.tail = (p.pieces - 1) * p.unit;
            p.tail_pieces = {p.unit - p.chunk, p.chunk};
        }
        return true;
    }
    // A dense run of `elems` elements as rows of `row`.
    static std::vector<nir::Dim> rows_of(int64_t row, int64_t elems) {
        return {nir::Dim{row, 1, 1}, nir::Dim{elems / row, row, row}};
    }
    // Loads of a panel loaded once: its pieces, the split last one's parts counted one by one.
    static int64_t once_loads(const Plan &p) { return p.pieces - 1 + std::max<int64_t>(1, p.tail_pieces.size()); }
    // The most pieces (whole chunks, dividing `split` evenly) of at least kMinPieceBytes.
    static int64_t choose_pieces(int64_t chunks, int64_t split, int64_t bytes) {
        for (int64_t n = std::min<int64_t>(kMaxPieces, chunks); n >= 2; n--) {
            if (chunks % n == 0 && split % n == 0 && bytes / n >= kMinPieceBytes) {
                return n;
            }
        }
        return 0;
    }

    std::optional<Plan> plan(const Allocate *op) {
        auto it = m_.buffers.find(op->name);
        // Not in a loop: loaded once; the pieces let the reader start after the first.
        const bool once = path_.empty();
        if (it == m_.buffers.end() || it->second.is_arg || it->second.buffers != 1 || (!once && path_.back() == nullptr)) {
            return std::nullopt;
        }
        const nir::BufferInfo &b = it->second;
        Plan p;
        p.buffer = op->name;
        p.loop = once ? nullptr : path_.back();
        // The reload loop may have a per-core range (split_cores); everything inside is constant.
        if (!once && p.loop->for_type != ForType::Serial) {
            return std::nullopt;
        }
        FindTouches f(m_, op->name);
        op->body.accept(&f);
        if (f.other || f.touches.size() != 2) {
            return std::nullopt;
        }
        const Touch *w = nullptr, *r = nullptr;
        for (const Touch &t : f.touches) {
            bool writes = std::find(t.acc.writes.begin(), t.acc.writes.end(), op->name) != t.acc.writes.end();
            (writes ? w : r) = &t;
        }
        if (!w || !r || &f.touches[0] != w || !w->loops.empty()) {
            return std::nullopt; // the load first, at the top of the allocation
        }
        auto wd = nir::as_dma(Stmt(w->stmt));
        auto rd = nir::as_dma(Stmt(r->stmt));
        if (!wd || !rd || rd->src.buffer != op->name || wd->dst.buffer != op->name) {
            return std::nullopt;
        }
        p.W = w->acc.pipe;
        p.R = r->acc.pipe;
        if (p.W == Pipe::S || p.R == Pipe::S || p.W == p.R) {
            return std::nullopt;
        }
        p.writer = w->stmt;
        p.reader = r->stmt;
        p.load = *wd;
        p.read = *rd;
        // The load: all of the panel, from a source that uses only loop
        // variables (O's next value is O + 1).
        if (const_of(wd->dst.index) != 0 || wd->dims.empty()) {
            return std::nullopt;
        }
        int64_t total = 1;
        for (const auto &d : wd->dims) {
            total *= d.count;
        }
        if (total != b.elems) {
            return std::nullopt;
        }
        std::set<std::string> loops;
        for (const For *l : path_) {
            if (l) {
                loops.insert(l->name);
            }
        }
        loops.insert(kCoreIdVar);
        for (const auto &n : nir::variables_of(wd->src.index)) {
            if (!loops.count(n)) {
                return std::nullopt;
            }
        }
        // The read: index = sum of coefficient x (loop - min) over the loops
        // that walk the panel, the innermost walking loop moving by one chunk,
        // each outer one by the chunks its inner loop covers; the other loops
        // (repeats) all outside the walking ones.
        Expr idx = rd->src.index;
        std::map<std::string, Expr> at_min;
        std::vector<std::pair<const For *, int64_t>> walk;
        for (const For *l : r->loops) {
            if (!l || l->for_type != ForType::Serial || const_of(l->extent) < 1) {
                return std::nullopt;
            }
            auto c = nir::affine_coefficient(idx, l->name);
            if (!c || *c < 0) {
                return std::nullopt;
            }
            if (*c == 0) {
                if (!walk.empty()) {
                    return std::nullopt; // a repeat inside the walk
                }
                p.repeat.push_back(l);
            } else {
                walk.emplace_back(l, *c);
            }
            at_min[l->name] = l->min;
        }
        if (walk.empty() || const_of(simplify(substitute(at_min, idx))) != 0) {
            return std::nullopt;
        }
        p.chunk = walk.back().second;
        int64_t covered = p.chunk;
        for (size_t i = walk.size(); i-- > 0;) {
            if (walk[i].second != covered) {
                return std::nullopt;
            }
            covered *= const_of(walk[i].first->extent);
        }
        if (!(covered == b.elems ? outer_walk(p, b) : !once && inner_walk(p, b, covered))) {
            return std::nullopt;
        }
        if (once) {
            // One raw flag, no slots beyond the panel, nothing reloaded.
            p.slots = p.pieces;
            int &tw = taken_[{p.W, p.R}];
            if (m_.arch->sync.event_ids_per_pair - 1 - tw < 2) {
                return std::nullopt;
            }
            p.raw = m_.arch->sync.event_ids_per_pair - 1 - tw++;
            return p;
        }
        // Tiles: the repeat loops run at least twice, so the free slots can be
        // filled before the last tile.
        int64_t tiles = 1;
        for (const For *l : p.repeat) {
            tiles *= const_of(l->extent);
        }
        if (tiles < 2) {
            return std::nullopt;
        }
        // Slots: as many as fit (allocate_buffers decides), at most two panels.
        // Fitting is monotone in the slot count: binary search for the largest.
        const int64_t elems = b.elems;
        auto fits = [&](int64_t slots) {
            nir::NpuModule trial = m_;
            trial.buffers.at(op->name).elems = slots * p.slot_elems;
            return allocate_buffers(trial).overflow_message.empty();
        };
        for (int64_t lo = p.pieces + 1, hi = 2 * p.pieces; lo <= hi;) {
            const int64_t mid = (lo + hi) / 2;
            if (fits(mid)) {
                p.slots = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        if (p.slots == 0) {
            note(b, "buffer " + b.name + " is not reloaded through a ring of pieces: no room in " + b.level +
                        " for one more piece of " + std::to_string(elems / p.pieces * b.type.bytes()) + " bytes");
            return std::nullopt;
        }
        // Events: from the top id down, so insert_buffer_credits (from 1 up) does not take them.
        int &tw = taken_[{p.W, p.R}], &tr = taken_[{p.R, p.W}];
        const int top = m_.arch->sync.event_ids_per_pair - 1;
        if (top - tw < 2 || top - tr < 2) {
            return std::nullopt;
        }
        p.raw = top - tw++;
        p.war = top - tr++;
        return p;
    }

    Expr i32(int64_t v) const { return make_const(Int(32), v); }
    Stmt flag(isa::Op op, Pipe src, Pipe dst, int e) const { return nir::SyncOp{op, src, dst, e}.make(); }
    Expr loop_var(const For *l) const { return Variable::make(Int(32), l->name); }
    Expr last_of(const For *l) const { return simplify(l->min + l->extent - 1); }

    // The load of piece `k` of the panel for iteration `o` of O, into its slot,
    // with the credit it takes and the flag it sets.
    Stmt piece_load(const Plan &p, const Expr &k, const Expr &o) const {
        Expr n = (o - p.loop->min) * i32(p.pieces) + k;
        nir::DmaOp d = p.load;
        d.dst.index = simplify((n % i32(p.slots)) * i32(p.slot_elems));
        d.src.index = simplify(substitute(p.loop->name, o, p.load.src.index) + k * i32(p.src_step));
        d.dims = p.dims;
        return Block::make({flag(isa::Op::WAIT_FLAG, p.R, p.W, p.war), d.make(), flag(isa::Op::SET_FLAG, p.W, p.R, p.raw)});
    }

    // Loaded once: piece k, setting the raw flag.
    Stmt load_once(const Plan &p, const Expr &k) const { return load_at(p, k * i32(p.unit), k * i32(p.src_step), p.dims); }
    // Loaded once: `dims` at element `at` of the panel, `from` past its source, setting the raw flag.
    Stmt load_at(const Plan &p, const Expr &at, const Expr &from, const std::vector<nir::Dim> &dims) const {
        nir::DmaOp d = p.load;
        d.dst.index = simplify(at);
        d.src.index = simplify(p.load.src.index + from);
        d.dims = dims;
        return Block::make(d.make(), flag(isa::Op::SET_FLAG, p.W, p.R, p.raw));
    }
    // The first load of the panel's pieces, one at a time: piece q is queued
    // as the reader starts on it (its first chunk in the first tile), so the
    // loads the writer's queue gets before that (the reader's other operands:
    // a convolution's input rows for the tap row, GEMM's first A tile) go in
    // front of it instead of behind the whole panel.
    Stmt first_load(const Plan &p, const Expr &q) const {
        return p.loop ? piece_load(p, q, loop_var(p.loop)) : load_once(p, q);
    }
    // Loaded once: the first read of each piece (in the first tile) loads it
    // and waits for it.
    Stmt read_once(const Plan &p) const {
        const Expr idx = p.read.src.index;
        Expr first = (idx % i32(p.unit)) == 0;
        for (const For *l : p.repeat) {
            first = first && loop_var(l) == l->min;
        }
        const Stmt wait = flag(isa::Op::WAIT_FLAG, p.W, p.R, p.raw);
        Stmt load = IfThenElse::make(simplify(first), Block::make(first_load(p, idx / i32(p.unit)), wait));
        if (p.tail > 0) {
            // The last piece's parts, each loaded at the first read of its
            // first chunk; a dense copy: a part's source offset is its offset
            // in the panel.
            first = const_true();
            for (const For *l : p.repeat) {
                first = first && loop_var(l) == l->min;
            }
            Stmt tail = Evaluate::make(0);
            for (int64_t k = static_cast<int64_t>(p.tail_pieces.size()), at = p.pieces * p.unit; k-- > 0;) {
                at -= p.tail_pieces[k];
                tail = IfThenElse::make(simplify(idx == i32(at)),
                                        Block::make(load_at(p, idx, idx, rows_of(p.row, p.tail_pieces[k])), wait), tail);
            }
            load = IfThenElse::make(simplify(idx < i32(p.tail)), load, IfThenElse::make(simplify(first), tail));
        }
        return Block::make({load, p.read.make()});
    }

    // The allocation of the read-ahead scratch buffer `w` around `body`.
    static Stmt allocate_warm(const nir::BufferInfo &w, const Stmt &body) {
        return Allocate::make(w.name, w.type, MemoryType::Auto, {make_const(Int(32), w.elems)}, const_true(), body);
    }

    // A scratch buffer of one piece in a level the writer's engine reaches from
    // the panel's source (other than the panel's), where it fits next to
    // everything else; "" when none does.
    std::string warm_buffer(const Plan &p, const nir::BufferInfo &b, const Allocate *panel) {
        // The trial places the scratch where the rewrite will: around the panel's allocation.
        struct Wrap : public IRMutator {
            const Allocate *panel;
            const nir::BufferInfo *warm;
            using IRMutator::visit;
            Stmt visit(const Allocate *op) override {
                Stmt s = IRMutator::visit(op);
                return op == panel ? allocate_warm(*warm, s) : s;
            }
        };
        const std::string &from = m_.buffers.at(p.load.src.buffer).level;
        for (const auto &e : m_.arch->engines[p.load.engine].edges) {
            if (e.src != from || e.dst == b.level) {
                continue;
            }
            nir::BufferInfo w;
            w.name = b.name + ".warm";
            w.type = b.type;
            w.elems = p.slot_elems;
            w.level = e.dst;
            w.directive = b.directive;
            nir::NpuModule trial = m_;
            trial.buffers[w.name] = w;
            trial.buffers.at(b.name).elems = p.slots * p.slot_elems;
            Wrap wrap;
            wrap.panel = panel;
            wrap.warm = &w;
            trial.body = wrap.mutate(trial.body);
            if (allocate_buffers(trial).overflow_message.empty()) {
                m_.buffers[w.name] = w;
                return w.name;
            }
        }
        return "";
    }

    Stmt rewrite_writer(const Plan &) const {
        // The first panel is loaded by its reader (first_load); later ones by rewrite_reader.
        return Evaluate::make(0);
    }
    Stmt rewrite_reader(const Plan &p) const {
        if (!p.loop) {
            return read_once(p);
        }
        const Expr idx = p.read.src.index;
        const Expr unit = i32(p.unit);
        const Expr q = idx / unit;
        const Expr o = loop_var(p.loop);
        const int64_t free_slots = p.slots - p.pieces;
        Expr first = (idx % unit) == 0, last = ((idx + i32(p.chunk)) % unit) == 0;
        Expr tile = i32(0), tiles = i32(1);
        for (const For *l : p.repeat) {
            first = first && loop_var(l) == l->min;
            last = last && loop_var(l) == last_of(l);
            tile = tile * l->extent + (loop_var(l) - l->min);
            tiles = tiles * l->extent;
        }
        const Expr not_last_o = o < last_of(p.loop);
        // The read, re-addressed to the piece's slot.
        nir::DmaOp d = p.read;
        Expr n = (o - p.loop->min) * i32(p.pieces) + q;
        d.src.index = simplify((n % i32(p.slots)) * i32(p.slot_elems) + idx % unit);
        if (p.band_row > 0) {
            for (size_t i = 1; i < d.dims.size(); i++) {
                d.dims[i].src_stride = d.dims[i].src_stride / p.band_row * p.unit;
            }
        }
        // Pieces q + free_slots of this iteration (if any: with a full second
        // panel of slots every piece is spread) wait for a slot the previous
        // iteration's last tile freed; they load in this iteration's first
        // tile, each as the reader starts on piece q (measured: in the last
        // tile they queue on the writer next to that tile's own loads, which
        // the matrix unit then waits for; GEMM 1024^3 315920 -> 305338 cycles).
        const int64_t rest = p.pieces - free_slots;
        Stmt late = Evaluate::make(0);
        if (rest > 0) {
            Expr first_tile = (idx % unit) == 0 && tile == 0 && q < i32(rest) && o > p.loop->min;
            late = IfThenElse::make(simplify(first_tile), piece_load(p, q + i32(free_slots), o));
        }
        // The first iteration: each piece as the first tile's reader starts on it (first_load).
        const Stmt first_piece =
            IfThenElse::make(simplify((idx % unit) == 0 && tile == 0 && o == p.loop->min), first_load(p, q));
        // Pieces q < free_slots of the next iteration: at the first chunk of q
        // in tile q x (tiles - 1) / free_slots (never the last tile), after
        // the first tile when that one carries late loads or, in the first
        // iteration, the first panel's pieces: loads must stay in the order
        // of n, which the raw flag counts (RingCheck refuses the program
        // otherwise).
        const Expr skip = rest > 0 ? i32(1) : Expr(select(o == p.loop->min, i32(1), i32(0)));
        Expr spread = (idx % unit) == 0 && q < i32(free_slots) &&
                      tile == skip + (q * (tiles - 1 - skip)) / i32(free_slots) && not_last_o;
        const Stmt release = flag(isa::Op::SET_FLAG, p.R, p.W, p.war);
        // The next iteration's late piece free_slots + k is read into the
        // scratch buffer at the first chunk of tile tiles - 1 - rest + k (the
        // tiles before the last): nothing reads the copy, but the L2 keeps the
        // piece, and the next iteration's first tile, where every late piece and
        // that tile's own operands share the writer, reads it at the L2 rate.
        Stmt warm = Evaluate::make(0);
        if (!p.warm.empty() && rest > 0) {
            const Expr k = tile - (tiles - 1 - i32(rest));
            nir::DmaOp w = p.load;
            w.dst = {p.warm, i32(0)};
            w.src.index = simplify(substitute(p.loop->name, o + 1, p.load.src.index) +
                                   (k + i32(free_slots)) * i32(p.src_step));
            w.dims = p.dims;
            warm = IfThenElse::make(simplify((idx % unit) == 0 && q == 0 && tile > 0 && k >= 0 && k < i32(rest) && o > p.loop->min && not_last_o),
                                    w.make());
        }
        return Block::make({warm, first_piece, IfThenElse::make(simplify(first), flag(isa::Op::WAIT_FLAG, p.W, p.R, p.raw)),
                            d.make(), late, IfThenElse::make(simplify(spread), piece_load(p, q, o + 1)),
                            IfThenElse::make(simplify(last), release)});
    }

    Stmt visit(const For *op) override {
        path_.push_back(op);
        Stmt body = mutate(op->body);
        path_.pop_back();
        Stmt loop = For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
        auto it = applied_.find(op->name);
        if (it == applied_.end()) {
            return loop;
        }
        const Plan &p = it->second;
        std::vector<Stmt> s;
        for (int64_t k = 0; k < p.slots; k++) {
            s.push_back(flag(isa::Op::SET_FLAG, p.R, p.W, p.war));
        }
        s.push_back(loop);
        for (int64_t k = 0; k < p.slots; k++) {
            s.push_back(flag(isa::Op::WAIT_FLAG, p.R, p.W, p.war));
        }
        applied_.erase(it);
        return Block::make(s);
    }
    Stmt visit(const IfThenElse *op) override {
        path_.push_back(nullptr);
        Stmt s = IRMutator::visit(op);
        path_.pop_back();
        return s;
    }
    Stmt visit(const Evaluate *op) override {
        if (active_ && op == active_->writer) {
            return rewrite_writer(*active_);
        }
        if (active_ && op == active_->reader) {
            return rewrite_reader(*active_);
        }
        return op;
    }
    Stmt visit(const Allocate *op) override {
        std::optional<Plan> p = active_ || applied_.count(path_.empty() || !path_.back() ? "" : path_.back()->name)
                                    ? std::nullopt
                                    : plan(op);
        if (!p) {
            return IRMutator::visit(op);
        }
        if (p->loop && p->slots < 2 * p->pieces) {
            p->warm = warm_buffer(*p, m_.buffers.at(op->name), op);
        }
        active_ = &*p;
        Stmt body = mutate(op->body);
        active_ = nullptr;
        nir::BufferInfo &b = m_.buffers.at(op->name);
        const int64_t piece_bytes = b.bytes() / p->pieces;
        if (!p->loop) {
            // Slots: the units RingCheck tracks (chunks when the last piece is split).
            const int64_t loads = once_loads(*p);
            const int64_t units = p->tail > 0 ? b.elems / p->chunk : p->pieces;
            b.pieces = {static_cast<int>(loads), static_cast<int>(units), "", p->W, p->R, p->raw, -1,
                        Stmt(p->writer), Stmt(p->reader)};
            std::string pieces = std::to_string(p->pieces) + " pieces of " + std::to_string(piece_bytes / 1024) + " KiB";
            if (p->tail > 0) {
                pieces = std::to_string(p->pieces - 1) + " pieces of " + std::to_string(piece_bytes / 1024) +
                         " KiB, the last in parts of";
                for (size_t k = 0; k < p->tail_pieces.size(); k++) {
                    pieces += (k ? " and " : " ") + std::to_string(p->tail_pieces[k] * b.type.bytes() / 1024) + " KiB";
                }
            }
            note(b, "buffer " + b.name + " is loaded once in " + pieces + ": its reader starts after the first");
            return Allocate::make(op->name, op->type, op->memory_type, op->extents, op->condition, body, op->new_expr,
                                  op->free_function);
        }
        b.elems = p->slots * p->slot_elems;
        b.pieces = {static_cast<int>(p->pieces), static_cast<int>(p->slots), p->loop->name, p->W, p->R, p->raw, p->war,
                    Stmt(p->writer), Stmt(p->reader)};
        std::ostringstream msg;
        msg << "buffer " << b.name << " is reloaded through a ring of " << p->slots << " slots of "
            << piece_bytes / 1024 << " KiB (" << p->pieces << " pieces per iteration of " << p->loop->name
            << "): the next iteration's first " << p->slots - p->pieces
            << " pieces load during this one, the rest as the last tile frees slots";
        if (!p->warm.empty()) {
            msg << "; those are read ahead into " << p->warm << " (" << m_.buffers.at(p->warm).level
                << ") in the tiles before the last, so they load from the L2";
        }
        note(b, msg.str());
        applied_.emplace(p->loop->name, *p);
        Stmt a = Allocate::make(op->name, op->type, op->memory_type, op->extents, op->condition, body, op->new_expr,
                                op->free_function);
        if (!p->warm.empty()) {
            a = allocate_warm(m_.buffers.at(p->warm), a);
        }
        return a;
    }
};

} // namespace

nir::NpuModule ring_panels(const nir::NpuModule &m) {
    nir::NpuModule r = m;
    r.body = Ring(r).mutate(m.body);
    return r;
}

} // namespace tessel
