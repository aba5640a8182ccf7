#!/usr/bin/env python3
"""Fills a wrapper script template (@KEY@ placeholders) and makes it executable.

usage: gen_wrapper.py template output KEY=VALUE...
"""
import os
import sys

template, output, *pairs = sys.argv[1:]
text = open(template).read()
for pair in pairs:
    key, _, value = pair.partition("=")
    text = text.replace(f"@{key}@", value)
with open(output, "w") as f:
    f.write(text)
os.chmod(output, 0o755)
