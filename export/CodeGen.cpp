#include "export/CodeGen.h"

#include "npu_target/common/DType.h"

#include <cctype>
#include <sstream>

namespace tessel::exporter {

namespace {

std::string upper(const std::string &s) {
    std::string r = s;
    for (char &c : r) {
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    return r;
}

/** halide_type_code_t and bits of a Tessel element type. */
std::pair<int, int> halide_code_bits(DType t) {
    switch (t) {
    case DType::Int8: return {0, 8};
    case DType::UInt8: return {1, 8};
    case DType::Int16: return {0, 16};
    case DType::Int32: return {0, 32};
    case DType::FP16: return {2, 16};
    case DType::BF16: return {4, 16};
    case DType::FP32: return {2, 32};
    }
    return {0, 0};
}

std::string c_string(const std::string &s) {
    std::string r = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') {
            r += '\\';
        }
        r += c;
    }
    return r + "\"";
}

std::string buffer_params(const ExportedKernel &k) {
    std::string r;
    for (size_t i = 0; i < k.args.size(); i++) {
        r += (i ? ", " : "") + std::string("struct halide_buffer_t *") + k.args[i].name + "_buffer";
    }
    return r;
}

// The launcher shared by every kernel of a library: checks each
// halide_buffer_t against the program's argument (type, rank, extents),
// copies inputs into device buffers (any strides), launches, copies outputs
// back. Written into the generated source once, in an anonymous namespace.
const char *kLauncher = R"CPP(
namespace {

thread_local std::string g_error;

struct ArgInfo {
    const char *name;
    int code, bits, rank, is_output;
    int32_t extent[4];
};

int fail(int status, const std::string &msg) {
    g_error = msg;
    return status;
}

std::string shape_text(const int32_t *extent, int rank) {
    std::string s = "[";
    for (int d = 0; d < rank; d++) {
        s += (d ? " x " : "") + std::to_string(extent[d]);
    }
    return s + "]";
}

// Visits every element of `b` in dense order (dimension 0 fastest) with its
// byte offset from b->host.
template <typename F>
void for_each_element(const halide_buffer_t *b, F f) {
    const int rank = b->dimensions;
    const int64_t bytes = (b->type.bits + 7) / 8;
    int64_t total = 1;
    for (int d = 0; d < rank; d++) {
        total *= b->dim[d].extent;
    }
    std::vector<int32_t> idx(static_cast<size_t>(rank), 0);
    for (int64_t n = 0; n < total; n++) {
        int64_t off = 0;
        for (int d = 0; d < rank; d++) {
            off += static_cast<int64_t>(idx[static_cast<size_t>(d)]) * b->dim[d].stride;
        }
        f(n * bytes, off * bytes, bytes);
        for (int d = 0; d < rank; d++) {
            if (++idx[static_cast<size_t>(d)] < b->dim[d].extent) {
                break;
            }
            idx[static_cast<size_t>(d)] = 0;
        }
    }
}

int check_arg(const char *kernel, const ArgInfo &a, const halide_buffer_t *b) {
    std::string where = std::string(kernel) + ": argument " + a.name;
    if (!b || !b->host) {
        return fail(TESSEL_ERROR_INVALID_ARGUMENT, where + ": null buffer or no host memory");
    }
    if (b->flags & halide_buffer_flag_device_dirty) {
        return fail(TESSEL_ERROR_INVALID_ARGUMENT, where + ": its data is newer on a Halide device; copy it to the host first");
    }
    if (b->type.code != a.code || b->type.bits != a.bits || b->type.lanes != 1) {
        return fail(TESSEL_ERROR_INVALID_ARGUMENT, where + ": element type (code " + std::to_string(b->type.code) +
                                                       ", " + std::to_string(b->type.bits) + " bits) differs from the kernel's (code " +
                                                       std::to_string(a.code) + ", " + std::to_string(a.bits) + " bits)");
    }
    int32_t got[4] = {0, 0, 0, 0};
    bool ok = b->dimensions == a.rank;
    for (int d = 0; d < b->dimensions && d < 4; d++) {
        got[d] = b->dim[d].extent;
        ok = ok && (d >= a.rank || b->dim[d].extent == a.extent[d]);
    }
    if (!ok) {
        return fail(TESSEL_ERROR_INVALID_ARGUMENT, where + ": shape " + shape_text(got, b->dimensions < 4 ? b->dimensions : 4) +
                                                       ", the kernel was compiled for " + shape_text(a.extent, a.rank));
    }
    return TESSEL_OK;
}

struct Resources {
    tessel_program *prog = nullptr;
    std::vector<tessel_buffer *> bufs;
    ~Resources() {
        for (tessel_buffer *b : bufs) {
            tessel_buffer_free(b);
        }
        tessel_program_free(prog);
    }
};

int launch(tessel_device *dev, const char *kernel, const unsigned char *binary, size_t binary_bytes,
           const ArgInfo *args, int nargs, halide_buffer_t **hbufs, uint64_t *cycles) {
    if (!dev) {
        return fail(TESSEL_ERROR_INVALID_ARGUMENT, std::string(kernel) + ": null device");
    }
    for (int i = 0; i < nargs; i++) {
        if (int s = check_arg(kernel, args[i], hbufs[i])) {
            return s;
        }
    }
    Resources r;
    if (int s = tessel_program_load(dev, binary, binary_bytes, &r.prog)) {
        return fail(s, std::string(kernel) + ": " + tessel_last_error());
    }
    for (int i = 0; i < nargs; i++) {
        tessel_buffer *b = nullptr;
        if (int s = tessel_buffer_alloc(dev, tessel_program_arg_bytes(r.prog, i), &b)) {
            return fail(s, std::string(kernel) + ": " + tessel_last_error());
        }
        r.bufs.push_back(b);
        if (args[i].is_output) {
            continue;
        }
        std::vector<unsigned char> dense(tessel_buffer_size(b));
        const unsigned char *host = hbufs[i]->host;
        for_each_element(hbufs[i], [&](int64_t to, int64_t from, int64_t n) {
            std::memcpy(dense.data() + to, host + from, static_cast<size_t>(n));
        });
        if (int s = tessel_buffer_write(b, 0, dense.data(), dense.size())) {
            return fail(s, std::string(kernel) + ": " + tessel_last_error());
        }
    }
    if (int s = tessel_launch(dev, r.prog, r.bufs.data(), nargs)) {
        return fail(s, std::string(kernel) + ": " + tessel_last_error());
    }
    for (int i = 0; i < nargs; i++) {
        if (!args[i].is_output) {
            continue;
        }
        std::vector<unsigned char> dense(tessel_buffer_size(r.bufs[static_cast<size_t>(i)]));
        if (int s = tessel_buffer_read(r.bufs[static_cast<size_t>(i)], 0, dense.data(), dense.size())) {
            return fail(s, std::string(kernel) + ": " + tessel_last_error());
        }
        unsigned char *host = hbufs[i]->host;
        for_each_element(hbufs[i], [&](int64_t from, int64_t to, int64_t n) {
            std::memcpy(host + to, dense.data() + from, static_cast<size_t>(n));
        });
        hbufs[i]->flags |= halide_buffer_flag_host_dirty;
    }
    if (cycles) {
        tessel_profile p;
        if (int s = tessel_profile_get(dev, &p)) {
            return fail(s, std::string(kernel) + ": " + tessel_last_error());
        }
        *cycles = p.cycles;
    }
    return TESSEL_OK;
}

} // namespace
)CPP";

} // namespace

