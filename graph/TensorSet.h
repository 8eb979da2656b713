#ifndef TESSEL_GRAPH_TENSORSET_H
#define TESSEL_GRAPH_TENSORSET_H

// Sets of tensor files as the CLI names them (`--inputs FILE|DIR`, `--expect
// FILE|DIR`, `--save-outputs DIR`; docs/tensors.md): the naming rules, the
// ONNX test suite's input_K.pb / output_K.pb positions, and saving outputs.

#include "graph/TensorFile.h"
#include "npu_target/common/TensorBinding.h"

#include <string>
#include <vector>

namespace tessel::graph {

/** What a set of files is for: the ONNX suite's files are input_K / output_K. */
enum class TensorRole { Input, Output };

/** Reads `path`: one .pb or .npy file, or every .pb and .npy file in a
 * directory (sorted by name; other files are ignored, and in a directory the
 * suite's files of the other role, output_K for inputs and input_K for
 * outputs, are skipped, so that one test_data_set_N directory serves both
 * --inputs and --expect). Each tensor is named by its TensorProto.name, else
 * by its file stem; a file whose stem is input_K (output_K) gets position K.
 * Errors (every one a UserError naming the file): the readers', a type
 * Tessel's generators do not take, a directory with no tensor files. */
std::vector<GivenTensor> read_tensor_set(const std::string &path, TensorRole role);

/** The position the ONNX suite's file stem `stem` gives for `role`
 * ("input_3" -> 3 for inputs), or -1. */
int suite_position(const std::string &stem, TensorRole role);

/** Writes each tensor to DIR/<name>.pb and/or DIR/<name>.npy (creating DIR)
 * and returns the paths written, in order. A name that is not a plain file
 * name (empty, '/', "..") is a UserError. */
std::vector<std::string> save_tensor_set(const std::vector<Tensor> &tensors, const std::string &dir, bool pb, bool npy);

} // namespace tessel::graph

#endif
