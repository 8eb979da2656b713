#!/usr/bin/env python3
"""Regenerate the figures docs/ide.md quotes from `tessel run --report-json`.

    tools/doc_figures.py            # rewrite the block between <!-- figures:begin --> and
                                    # <!-- figures:end --> in docs/ide.md (make doc-figures)
    tools/doc_figures.py --check    # exit 1 naming the stale lines, change nothing (ctest -L docs);
                                    # also a run's figure written in the prose ("16366 cycles",
                                    # "efficiency 0.501"): it belongs in the table

Each row of the block is one run of `tessel run` (compile, simulate, verify against Halide's
CPU result) on a problem the page talks about: cycles, the physical limit, efficiency (limit /
cycles) and the resource that binds the limit, all read from the run report. A run that does
not verify is an error (exit 2): its figures do not belong in the documentation.
"""

import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = "<!-- figures:begin -->"
END = "<!-- figures:end -->"

PROSE_FIGURE = re.compile(r"\b\d{4,} cycles\b|\befficiency \d\.\d{2,}|\(\d{4,} cycles, \d\.\d+\)")

# (generator, params, schedule file relative to the repository, arch): the problems docs/ide.md
# shows (its screenshots, the tune example and the walk-through).
PROBLEMS = [
    ("gemm", "M=256,N=256,K=256", "samples/gemm/schedules/tiled_staged.json", "ascend-like"),
    ("gemm", "M=512,N=512,K=512", "samples/gemm/schedules/tiled_staged.json", "ascend-like"),
]


def run_one(tessel, generator, params, schedule, arch):
    with tempfile.TemporaryDirectory(prefix="tessel-doc-figures-") as tmp:
        out = os.path.join(tmp, "report.json")
        cmd = [tessel, "run", "-g", generator, "-p", params, "--schedule", os.path.join(ROOT, schedule),
               "--arch", arch, "--report-json", out]
        proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if not os.path.exists(out):
            sys.exit("doc_figures: `%s` wrote no report (exit %d):\n%s" % (" ".join(cmd), proc.returncode,
                                                                           proc.stderr.strip()))
        with open(out) as f:
            rep = json.load(f)
    if not rep.get("verified") or "cycles" not in rep:
        print("doc_figures: %s %s %s on %s did not verify (exit %d): %s" %
              (generator, params, schedule, arch, proc.returncode, proc.stderr.strip()), file=sys.stderr)
        sys.exit(2)
    return rep


def problem_name(generator, params):
    vals = dict(kv.split("=", 1) for kv in params.split(","))
    if generator == "gemm" and {"M", "N", "K"} <= vals.keys():
        return "GEMM %sx%sx%s" % (vals["M"], vals["N"], vals["K"])
    return "%s %s" % (generator, params)


def block(tessel):
    lines = [BEGIN,
             "| problem | schedule | arch | cycles | physical limit | efficiency | binding resource |",
             "| --- | --- | --- | ---: | ---: | ---: | --- |"]
    for generator, params, schedule, arch in PROBLEMS:
        rep = run_one(tessel, generator, params, schedule, arch)
        name = os.path.splitext(os.path.basename(schedule))[0]
        lines.append("| %s (`-g %s -p %s`) | [`%s`](../%s) | %s | %d | %d | %.3f | %s |" %
                     (problem_name(generator, params), generator, params, name, schedule, arch,
                      int(rep["cycles"]), int(rep["t_phys_cycles"]), float(rep["efficiency"]),
                      rep.get("binding_resource", "?")))
    lines.append(END)
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 naming the stale lines; write nothing")
    ap.add_argument("--tessel", default=os.path.join(ROOT, "build", "bin", "tessel"), help="the tessel program")
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "ide.md"), help="the page to update")
    a = ap.parse_args()
    a.tessel = os.path.abspath(a.tessel)
    if not os.access(a.tessel, os.X_OK):
        sys.exit("doc_figures: %s is not an executable (build it: cmake --build build --target tessel)" % a.tessel)
    with open(a.doc) as f:
        text = f.read().split("\n")
    starts = [i for i, l in enumerate(text) if l.strip() == BEGIN]
    ends = [i for i, l in enumerate(text) if l.strip() == END]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        sys.exit("doc_figures: %s needs exactly one %s ... %s block" % (a.doc, BEGIN, END))
    b, e = starts[0], ends[0]
    rel = os.path.relpath(a.doc)
    # A run's figures belong in the table; the prose refers to it (they go stale there).
    prose = [(i, l) for i, l in enumerate(text) if not b <= i <= e and PROSE_FIGURE.search(l)]
    if a.check:
        for i, l in prose:
            print("%s:%d: a run's figure in the prose (put it in the figures table, refer to it): %s" %
                  (rel, i + 1, l.strip()))
    new = block(a.tessel)
    old = text[b:e + 1]
    if old == new:
        print("doc_figures: %s: the figures table is up to date (%d problems)" % (rel, len(PROBLEMS)))
        if a.check and prose:
            print("doc_figures: %s: %d figures in the prose" % (rel, len(prose)), file=sys.stderr)
            return 1
        return 0
    if a.check:
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
            if tag == "equal":
                continue
            for k in range(i1, i2):
                print("%s:%d: stale: %s" % (rel, b + 1 + k, old[k]))
            if i1 == i2:
                print("%s:%d: missing:" % (rel, b + 1 + i1))
            for k in range(j1, j2):
                print("%s:%d:   now: %s" % (rel, b + 1 + i1, new[k]))
        print("doc_figures: %s: figures are stale; regenerate with `make doc-figures`" % rel, file=sys.stderr)
        return 1
    text[b:e + 1] = new
    with open(a.doc, "w") as f:
        f.write("\n".join(text))
    print("doc_figures: %s: figures rewritten (%d problems)" % (rel, len(PROBLEMS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
