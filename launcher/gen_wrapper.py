#!/usr/bin/env python3
"""Fills a wrapper script template (@KEY@ placeholders) and makes it executable.

usage: gen_wrapper.py template output KEY=VALUE...
A value @PATH stands for the content of the file PATH (without its last newline).
"""
import os
import sys

template, output, *pairs = sys.argv[1:]
text = open(template).read()
for pair in pairs:
    key, _, value = pair.partition("=")
    if value.startswith("@"):
        with open(value[1:]) as f:
            value = f.read().rstrip("\n")
    text = text.replace(f"@{key}@", value)
with open(output, "w") as f:
    f.write(text)
os.chmod(output, 0o755)
