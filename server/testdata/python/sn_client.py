"""A client of sn serve in Python, with the standard library only.

It reads the service's OpenAPI document (GET /openapi.json) and calls its
operations by their operationId: the path and method come from the
document, and every answer is checked against the schema the document
gives for its status, so a service that answers otherwise than it says
fails here. The document is the contract.

    sn = Client("http://127.0.0.1:8080", token)
    status, body = sn.call("next", name="orders", body={"n": 5})
"""

import json
import urllib.error
import urllib.parse
import urllib.request


class ContractError(Exception):
    """An answer the OpenAPI document does not describe."""


class Client:
    def __init__(self, base, token="", timeout=30):
        self.base = base.rstrip("/")
        self.token = token
        self.timeout = timeout
        status, self.doc = self._send("GET", "/openapi.json", None)
        if status != 200:
            raise ContractError("GET /openapi.json: status %d" % status)
        self.ops = {}
        for path, methods in self.doc["paths"].items():
            for method, op in methods.items():
                self.ops[op["operationId"]] = (method.upper(), path, op)

    def _send(self, method, path, body):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return resp.status, json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read() or b"null")

    def call(self, operation, body=None, **params):
        """Calls an operation with its path parameters; returns the status
        and the answer, checked against the document."""
        method, path, op = self.ops[operation]
        for p in op.get("parameters", []):
            if p["in"] == "path":
                path = path.replace("{%s}" % p["name"], urllib.parse.quote(params[p["name"]], safe=""))
        status, answer = self._send(method, path, body)
        response = op["responses"].get(str(status))
        if response is None:
            raise ContractError("%s: status %d is not in the document (%s)" % (operation, status, ", ".join(op["responses"])))
        schema = response.get("content", {}).get("application/json", {}).get("schema")
        if schema is not None:
            self.check(answer, schema, operation)
        return status, answer

    def check(self, value, schema, where):
        """Checks value against a schema of the document."""
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[1]
            return self.check(value, self.doc["components"]["schemas"][name], where)
        if value is None and schema.get("nullable"):
            return
        kind = schema.get("type")
        kinds = {
            "object": dict, "array": list, "string": str, "boolean": bool,
            "integer": int, "number": (int, float),
        }
        if kind in kinds:
            if not isinstance(value, kinds[kind]) or (kind in ("integer", "number") and isinstance(value, bool)):
                raise ContractError("%s: %r is not of type %s" % (where, value, kind))
        if "enum" in schema and value not in schema["enum"]:
            raise ContractError("%s: %r is not one of %s" % (where, value, schema["enum"]))
        if kind == "object":
            for field in schema.get("required", []):
                if field not in value:
                    raise ContractError("%s: no field %s" % (where, field))
            props = schema.get("properties", {})
            extra = schema.get("additionalProperties")
            for field, v in value.items():
                if field in props:
                    self.check(v, props[field], where + "." + field)
                elif isinstance(extra, dict):
                    self.check(v, extra, where + "." + field)
                elif props:
                    raise ContractError("%s: field %s is not in the document" % (where, field))
        if kind == "array":
            for i, v in enumerate(value):
                self.check(v, schema.get("items", {}), "%s[%d]" % (where, i))