std::string describe_arg(const isa::ArgDesc &a) {
    std::string s = std::string(dtype_name(a.dtype)) + " [";
    for (size_t d = 0; d < a.shape.size(); d++) {
        s += (d ? " x " : "") + std::to_string(a.shape[d]);
    }
    return s + "]";
}

std::string generate_source(const std::string &library, const std::vector<ExportedKernel> &kernels) {
    std::ostringstream os;
    os << "// Generated by `tessel export`: library " << library << ". Do not edit.\n"
       << "#include \"" << library << ".h\"\n\n"
       << "#include <cstring>\n#include <string>\n#include <vector>\n"
       << kLauncher << "\n";
    for (const auto &k : kernels) {
        os << "static const unsigned char k_" << k.name << "_program[" << k.binary.size() << "] = {";
        for (size_t i = 0; i < k.binary.size(); i++) {
            os << (i % 24 == 0 ? "\n    " : "") << static_cast<int>(k.binary[i]) << ",";
        }
        os << "\n};\n";
        os << "static const ArgInfo k_" << k.name << "_args[" << k.args.size() << "] = {\n";
        for (const auto &a : k.args) {
            auto [code, bits] = halide_code_bits(a.dtype);
            os << "    {" << c_string(a.name) << ", " << code << ", " << bits << ", " << a.shape.size() << ", "
               << (a.is_output ? 1 : 0) << ", {";
            for (size_t d = 0; d < 4; d++) {
                os << (d ? ", " : "") << (d < a.shape.size() ? a.shape[d] : 0);
            }
            os << "}},\n";
        }
        os << "};\n\n";
        std::string bufs;
        for (const auto &a : k.args) {
            bufs += (bufs.empty() ? "" : ", ") + a.name + "_buffer";
        }
        os << "extern \"C\" int " << k.name << "_profiled(tessel_device *dev, " << buffer_params(k)
           << ", uint64_t *cycles) {\n"
           << "    halide_buffer_t *bufs[] = {" << bufs << "};\n"
           << "    return launch(dev, " << c_string(k.name) << ", k_" << k.name << "_program, sizeof k_" << k.name
           << "_program, k_" << k.name << "_args, " << k.args.size() << ", bufs, cycles);\n}\n\n"
           << "extern \"C\" int " << k.name << "(tessel_device *dev, " << buffer_params(k) << ") {\n"
           << "    return " << k.name << "_profiled(dev, " << bufs << ", nullptr);\n}\n\n"
           << "extern \"C\" const unsigned char *" << k.name << "_program(size_t *bytes) {\n"
           << "    if (bytes) {\n        *bytes = sizeof k_" << k.name << "_program;\n    }\n"
           << "    return k_" << k.name << "_program;\n}\n\n"
           << "extern \"C\" const char *" << k.name << "_arch(void) { return " << c_string(k.arch) << "; }\n\n";
    }
    os << "extern \"C\" int " << library << "_abi_version(void) { return " << upper(library) << "_ABI_VERSION; }\n\n"
       << "extern \"C\" const char *" << library << "_last_error(void) { return g_error.c_str(); }\n";
    return os.str();
}

