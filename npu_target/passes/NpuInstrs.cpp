#include "npu_target/passes/NpuInstrs.h"

namespace tessel {

isa::DmaDesc dma_descriptor(const nir::DmaOp &d) {
    isa::DmaDesc desc;
    desc.dims = static_cast<uint8_t>(d.dims.size());
    desc.elem_bytes = static_cast<uint32_t>(d.elem_bytes);
    for (size_t i = 0; i < d.dims.size(); i++) {
        desc.count[i] = static_cast<uint32_t>(d.dims[i].count);
        desc.dst_stride[i] = d.dims[i].dst_stride * d.elem_bytes;
        desc.src_stride[i] = d.dims[i].src_stride * d.src_elem_bytes();
    }
    desc.transform = static_cast<uint8_t>(d.transform);
    return desc;
}

uint16_t intern_descriptor(isa::Program &p, const isa::DmaDesc &d) {
    for (size_t i = 0; i < p.descs.size(); i++) {
        const isa::DmaDesc &e = p.descs[i];
        if (e.dims == d.dims && e.elem_bytes == d.elem_bytes && e.count == d.count && e.src_stride == d.src_stride &&
            e.dst_stride == d.dst_stride && e.transform == d.transform) {
            return static_cast<uint16_t>(i);
        }
    }
    p.descs.push_back(d);
    return static_cast<uint16_t>(p.descs.size() - 1);
}

isa::Instr dma_instr(const nir::DmaOp &d, int dst_level, int src_level, int dst, int src, uint16_t desc) {
    isa::Instr i;
    i.op = isa::Op::DMA;
    i.engine = static_cast<uint8_t>(d.engine);
    i.dst_level = static_cast<uint8_t>(dst_level);
    i.src_level = static_cast<uint8_t>(src_level);
    i.ra = static_cast<uint8_t>(dst);
    i.rb = static_cast<uint8_t>(src);
    i.desc = desc;
    i.prov = d.prov;
    return i;
}

isa::Instr fixparam_instr(const nir::FixParamOp &f, int src_level, int bias, int scale) {
    isa::Instr i;
    i.op = isa::Op::FIXPARAM;
    i.engine = static_cast<uint8_t>(f.engine);
    i.src_level = static_cast<uint8_t>(src_level);
    i.ra = static_cast<uint8_t>(bias);
    i.rb = static_cast<uint8_t>(scale);
    i.n = static_cast<uint16_t>(f.channels);
    i.aux = static_cast<uint32_t>(f.shift) | (f.relu ? 32u : 0u);
    i.dtype = f.scale_type;
    i.dtype2 = f.out_type;
    i.prov = f.prov;
    return i;
}

isa::Instr vector_instr(const nir::VecOp &v, int dst, int a, int b, int scalar, int count) {
    isa::Instr i;
    i.op = v.op;
    i.dtype = v.dtype;
    i.dtype2 = v.dtype2;
    i.ra = static_cast<uint8_t>(dst);
    if (v.scalar.defined()) { // *S ops and VDUP: rb = scalar, rc = a
        i.rb = static_cast<uint8_t>(scalar);
        i.rc = static_cast<uint8_t>(a);
    } else {
        i.rb = static_cast<uint8_t>(a);
        i.rc = static_cast<uint8_t>(b);
    }
    i.rd = static_cast<uint8_t>(count);
    i.rows = static_cast<uint16_t>(v.rows);
    for (int k = 0; k < 3; k++) {
        i.stride[k] = v.stride[k];
        i.row_stride[k] = v.row_stride[k];
    }
    i.aux = v.aux;
    i.prov = v.prov;
    return i;
}

isa::Instr mmad_instr(const nir::MmadOp &mm, int c, int a, int b) {
    isa::Instr i;
    i.op = isa::Op::MMAD;
    i.dtype = mm.dtype;
    i.ra = static_cast<uint8_t>(c);
    i.rb = static_cast<uint8_t>(a);
    i.rc = static_cast<uint8_t>(b);
    i.m = static_cast<uint16_t>(mm.m);
    i.k = static_cast<uint16_t>(mm.k);
    i.n = static_cast<uint16_t>(mm.n);
    i.aux = mm.init ? 1 : 0;
    i.prov = mm.prov;
    return i;
}

isa::Instr sync_instr(const nir::SyncOp &s) {
    isa::Instr i;
    i.op = s.op;
    i.src_pipe = static_cast<uint8_t>(s.src);
    i.dst_pipe = static_cast<uint8_t>(s.dst);
    i.event = static_cast<uint8_t>(s.event);
    return i;
}

} // namespace tessel
