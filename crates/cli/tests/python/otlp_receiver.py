"""An OTLP/HTTP metrics receiver for the tests: decodes each export with the OpenTelemetry
project's own protobuf definitions (PyPI opentelemetry-proto) and appends one JSON line per
data point to OUT.

Usage: python3 otlp_receiver.py OUT   (prints the port it listens on, on 127.0.0.1, then serves)
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)

OUT = sys.argv[1]


def value(v):
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        request = ExportMetricsServiceRequest.FromString(body)
        with open(OUT, "a") as out:
            for rm in request.resource_metrics:
                resource = {a.key: value(a.value) for a in rm.resource.attributes}
                for sm in rm.scope_metrics:
                    for m in sm.metrics:
                        kind = m.WhichOneof("data")
                        for p in getattr(m, kind).data_points:
                            out.write(json.dumps({
                                "path": self.path,
                                "content_type": self.headers.get("Content-Type"),
                                "resource": resource,
                                "name": m.name,
                                "unit": m.unit,
                                "kind": kind,
                                "attributes": {a.key: value(a.value) for a in p.attributes},
                                "value": p.as_int if p.WhichOneof("value") == "as_int" else p.as_double,
                            }) + "\n")
        reply = ExportMetricsServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


server = HTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
