#ifndef TESSEL_GRAPH_ONNXTESTRUNNER_H
#define TESSEL_GRAPH_ONNXTESTRUNNER_H

// The ONNX backend test suite on the NPU (`tessel onnx-test`, docs/onnx.md):
// each test is a directory with a single-operator model.onnx and
// test_data_set_N/{input_K,output_K}.pb. A test's node is mapped to its
// generator (graph/OnnxOps.h), compiled with the generator's schedule (the
// automatic one, scheduler/AutoSchedule), simulated on the given inputs,
// checked against Halide's CPU result and compared with the expected outputs
// at the suite's tolerance (rtol 1e-3, atol 1e-7, as ONNX's runner). Halide-free.

#include <functional>
#include <string>
#include <vector>

namespace tessel::graph {

struct OnnxTestOptions {
    std::string arch = "ascend-like"; // a preset or an arch file
    std::string only;                 // ECMAScript regex on the test name ("" = all)
    bool quick = false;               // the first test (by name) of each operator only
    std::string scope_file;           // "" = every test found; else only those the file marks "in"
    double rtol = 1e-3;
    double atol = 1e-7;
};

struct OnnxTestResult {
    enum Status { Pass, Fail, Skip, Error };
    std::string name;     // the directory's name (test_relu)
    std::string dir;
    std::string op_type;  // "" when the model could not be read
    Status status = Error;
    std::string detail;   // pass: the comparison; fail: the largest error or the failure; skip: the reason; error: the message
    double max_error = 0;
    std::string generator;
    std::string params;   // K=V,... as tessel run -p takes them
    std::string schedule; // where the schedule came from: auto (vector form) / auto (default placement: ...)
    std::string view;     // how the tensors were viewed (a note), or ""
    double seconds = 0;
};

const char *status_name(OnnxTestResult::Status s);

/** The test directories under `paths`: a path holding model.onnx is one test;
 * any other directory is searched one level down (the suite's node/ directory),
 * sorted by name. A path that does not exist is a UserError naming it. */
std::vector<std::string> find_onnx_tests(const std::vector<std::string> &paths);

/** Reads a scope file: lines "NAME in OPERATOR" or "NAME out REASON", '#' comments.
 * Returns the names marked in. A malformed line is a UserError naming the file and line. */
std::vector<std::string> read_onnx_scope(const std::string &path);

/** Selects (--only, the scope, --quick) and runs the tests, calling `each` after each one. */
std::vector<OnnxTestResult> run_onnx_tests(const std::vector<std::string> &dirs, const OnnxTestOptions &o,
                                           const std::function<void(const OnnxTestResult &)> &each);

/** Runs one test directory; never throws for a problem of the test (it is an Error result). */
OnnxTestResult run_onnx_test(const std::string &dir, const OnnxTestOptions &o);

/** One line: "PASS test_relu (Relu -> onnx_relu N=60,dtype=fp32; auto): ...". */
std::string format_result(const OnnxTestResult &r);
/** "N passed, N failed, N skipped" (", N errors" when there are any). */
std::string format_totals(const std::vector<OnnxTestResult> &rs);
/** The report (--report): arch, tolerance, totals and one object per test, as JSON. */
std::string onnx_report_json(const std::vector<OnnxTestResult> &rs, const OnnxTestOptions &o);

} // namespace tessel::graph

#endif
