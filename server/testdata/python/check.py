"""Issues, validates, parses and takes a block through sn_client, and
prints what it got as JSON for TestClientsPython."""

import datetime
import json
import os
import sys

from sn_client import Client

sn = Client(os.environ["SN_URL"], os.environ["SN_TOKEN"])
out = {}

status, body = sn.call("next", name="orders", body={"n": 5})
assert status == 200, body
out["numbers"] = body["numbers"]
first = out["numbers"][0]

status, body = sn.call("validate", name="orders", body={"number": first})
out["valid"] = body["valid"]
status, body = sn.call("validate", name="orders", body={"number": "SN-nonsense"})
out["invalid"] = body["valid"]
out["invalidCode"] = body["error"]["code"]

status, parsed = sn.call("parse", name="orders", body={"number": first})
assert status == 200, parsed
out["key"], out["seq"] = parsed["key"], parsed["seq"]

status, info = sn.call("getTemplate", name="orders")
assert status == 200, info
out["maxBlock"] = info["max_block"]
now = datetime.datetime.now(datetime.timezone.utc).isoformat().replace("+00:00", "Z")
status, block = sn.call("blocks", name="orders", body={
    "key": parsed["key"], "n": 100, "template": info["template"],
    "engine": info["engine"], "now": now, "client": "python test",
})
assert status == 200, block
out["block"] = block

status, body = sn.call("next", name="orders", body={"n": 1, "vars": {"nope": "1"}})
out["wrongStatus"], out["wrongCode"] = status, body["error"]["code"]
status, body = sn.call("next", name="nope", body={})
out["missingStatus"], out["missingCode"] = status, body["error"]["code"]

json.dump(out, sys.stdout)
print()
