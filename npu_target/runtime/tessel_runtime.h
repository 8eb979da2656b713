#ifndef TESSEL_RUNTIME_H
#define TESSEL_RUNTIME_H

/* Tessel device runtime: the interface exported kernel libraries call. The
 * first backend is the simulator (npu_target/sim); a real driver can replace it
 * without touching generated code.
 *
 * Every function returns TESSEL_OK (0) or a negative status; on failure
 * tessel_last_error() gives a message naming what is wrong (thread-local, valid
 * until the next failing call on the same thread). No C++ exception crosses
 * this interface. */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tessel_status {
    TESSEL_OK = 0,
    TESSEL_ERROR_INVALID_ARGUMENT = -1, /* null pointer, wrong size, wrong argument count */
    TESSEL_ERROR_ARCH = -2,             /* the preset or arch file could not be loaded */
    TESSEL_ERROR_PROGRAM = -3,          /* the program binary is malformed or for another arch */
    TESSEL_ERROR_EXECUTION = -4,        /* the simulator stopped: protection, race, deadlock */
    TESSEL_ERROR_INTERNAL = -5
} tessel_status;

typedef struct tessel_device tessel_device;
typedef struct tessel_buffer tessel_buffer;
typedef struct tessel_program tessel_program;

/** Opens a device: a preset name ("ascend-like"), a path to an arch JSON file, or
 * the arch's JSON text itself (text starting with '{': what NAME_arch() of a kernel
 * exported for an arch file returns). */
int tessel_device_open(const char *preset_or_arch_file, tessel_device **out);
/** Closes a device; buffers and programs must have been freed (NULL is ignored). */
void tessel_device_close(tessel_device *dev);

/** Device (GM) buffer of `bytes` bytes, zero-filled. */
int tessel_buffer_alloc(tessel_device *dev, size_t bytes, tessel_buffer **out);
void tessel_buffer_free(tessel_buffer *buf);
size_t tessel_buffer_size(const tessel_buffer *buf);
/** Copies `bytes` host bytes into the buffer at `offset` (the range must fit). */
int tessel_buffer_write(tessel_buffer *buf, size_t offset, const void *src, size_t bytes);
/** Copies `bytes` from the buffer at `offset` to host memory. */
int tessel_buffer_read(const tessel_buffer *buf, size_t offset, void *dst, size_t bytes);

/** Loads a program binary (.tsl, see npu_target/isa/Binary.h) and checks it against the device's arch. */
int tessel_program_load(tessel_device *dev, const void *binary, size_t bytes, tessel_program **out);
void tessel_program_free(tessel_program *prog);
/** Number of kernel arguments and the byte size argument i must have. */
int tessel_program_num_args(const tessel_program *prog);
size_t tessel_program_arg_bytes(const tessel_program *prog, int i);

/** Runs the program to completion with args[i] as kernel argument i (in the
 * program's argument order; each buffer exactly the argument's byte size).
 * Outputs are written into the buffers. Records the profile and the trace. */
int tessel_launch(tessel_device *dev, tessel_program *prog, tessel_buffer **args, int nargs);

/** Profile of the device's last successful launch. */
typedef struct tessel_pipe_profile {
    char pipe[16];      /* "V", "MTE2", ... (core 0 and others are summed) */
    uint64_t busy_cycles;
    uint64_t instructions;
    uint64_t stall_cycles;
} tessel_pipe_profile;

typedef struct tessel_profile {
    uint64_t cycles;
    uint64_t instructions;
    double seconds;          /* cycles / clock_hz of the arch */
    int64_t l2_hit_bytes, l2_miss_bytes;
    int num_pipes;           /* entries of pipes[] filled (at most 16) */
    tessel_pipe_profile pipes[16];
} tessel_profile;

int tessel_profile_get(tessel_device *dev, tessel_profile *out);
/** Text summary of the last launch (pipes, engine edges); pointer valid until the next launch. */
const char *tessel_profile_summary(tessel_device *dev);
/** Chrome/Perfetto JSON of the last launch; pointer valid until the next launch or close. */
const char *tessel_trace_json(tessel_device *dev);

/** Message of the last failure on this thread ("" if none). */
const char *tessel_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
