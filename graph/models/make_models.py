#!/usr/bin/python3
"""Real models for the model compiler (docs/models.md): torchvision's ResNet-18
and MobileNetV2 and one transformer encoder layer, with seeded random weights,
exported by PyTorch's own exporter (torch.onnx.export, opset 13), each with its
reference output from PyTorch in the ONNX test-data layout:

    OUT/NAME/model.onnx
    OUT/NAME/test_data_set_0/input_0.pb    (the input, seeded random)
    OUT/NAME/test_data_set_0/output_0.pb   (PyTorch's output for it)

Needs Debian's python3-torch and python3-torchvision (apt-get install -y
python3-torch python3-torchvision; call /usr/bin/python3). The models are large
(ResNet-18 45 MB), so they are generated into build/models, not committed.

    /usr/bin/python3 graph/models/make_models.py                  # all, into build/models
    /usr/bin/python3 graph/models/make_models.py --out /tmp/m resnet18
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper
import torch
import torchvision


class EncoderLayer(torch.nn.Module):
    """One transformer encoder layer: multi-head self-attention, LayerNorm, a GELU MLP."""

    def __init__(self, d_model=64, nhead=4, dim_feedforward=256):
        super().__init__()
        self.layer = torch.nn.TransformerEncoderLayer(
            d_model, nhead, dim_feedforward, dropout=0.0, activation="gelu", batch_first=True)

    def forward(self, x):
        return self.layer(x)


class SmallCnn(torch.nn.Module):
    """A ResNet-style block at 16x16, small enough for `tessel model run` to simulate in
    seconds: conv-BN-ReLU, conv-BN + the residual, ReLU, max pool, global average pool, linear."""

    def __init__(self, c=8, classes=10):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, c, 3, padding=1, bias=False), torch.nn.BatchNorm2d(c),
                                        torch.nn.ReLU())
        self.conv = torch.nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn = torch.nn.BatchNorm2d(c)
        self.pool = torch.nn.MaxPool2d(2)
        self.fc = torch.nn.Linear(c, classes)

    def forward(self, x):
        x = self.stem(x)
        x = torch.relu(self.bn(self.conv(x)) + x)
        x = self.pool(x)
        return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1))


MODELS = {
    # name: (constructor, input shape)
    "resnet18": (lambda: torchvision.models.resnet18(weights=None), (1, 3, 224, 224)),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(weights=None), (1, 3, 224, 224)),
    "transformer_encoder": (lambda: EncoderLayer(), (1, 16, 64)),
    "small_cnn": (lambda: SmallCnn(), (1, 3, 16, 16)),
}


def randomise(model, seed):
    """Seeded random weights, and BatchNorm statistics that are not the identity
    (a fresh BatchNorm has mean 0 and var 1, which would hide a wrong fold)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(m.num_features, generator=g) * 0.5 + 0.75)
                m.weight.copy_(torch.rand(m.num_features, generator=g) * 0.5 + 0.75)
                m.bias.copy_(torch.randn(m.num_features, generator=g) * 0.1)


def export(name, out_dir, seed):
    make, shape = MODELS[name]
    torch.manual_seed(seed)
    model = make()
    randomise(model, seed)
    model.eval()
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(seed + 1))
    with torch.no_grad():
        y = model(x)
    d = os.path.join(out_dir, name)
    data = os.path.join(d, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    # PRESERVE (the model is in eval mode) and no constant folding: the exporter
    # then leaves BatchNormalization nodes and its constant subgraphs in the model,
    # for Tessel's passes to fold (EVAL would fold BatchNorm into the Conv itself).
    torch.onnx.export(model, x, path, opset_version=13, input_names=["input"], output_names=["output"],
                      training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
    onnx.checker.check_model(onnx.load(path))
    for fname, t, tname in (("input_0.pb", x, "input"), ("output_0.pb", y, "output")):
        p = numpy_helper.from_array(t.numpy().astype(np.float32), tname)
        with open(os.path.join(data, fname), "wb") as f:
            f.write(p.SerializeToString())
    ops = sorted({n.op_type for n in onnx.load(path).graph.node})
    print(f"{path}: {os.path.getsize(path)} bytes, input {list(shape)}, output {list(y.shape)}, ops {', '.join(ops)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="build/models", help="directory to write NAME/ into (default build/models)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("names", nargs="*", help="models to export (default all): " + ", ".join(MODELS))
    a = ap.parse_args()
    for n in a.names:
        if n not in MODELS:
            sys.exit(f"make_models.py: no model '{n}' (the models: {', '.join(MODELS)})")
    for n in a.names or MODELS:
        export(n, a.out, a.seed)


if __name__ == "__main__":
    main()