std::string generate_header(const std::string &library, const std::string &host_target,
                            const std::vector<ExportedKernel> &kernels) {
    const std::string guard = upper(library) + "_H";
    std::ostringstream os;
    os << "/* " << library << ".h: generated by `tessel export`. Do not edit.\n"
       << " *\n"
       << " * Every kernel has three entry points:\n"
       << " *   int NAME(tessel_device *dev, halide_buffer_t *...)   runs the embedded NPU program on `dev`\n"
       << " *       (open it with tessel_device_open(NAME_arch(), &dev)): copies the inputs in, launches\n"
       << " *       through tessel_runtime.h, copies the outputs out;\n"
       << " *   int NAME_profiled(..., uint64_t *cycles)              the same, and the simulated cycles;\n"
       << " *   int NAME_cpu(halide_buffer_t *...)                    the same algorithm on the host CPU,\n"
       << " *       compiled ahead of time by Halide (its default schedule) for the host target\n"
       << " *       " << host_target << "\n"
       << " *       (it needs a CPU with those features; `tessel export --host-target` chooses them).\n"
       << " * Buffers are the inputs (in the order listed), then the outputs. Shapes are given as Halide\n"
       << " * extents, dimension 0 (innermost, stride 1 when dense) first; the NPU entry points accept any\n"
       << " * strides and check the element type and the extents. They return 0 or a negative\n"
       << " * tessel_status; " << library << "_last_error() says why. NAME_cpu returns Halide's error codes.\n"
       << " */\n"
       << "#ifndef " << guard << "\n#define " << guard << "\n\n"
       << "#include <stddef.h>\n#include <stdint.h>\n\n"
       << "#include \"HalideRuntime.h\"\n#include \"tessel_runtime.h\"\n\n"
       << "/* The ABI of the generated functions; " << library << "_abi_version() returns the library's. */\n"
       << "#define " << upper(library) << "_ABI_VERSION " << kAbiVersion << "\n\n"
       << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
       << "int " << library << "_abi_version(void);\n"
       << "/* Why the last NPU entry point of this library failed on this thread. */\n"
       << "const char *" << library << "_last_error(void);\n\n";
    for (const auto &k : kernels) {
        os << "/* ---- " << k.name << ": generator " << k.generator << " (" << format_params(k.params) << ")\n"
           << " * arch:     " << k.arch_name << " (hash " << k.arch_hash << ")\n"
           << " * schedule: " << k.schedule_hash << " (" << k.schedule_source << ")\n"
           << " * verified: " << k.comparison << "\n"
           << " *           seed " << k.seed << ", " << k.cycles << " simulated cycles\n";
        for (const auto &a : k.args) {
            os << " *   " << (a.is_output ? "output " : "input  ") << a.name << ": " << describe_arg(a) << "\n";
        }
        os << " */\n"
           << "#define " << upper(k.name) << "_SCHEDULE_HASH \"" << k.schedule_hash << "\"\n"
           << "int " << k.name << "(tessel_device *dev, " << buffer_params(k) << ");\n"
           << "int " << k.name << "_profiled(tessel_device *dev, " << buffer_params(k) << ", uint64_t *cycles);\n"
           << "int " << k.name << "_cpu(" << buffer_params(k) << ");\n"
           << "/* The embedded NPU program binary (npu_target/isa/Binary.h) and its arch. */\n"
           << "const unsigned char *" << k.name << "_program(size_t *bytes);\n"
           << "const char *" << k.name << "_arch(void);\n\n";
    }
    os << "#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
    return os.str();
}

} // namespace tessel::exporter
