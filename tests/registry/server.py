#!/usr/bin/env python3
"""A small Schema Registry serving the part of Confluent's REST API that Confluent's clients
use (register, look up, schemas by id, subjects and versions, references, config), written
against Confluent's API documentation, for kseek's tests; and the two calls of Apicurio's v2 API
its Java serdes make for a Confluent-framed value (for benches/registry/run). In memory; one
process per test.

No Schema Registry server could be installed from the package registries here (Confluent's is
not on Maven Central; Apicurio 2.6's app on Maven Central is the un-augmented Quarkus app,
its 3.x apps miss dependencies there; Karapace is not on PyPI): see issue 30's note.

    server.py [--user USER:PASSWORD] [--cert CERT.pem --key KEY.pem [--client-ca CA.pem]]
              [--fail-first N] [--fail-ids N]

--cert serves HTTPS; --client-ca also requires a client certificate signed by CA.pem (mTLS).
--fail-first answers the first N requests with 500; --fail-ids the first N requests for a schema
by id (what a reader asks; a producer's registrations go through).

Prints `URL=http://127.0.0.1:PORT` (or https) once listening, then serves until killed or
until stdin closes (so a test that dies takes the server with it).
"""
import argparse
import base64
import json
import re
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

lock = threading.Lock()
schemas = []  # id - 1 -> {"schema", "schemaType", "references"}
subjects = {}  # subject -> [id, ...] (version - 1 -> id)
state = {"fail_first": 0, "fail_ids": 0}


def canonical(body):
    return (body.get("schemaType", "AVRO") or "AVRO", body["schema"],
            json.dumps(body.get("references") or [], sort_keys=True))


def schema_id(body):
    key = canonical(body)
    for i, s in enumerate(schemas):
        if canonical(s) == key:
            return i + 1
    schemas.append({"schema": body["schema"], "schemaType": key[0],
                    "references": body.get("references") or []})
    return len(schemas)


