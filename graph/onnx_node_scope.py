#!/usr/bin/python3
"""Writes graph/onnx_node_scope.txt: every test of the ONNX 1.12 backend suite's
node/ directory (Debian's libonnx-testdata), marked `in` (its operator belongs to
the CNN / transformer family of issue 23) or `out` with the reason.

    /usr/bin/python3 graph/onnx_node_scope.py > graph/onnx_node_scope.txt

(Debian's python3-onnx: call /usr/bin/python3.) `tessel onnx-test --scope
graph/onnx_node_scope.txt` runs the tests marked in (docs/onnx.md)."""
import os
import sys

import onnx

ROOT = '/usr/include/onnx/backend/test/data/node'

FAMILY = {
    # unary pointwise
    'Relu', 'Clip', 'Sigmoid', 'Tanh', 'Erf', 'Exp', 'Log', 'Sqrt', 'Reciprocal', 'LeakyRelu',
    'HardSigmoid', 'HardSwish', 'Elu', 'Selu', 'Softplus', 'Softsign', 'ThresholdedRelu', 'Neg', 'Abs',
    # broadcasting arithmetic
    'Add', 'Sub', 'Mul', 'Div', 'Pow', 'PRelu', 'Max', 'Min',
    # views
    'Reshape', 'Flatten', 'Squeeze', 'Unsqueeze', 'Identity', 'Dropout',
    # data movement
    'Transpose', 'Concat', 'Split', 'Slice', 'Gather', 'Pad',
    # matrix products and convolutions
    'Conv', 'ConvTranspose', 'Gemm', 'MatMul', 'BatchNormalization',
    # reductions, normalisation, pooling, resampling
    'ReduceMean', 'ReduceSum', 'ReduceMax', 'ReduceMin', 'Softmax', 'LogSoftmax',
    'LayerNormalization', 'AveragePool', 'MaxPool', 'GlobalAveragePool', 'GlobalMaxPool',
    'Resize', 'Upsample',
}


def reason_out(name, model):
    nodes = model.graph.node
    if len(nodes) != 1:
        ops = sorted({n.op_type for n in nodes})
        if name.endswith('_expanded'):
            return 'a function body expanded into %d nodes (a graph: the model compiler, issue 24)' % len(nodes)
        return '%d nodes (%s): a graph, not one operator' % (len(nodes), ', '.join(ops[:4]))
    op = nodes[0].op_type
    if op not in FAMILY:
        return 'operator %s is not in the CNN / transformer family' % op
    for v in list(model.graph.input) + list(model.graph.output):
        if not v.type.HasField('tensor_type'):
            return 'a %s input or output (not a tensor)' % v.type.WhichOneof('value')
    if op == 'Dropout' and name.startswith('test_training_dropout') and 'zero_ratio' not in name:
        return 'training-mode Dropout: the output is random (only its statistics can be checked)'
    return None


def main():
    out = sys.stdout
    out.write('# The ONNX 1.12 backend node tests and issue 23\'s CNN / transformer family.\n')
    out.write('# NAME in OPERATOR | NAME out REASON. Written by graph/onnx_node_scope.py; read by\n')
    out.write('# tessel onnx-test --scope (docs/onnx.md).\n')
    for name in sorted(os.listdir(ROOT)):
        model = onnx.load(os.path.join(ROOT, name, 'model.onnx'))
        why = reason_out(name, model)
        if why:
            out.write('%s out %s\n' % (name, why))
        else:
            out.write('%s in %s\n' % (name, model.graph.node[0].op_type))


main()
