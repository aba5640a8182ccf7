"""The pieces of scripts/bench.py: build, parse, report, plots."""
