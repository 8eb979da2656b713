// libFuzzer harness: the tensor file readers (graph/TensorFile.h), as
// `tessel run --inputs/--expect` and `tessel sim` use them: each input is read
// both as an ONNX TensorProto (.pb, through Debian's libonnx protobuf classes)
// and as a NumPy .npy file.
//
// Beyond "a bad file is a UserError": an accepted tensor holds exactly
// elements * element size bytes, writes back (.pb always, .npy for every type
// NumPy has) and reads back as the same tensor, and converts to a tessel::Tensor
// of the same bytes when its type is one the generators take.
#include "fuzz/FuzzCheck.h"
#include "graph/TensorFile.h"
#include "npu_target/common/Error.h"

#include <vector>

namespace {

using namespace tessel;
using namespace tessel::graph;

void same(const FileTensor &a, const FileTensor &b, const char *what) {
    if (a.type != b.type || a.dims != b.dims || a.data != b.data) {
        fuzz::invariant_failed("fuzz_tensor", std::string(what) + " changed " + a.describe() + " into " + b.describe());
    }
}

void check(const FileTensor &t) {
    if (static_cast<int64_t>(t.data.size()) != t.elements() * elem_bytes(t.type)) {
        fuzz::invariant_failed("fuzz_tensor", t.describe() + " holds " + std::to_string(t.data.size()) + " bytes");
    }
    std::string pb = encode_pb_tensor(t);
    FileTensor back = parse_pb_tensor(std::vector<uint8_t>(pb.begin(), pb.end()), "again.pb");
    same(t, back, "a .pb round trip");
    if (back.name != t.name) {
        fuzz::invariant_failed("fuzz_tensor", "a .pb round trip changed the name");
    }
    if (t.type != ElemType::BFloat16) {
        std::string npy = encode_npy_tensor(t, "again.npy");
        same(t, parse_npy_tensor(std::vector<uint8_t>(npy.begin(), npy.end()), "again.npy"), "a .npy round trip");
    }
    if (elem_dtype(t.type)) {
        Tensor x = to_tensor(t, "x", "fuzz");
        if (x.data != t.data || static_cast<size_t>(x.elements()) * dtype_bytes(x.dtype) != x.data.size()) {
            fuzz::invariant_failed("fuzz_tensor", "to_tensor changed " + t.describe());
        }
        same(t, from_tensor(x), "to_tensor and back");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    std::vector<uint8_t> bytes(data, data + size);
    for (bool npy : {false, true}) {
        FileTensor t;
        try {
            t = npy ? parse_npy_tensor(bytes, "fuzz.npy") : parse_pb_tensor(bytes, "fuzz.pb");
        } catch (const UserError &e) {
            fuzz::rejected("fuzz_tensor", e);
            continue;
        }
        check(t);
    }
    return 0;
}
