#!/usr/bin/python3
"""Writes ONNX's backend node tests (model.onnx and test_data_set_*/*.pb per test) into DIR with
the generator Debian's python3-onnx ships (onnx.backend.test.cmd_tools generate-data). That
generator (ONNX 1.12) still spells numpy's aliases removed in numpy 1.24 (np.float, np.int,
np.bool, np.object, np.complex): they are restored as the builtins they stood for, for this run
only. tools/bootstrap.sh runs this into the cache; the data is never committed.

    /usr/bin/python3 tools/onnx_node_tests.py DIR
"""
import runpy
import sys
import warnings

import numpy as np

if len(sys.argv) != 2:
    sys.exit(__doc__)
with warnings.catch_warnings():  # numpy warns on reading the names it plans to bring back as scalar types
    warnings.simplefilter("ignore")
    for name, builtin in (("float", float), ("int", int), ("bool", bool), ("object", object), ("complex", complex)):
        if not hasattr(np, name):
            setattr(np, name, builtin)
sys.argv = ["onnx.backend.test.cmd_tools", "generate-data", "-o", sys.argv[1]]
runpy.run_module("onnx.backend.test.cmd_tools", run_name="__main__")
