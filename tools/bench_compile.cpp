// Compile-facade latency: tessel::compile() (generator instantiation, schedule
// application, Halide lowering to the captured Stmt, footprint checks; no JIT)
// for GEMM 1024x1024x1024 with each sample schedule. Prints a table.
//   tessel_bench_compile [--repeat N] [--source DIR]
#include "dsl/Compile.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace tessel;

int main(int argc, char **argv) {
    int repeat = 20;
    std::string source = TESSEL_SOURCE_DIR;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--repeat")) {
            repeat = std::max(1, std::atoi(argv[i + 1]));
        } else if (!std::strcmp(argv[i], "--source")) {
            source = argv[i + 1];
        }
    }
    std::printf("compile facade latency, gemm M=N=K=1024 fp16, arch ascend-like, %d runs each (first run excluded)\n", repeat);
    std::printf("%-18s %10s %10s %10s  %s\n", "schedule", "min ms", "median ms", "max ms", "ok");
    int failures = 0;
    for (const char *name : {"naive", "tiled_vectorized", "tiled_staged"}) {
        CompileRequest req;
        req.generator = "gemm";
        req.params = {{"M", "1024"}, {"N", "1024"}, {"K", "1024"}, {"dtype", "fp16"}};
        req.schedule = load_schedule(source + "/samples/gemm/schedules/" + name + ".json");
        req.arch = "ascend-like";
        bool ok = compile(req).ok; // warm-up: first-use costs (LLVM target init) are not latency
        std::vector<double> ms;
        for (int r = 0; r < repeat; r++) {
            CompileResult res = compile(req);
            ok = ok && res.ok;
            ms.push_back(res.compile_ms);
        }
        std::sort(ms.begin(), ms.end());
        std::printf("%-18s %10.2f %10.2f %10.2f  %s\n", name, ms.front(), ms[ms.size() / 2], ms.back(), ok ? "yes" : "NO");
        failures += !ok;
    }
    return failures ? 1 : 0;
}
