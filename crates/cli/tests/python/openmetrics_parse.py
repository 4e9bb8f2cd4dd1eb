"""Parses OpenMetrics text on stdin with the Prometheus project's Python client (PyPI
prometheus_client; its parser is strict: types, units, suffixes and # EOF) and prints one JSON
line per sample: {"family", "type", "unit", "name", "labels", "value"}. Exits 1 with the
parser's message when the text is not valid OpenMetrics.
"""
import json
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families

try:
    for family in text_string_to_metric_families(sys.stdin.read()):
        for s in family.samples:
            print(json.dumps({"family": family.name, "type": family.type, "unit": family.unit,
                              "name": s.name, "labels": s.labels, "value": s.value}))
except Exception as e:  # the parser raises ValueError and friends
    print(f"not valid OpenMetrics: {e}", file=sys.stderr)
    sys.exit(1)
