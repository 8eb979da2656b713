// tessel_runtime.h on the simulator. Every entry point catches exceptions and
// turns them into a status + tessel_last_error().

#include "npu_target/runtime/RuntimeCxx.h"

#include "npu_target/arch/ArchSpec.h"
#include "npu_target/isa/Binary.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

struct tessel_device {
    tessel::ArchSpec arch;
    tessel::sim::SimOptions opt;
    std::optional<tessel::sim::SimReport> last;
    tessel::isa::Program last_prog;
    std::string summary, trace;
    bool trace_ready = false;
};

struct tessel_buffer {
    tessel_device *dev = nullptr;
    std::vector<uint8_t> data;
};

struct tessel_program {
    tessel_device *dev = nullptr;
    tessel::isa::Program prog;
};

namespace {

thread_local std::string g_error;

int fail(int status, const std::string &msg) {
    g_error = msg;
    return status;
}

template <typename F>
int guarded(int status_on_user_error, F f) {
    try {
        return f();
    } catch (const tessel::sim::SimError &e) {
        return fail(TESSEL_ERROR_EXECUTION, e.what());
    } catch (const tessel::UserError &e) {
        return fail(status_on_user_error, e.what());
    } catch (const std::exception &e) {
        return fail(TESSEL_ERROR_INTERNAL, e.what());
    } catch (...) {
        return fail(TESSEL_ERROR_INTERNAL, "unknown exception");
    }
}

int64_t arg_bytes(const tessel::isa::ArgDesc &a) {
    int64_t n = 1;
    for (int64_t e : a.shape) {
        n *= e;
    }
    return n * tessel::dtype_bytes(a.dtype);
}

} // namespace

namespace tessel::runtime {

int program_from_isa(tessel_device *dev, const isa::Program &p, tessel_program **out) {
    if (!dev || !out) {
        return fail(TESSEL_ERROR_INVALID_ARGUMENT, "tessel_program_load: null device or output pointer");
    }
    return guarded(TESSEL_ERROR_PROGRAM, [&]() {
        auto prog = std::make_unique<tessel_program>();
        prog->dev = dev;
        prog->prog = p;
        *out = prog.release();
        return static_cast<int>(TESSEL_OK);
    });
}

const sim::SimReport *last_report(const tessel_device *dev) {
    return dev && dev->last ? &*dev->last : nullptr;
}

void set_sim_options(tessel_device *dev, const sim::SimOptions &opt) {
    if (dev) {
        dev->opt = opt;
    }
}

} // namespace tessel::runtime

