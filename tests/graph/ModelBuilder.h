#ifndef TESSEL_TESTS_GRAPH_MODELBUILDER_H
#define TESSEL_TESTS_GRAPH_MODELBUILDER_H

// Tiny ONNX models written from C++ (onnx::ModelProto), so the model
// compiler's tests need no PyTorch and no committed model files.

#include "tests/graph/CliRun.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace tessel::test {

/** This test program's scratch directory for model files. */
inline std::string model_dir() {
    static const std::string d = make_scratch("tessel_graph_model_");
    return d;
}

class ModelBuilder {
public:
    explicit ModelBuilder(int opset = 13) {
        m_.set_ir_version(8);
        m_.set_producer_name("tessel-test");
        auto *op = m_.add_opset_import();
        op->set_domain("");
        op->set_version(opset);
        m_.mutable_graph()->set_name("test");
    }

    /** A graph input; a dimension < 0 is symbolic ("N" for -1, "D2" for -2, ...). */
    ModelBuilder &input(const std::string &name, const std::vector<int64_t> &dims,
                        int type = onnx::TensorProto::FLOAT) {
        value(m_.mutable_graph()->add_input(), name, dims, type);
        return *this;
    }
    /** A graph output of `rank` dimensions left to shape inference (ONNX's checker
     * wants a shape field on a main graph's output). */
    ModelBuilder &output(const std::string &name, int rank, int type = onnx::TensorProto::FLOAT) {
        auto *v = m_.mutable_graph()->add_output();
        v->set_name(name);
        auto *tt = v->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(type);
        auto *s = tt->mutable_shape();
        for (int i = 0; i < rank; i++) {
            s->add_dim();
        }
        return *this;
    }
    /** A graph output with a declared shape. */
    ModelBuilder &output_shaped(const std::string &name, const std::vector<int64_t> &dims,
                                int type = onnx::TensorProto::FLOAT) {
        value(m_.mutable_graph()->add_output(), name, dims, type);
        return *this;
    }
    /** A declared intermediate shape (value_info). */
    ModelBuilder &value_info(const std::string &name, const std::vector<int64_t> &dims,
                             int type = onnx::TensorProto::FLOAT) {
        value(m_.mutable_graph()->add_value_info(), name, dims, type);
        return *this;
    }
    ModelBuilder &init(const std::string &name, const std::vector<int64_t> &dims, const std::vector<float> &v) {
        for (float f : v) {
            initializer(name, dims, onnx::TensorProto::FLOAT).add_float_data(f);
        }
        if (v.empty()) {
            initializer(name, dims, onnx::TensorProto::FLOAT);
        }
        return *this;
    }
    ModelBuilder &init_i64(const std::string &name, const std::vector<int64_t> &dims, const std::vector<int64_t> &v) {
        for (int64_t x : v) {
            initializer(name, dims, onnx::TensorProto::INT64).add_int64_data(x);
        }
        return *this;
    }
    onnx::NodeProto &node(const std::string &op, const std::vector<std::string> &ins,
                          const std::vector<std::string> &outs, const std::string &name = "") {
        auto *n = m_.mutable_graph()->add_node();
        n->set_op_type(op);
        n->set_name(name);
        for (const auto &i : ins) {
            n->add_input(i);
        }
        for (const auto &o : outs) {
            n->add_output(o);
        }
        return *n;
    }
    static void attr(onnx::NodeProto &n, const std::string &name, int64_t v) {
        auto *a = n.add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(v);
    }
    static void attr(onnx::NodeProto &n, const std::string &name, float v) {
        auto *a = n.add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::FLOAT);
        a->set_f(v);
    }
    static void attr(onnx::NodeProto &n, const std::string &name, const std::vector<int64_t> &v) {
        auto *a = n.add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INTS);
        for (int64_t x : v) {
            a->add_ints(x);
        }
    }
    static void attr(onnx::NodeProto &n, const std::string &name, const std::string &v) {
        auto *a = n.add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::STRING);
        a->set_s(v);
    }
    /** A Constant node holding an int64 tensor. */
    ModelBuilder &constant_i64(const std::string &out, const std::vector<int64_t> &dims, const std::vector<int64_t> &v,
                               const std::string &name = "") {
        auto &n = node("Constant", {}, {out}, name);
        auto *a = n.add_attribute();
        a->set_name("value");
        a->set_type(onnx::AttributeProto::TENSOR);
        auto *t = a->mutable_t();
        t->set_data_type(onnx::TensorProto::INT64);
        for (int64_t d : dims) {
            t->add_dims(d);
        }
        for (int64_t x : v) {
            t->add_int64_data(x);
        }
        return *this;
    }

    onnx::ModelProto &proto() { return m_; }
    std::string bytes() const { return m_.SerializeAsString(); }
    /** Writes the model to `path` and returns the path. */
    std::string save(const std::string &path) const {
        std::ofstream f(path, std::ios::binary);
        f << bytes();
        return path;
    }

private:
    // The initializer called `name` (created with dims and type the first time).
    onnx::TensorProto &initializer(const std::string &name, const std::vector<int64_t> &dims, int type) {
        for (auto &t : *m_.mutable_graph()->mutable_initializer()) {
            if (t.name() == name) {
                return t;
            }
        }
        auto *t = m_.mutable_graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(type);
        for (int64_t d : dims) {
            t->add_dims(d);
        }
        return *t;
    }
    static void value(onnx::ValueInfoProto *v, const std::string &name, const std::vector<int64_t> &dims, int type) {
        v->set_name(name);
        auto *tt = v->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(type);
        auto *s = tt->mutable_shape();
        for (int64_t d : dims) {
            if (d < 0) {
                s->add_dim()->set_dim_param(d == -1 ? "N" : "D" + std::to_string(-d));
            } else {
                s->add_dim()->set_dim_value(d);
            }
        }
    }
    onnx::ModelProto m_;
};

/** PyTorch's x.view(x.size(0), -1) on x[2x3x4], then Relu: Shape -> Gather ->
 * Unsqueeze -> Concat -> Reshape (ONNX 1.12's data propagation does not resolve it). */
inline ModelBuilder shape_chain() {
    ModelBuilder b;
    b.input("x", {2, 3, 4}).output("y", 2);
    b.node("Shape", {"x"}, {"s"});
    b.constant_i64("zero", {}, {0});
    ModelBuilder::attr(b.node("Gather", {"s", "zero"}, {"n"}), "axis", int64_t(0));
    b.constant_i64("axes0", {1}, {0});
    b.node("Unsqueeze", {"n", "axes0"}, {"n1"});
    b.constant_i64("minus1", {1}, {-1});
    ModelBuilder::attr(b.node("Concat", {"n1", "minus1"}, {"shape"}), "axis", int64_t(0));
    b.node("Reshape", {"x", "shape"}, {"r"}, "flatten");
    b.node("Relu", {"r"}, {"y"}, "relu");
    return b;
}

} // namespace tessel::test

#endif