def serialized(s):
    """A Protobuf schema's .proto text as a base64 FileDescriptorProto (what Confluent's
    registry answers with format=serialized), compiled by protoc (grpc_tools), with the schemas
    it refers to beside it under their import names."""
    import base64
    import os
    import tempfile
    from google.protobuf import descriptor_pb2
    from grpc_tools import protoc
    import grpc_tools
    text = s["schema"]
    if "{" not in text:
        return text  # registered serialized already
    with tempfile.TemporaryDirectory() as d:
        def write(name, body):
            path = os.path.join(d, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(body)

        def refs(refs_of):
            for r in refs_of:
                sid = subjects[r["subject"]][r["version"] - 1]
                write(r["name"], schemas[sid - 1]["schema"])
                refs(schemas[sid - 1]["references"])

        refs(s["references"])
        write("kseek-root.proto", text)
        out = os.path.join(d, "set.pb")
        include = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
        rc = protoc.main(["protoc", "-I" + d, "-I" + include, "--descriptor_set_out=" + out, "kseek-root.proto"])
        if rc != 0:
            raise ValueError("protoc failed on the schema")
        fds = descriptor_pb2.FileDescriptorSet.FromString(open(out, "rb").read())
        return base64.standard_b64encode(fds.file[0].SerializeToString()).decode("ascii")


def as_answer(sid, subject=None, version=None, fmt=None):
    s = schemas[sid - 1]
    text = s["schema"]
    if fmt == "serialized" and s["schemaType"] == "PROTOBUF":
        text = serialized(s)
    out = {"id": sid, "schema": text}
    if s["schemaType"] != "AVRO":
        out["schemaType"] = s["schemaType"]
    if s["references"]:
        out["references"] = s["references"]
    if subject is not None:
        out["subject"] = subject
        out["version"] = version
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def error(self, status, code, message):
        self.reply(status, {"error_code": code, "message": message})

    def authorized(self):
        user = self.server.user
        if user is None:
            return True
        want = "Basic " + base64.b64encode(user.encode()).decode()
        if self.headers.get("Authorization") == want:
            return True
        self.error(401, 401, "Unauthorized")
        return False

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(n) or b"{}")

    def route(self, method):
        if not self.authorized():
            return
        with lock:
            if state["fail_first"] > 0:
                state["fail_first"] -= 1
                return self.error(500, 50001, "injected failure")
        url = urlparse(self.path)
        path = [unquote(p) for p in url.path.strip("/").split("/") if p]
        self.fmt = parse_qs(url.query).get("format", [None])[0]
        with lock:
            return self.dispatch(method, path)

    def raw(self, status, text):
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def dispatch(self, method, path):
        if path[:2] == ["schemas", "ids"] and state["fail_ids"] > 0:
            state["fail_ids"] -= 1
            return self.error(500, 50001, "injected failure")
        # Apicurio's v2 API, the part its serdes use with Confluent framing (a 4-byte content
        # id; here a content id is a schema id): a schema's text, and its references.
        if path[:4] == ["apis", "registry", "v2", "ids"] and len(path) >= 6 and path[4] == "contentIds":
            sid = int(path[5]) if path[5].isdigit() else 0
            if not 0 < sid <= len(schemas):
                return self.error(404, 404, "No content with id %s" % path[5])
            if len(path) == 7 and path[6] == "references":
                return self.reply(200, [])
            return self.raw(200, schemas[sid - 1]["schema"])
        if method == "GET" and len(path) == 3 and path[:2] == ["schemas", "ids"]:
            sid = int(path[2]) if path[2].isdigit() else 0
            if not 0 < sid <= len(schemas):
                return self.error(404, 40403, "Schema %s not found" % path[2])
            return self.reply(200, as_answer(sid, fmt=self.fmt))
        if method == "GET" and path == ["subjects"]:
            return self.reply(200, sorted(subjects))
        if method == "GET" and path == ["schemas", "types"]:
            return self.reply(200, ["AVRO", "PROTOBUF", "JSON"])
        if path and path[0] == "config":
            return self.reply(200, {"compatibilityLevel": "BACKWARD"})
        if len(path) >= 2 and path[0] == "subjects":
            subject = path[1]
            if method == "POST" and len(path) == 3 and path[2] == "versions":
                sid = schema_id(self.body())
                ids = subjects.setdefault(subject, [])
                if sid not in ids:
                    ids.append(sid)
                return self.reply(200, as_answer(sid, subject, ids.index(sid) + 1))
            if subject not in subjects:
                return self.error(404, 40401, "Subject '%s' not found." % subject)
            ids = subjects[subject]
            if method == "POST" and len(path) == 2:
                body = self.body()
                key = canonical(body)
                for v, sid in enumerate(ids):
                    if canonical(schemas[sid - 1]) == key:
                        return self.reply(200, as_answer(sid, subject, v + 1))
                return self.error(404, 40403, "Schema not found")
            if method == "GET" and len(path) == 3 and path[2] == "versions":
                return self.reply(200, list(range(1, len(ids) + 1)))
            if method == "GET" and len(path) == 4 and path[2] == "versions":
                v = len(ids) if path[3] in ("latest", "-1") else (int(path[3]) if re.fullmatch(r"\d+", path[3]) else 0)
                if not 0 < v <= len(ids):
                    return self.error(404, 40402, "Version %s not found." % path[3])
                return self.reply(200, as_answer(ids[v - 1], subject, v, self.fmt))
        return self.error(404, 404, "no such endpoint: %s %s" % (method, self.path))

    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")

    def do_PUT(self):
        self.route("PUT")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--user")
    p.add_argument("--cert")
    p.add_argument("--key")
    p.add_argument("--client-ca")
    p.add_argument("--fail-first", type=int, default=0)
    p.add_argument("--fail-ids", type=int, default=0)
    a = p.parse_args()
    state["fail_first"] = a.fail_first
    state["fail_ids"] = a.fail_ids
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.user = a.user
    scheme = "http"
    if a.cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.cert, a.key)
        if a.client_ca:
            ctx.load_verify_locations(a.client_ca)
            ctx.verify_mode = ssl.CERT_REQUIRED
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print("URL=%s://127.0.0.1:%d" % (scheme, server.server_address[1]), flush=True)
    sys.stdin.read()  # until the test closes stdin (or dies)


if __name__ == "__main__":
    main()