extern "C" {

int tessel_device_open(const char *preset_or_arch_file, tessel_device **out) {
    if (!preset_or_arch_file || !out) {
        return fail(TESSEL_ERROR_INVALID_ARGUMENT, "tessel_device_open: null argument");
    }
    *out = nullptr;
    return guarded(TESSEL_ERROR_ARCH, [&]() {
        auto dev = std::make_unique<tessel_device>();
        const char *c = preset_or_arch_file;
        while (*c == ' ' || *c == '\n' || *c == '\t' || *c == '\r') {
            ++c;
        }
        dev->arch = *c == '{' ? tessel::parse_arch(c, "tessel_device_open (arch JSON text)")
                              : tessel::load_arch(preset_or_arch_file);
        *out = dev.release();
        return static_cast<int>(TESSEL_OK);
    });
}

void tessel_device_close(tessel_device *dev) {
    delete dev;
}

int tessel_buffer_alloc(tessel_device *dev, size_t bytes, tessel_buffer **out) {
    if (!dev || !out) {
        return fail(TESSEL_ERROR_INVALID_ARGUMENT, "tessel_buffer_alloc: null device or output pointer");
    }
    *out = nullptr;
    return guarded(TESSEL_ERROR_INVALID_ARGUMENT, [&]() {
        auto b = std::make_unique<tessel_buffer>();
        b->dev = dev;
        b->data.assign(bytes, 0);
        *out = b.release();
        return static_cast<int>(TESSEL_OK);
    });
}

void tessel_buffer_free(tessel_buffer *buf) {
    delete buf;
}

size_t tessel_buffer_size(const tessel_buffer *buf) {
    return buf ? buf->data.size() : 0;
}

int tessel_buffer_write(tessel_buffer *buf, size_t offset, const void *src, size_t bytes) {
    if (!buf || (!src && bytes)) {
        return fail(TESSEL_ERROR_INVALID_ARGUMENT, "tessel_buffer_write: null buffer or source");
    }
    if (offset > buf->data.size() || bytes > buf->data.size() - offset) {
        return fail(TESSEL_ERROR_INVALID_ARGUMENT, "tessel_buffer_write: [" + std::to_string(offset) + ", " +
                                                       std::to_string(offset + bytes) + ") is outside the buffer of " +
                                                       std::to_string(buf->data.size()) + " bytes");
    }
    if (bytes) {
        std::memcpy(buf->data.data() + offset, src, bytes);
    }
    return TESSEL_OK;
}

int tessel_buffer_read(const tessel_buffer *buf, size_t offset, void *dst, size_t bytes) {
    if (!buf || (!dst && bytes)) {
        return fail(TESSEL_ERROR_INVALID_ARGUMENT, "tessel_buffer_read: null buffer or destination");
    }
    if (offset > buf->data.size() || bytes > buf->data.size() - offset) {
        return fail(TESSEL_ERROR_INVALID_ARGUMENT, "tessel_buffer_read: [" + std::to_string(offset) + ", " +
                                                       std::to_string(offset + bytes) + ") is outside the buffer of " +
                                                       std::to_string(buf->data.size()) + " bytes");
    }
    if (bytes) {
        std::memcpy(dst, buf->data.data() + offset, bytes);
    }
    return TESSEL_OK;
}

int tessel_program_load(tessel_device *dev, const void *binary, size_t bytes, tessel_program **out) {
    if (!dev || !binary || !out) {
        return fail(TESSEL_ERROR_INVALID_ARGUMENT, "tessel_program_load: null argument");
    }
    *out = nullptr;
    return guarded(TESSEL_ERROR_PROGRAM, [&]() {
        const auto *p = static_cast<const uint8_t *>(binary);
        tessel::isa::Program prog = tessel::isa::read_program(std::vector<uint8_t>(p, p + bytes), "program binary");
        tessel::isa::check_program_against_arch(prog, dev->arch);
        return tessel::runtime::program_from_isa(dev, prog, out);
    });
}

void tessel_program_free(tessel_program *prog) {
    delete prog;
}

int tessel_program_num_args(const tessel_program *prog) {
    return prog ? static_cast<int>(prog->prog.args.size()) : 0;
}

size_t tessel_program_arg_bytes(const tessel_program *prog, int i) {
    if (!prog || i < 0 || i >= static_cast<int>(prog->prog.args.size())) {
        return 0;
    }
    return static_cast<size_t>(arg_bytes(prog->prog.args[static_cast<size_t>(i)]));
}

int tessel_launch(tessel_device *dev, tessel_program *prog, tessel_buffer **args, int nargs) {
    if (!dev || !prog || (nargs > 0 && !args)) {
        return fail(TESSEL_ERROR_INVALID_ARGUMENT, "tessel_launch: null device, program or argument array");
    }
    const auto &p = prog->prog;
    if (nargs != static_cast<int>(p.args.size())) {
        return fail(TESSEL_ERROR_INVALID_ARGUMENT, "tessel_launch: kernel '" + p.kernel_name + "' takes " +
                                                       std::to_string(p.args.size()) + " arguments, got " +
                                                       std::to_string(nargs));
    }
    for (int i = 0; i < nargs; ++i) {
        const auto &a = p.args[static_cast<size_t>(i)];
        if (!args[i]) {
            return fail(TESSEL_ERROR_INVALID_ARGUMENT, "tessel_launch: argument " + std::to_string(i) + " is null");
        }
        if (static_cast<int64_t>(args[i]->data.size()) != arg_bytes(a)) {
            return fail(TESSEL_ERROR_INVALID_ARGUMENT,
                        "tessel_launch: argument " + std::to_string(i) + " ('" + a.name + "') needs " +
                            std::to_string(arg_bytes(a)) + " bytes, the buffer has " +
                            std::to_string(args[i]->data.size()));
        }
    }
    return guarded(TESSEL_ERROR_EXECUTION, [&]() {
        std::vector<tessel::Tensor> ts(static_cast<size_t>(nargs));
        for (int i = 0; i < nargs; ++i) {
            const auto &a = p.args[static_cast<size_t>(i)];
            ts[static_cast<size_t>(i)].name = a.name;
            ts[static_cast<size_t>(i)].dtype = a.dtype;
            ts[static_cast<size_t>(i)].shape = a.shape;
            ts[static_cast<size_t>(i)].data = args[i]->data; // copy: the same buffer may be passed twice
        }
        tessel::sim::SimReport r = tessel::sim::simulate(p, dev->arch, ts, dev->opt);
        for (int i = 0; i < nargs; ++i) {
            if (p.args[static_cast<size_t>(i)].is_output) {
                args[i]->data = ts[static_cast<size_t>(i)].data;
            }
        }
        dev->last = std::move(r);
        dev->last_prog = p;
        dev->summary = tessel::sim::summarize(*dev->last);
        dev->trace.clear();
        dev->trace_ready = false;
        return static_cast<int>(TESSEL_OK);
    });
}

int tessel_profile_get(tessel_device *dev, tessel_profile *out) {
    if (!dev || !out) {
        return fail(TESSEL_ERROR_INVALID_ARGUMENT, "tessel_profile_get: null argument");
    }
    if (!dev->last) {
        return fail(TESSEL_ERROR_INVALID_ARGUMENT, "tessel_profile_get: nothing has been launched on this device");
    }
    const auto &r = *dev->last;
    std::memset(out, 0, sizeof *out);
    out->cycles = r.cycles;
    out->instructions = r.instructions;
    out->seconds = dev->arch.clock_hz > 0 ? static_cast<double>(r.cycles) / dev->arch.clock_hz : 0;
    out->l2_hit_bytes = r.l2_hit_bytes;
    out->l2_miss_bytes = r.l2_miss_bytes;
    for (const auto &ps : r.pipes) {
        int k = 0;
        while (k < out->num_pipes && std::strcmp(out->pipes[k].pipe, ps.pipe.c_str()) != 0) {
            ++k;
        }
        if (k == out->num_pipes) {
            if (out->num_pipes == 16) {
                continue;
            }
            std::strncpy(out->pipes[k].pipe, ps.pipe.c_str(), sizeof out->pipes[k].pipe - 1);
            out->num_pipes++;
        }
        out->pipes[k].busy_cycles += ps.busy_cycles;
        out->pipes[k].instructions += ps.instructions;
        out->pipes[k].stall_cycles += ps.stall_cycles;
    }
    return TESSEL_OK;
}

const char *tessel_profile_summary(tessel_device *dev) {
    if (!dev || !dev->last) {
        fail(TESSEL_ERROR_INVALID_ARGUMENT, "tessel_profile_summary: nothing has been launched on this device");
        return "";
    }
    return dev->summary.c_str();
}

const char *tessel_trace_json(tessel_device *dev) {
    if (!dev || !dev->last) {
        fail(TESSEL_ERROR_INVALID_ARGUMENT, "tessel_trace_json: nothing has been launched on this device");
        return "";
    }
    if (!dev->trace_ready) {
        try {
            dev->trace = tessel::sim::trace_to_chrome_json(*dev->last, dev->last_prog);
        } catch (const std::exception &e) {
            fail(TESSEL_ERROR_INTERNAL, e.what());
            return "";
        }
        dev->trace_ready = true;
    }
    return dev->trace.c_str();
}

const char *tessel_last_error(void) {
    return g_error.c_str();
}

} // extern "C"
