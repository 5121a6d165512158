#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write a C file holding each machine file's text, keyed by its base name."""
import os
import sys

out, inputs = sys.argv[1], sys.argv[2:]
with open(out, "w") as f:
    f.write("/* Generated from the machine files by machines/embed.py. */\n")
    f.write("#include <stddef.h>\n\n")
    f.write("struct embedded_machine { const char *name; const char *text; };\n\n")
    f.write("const struct embedded_machine berth_embedded_machines[] = {\n")
    for path in inputs:
        name = os.path.basename(path)[: -len(".cfg")]
        data = open(path, "rb").read()
        body = "".join("\\x%02x" % b for b in data)
        f.write('    { "%s",\n      "%s" },\n' % (name, body))
    f.write("    { NULL, NULL },\n};\n")
