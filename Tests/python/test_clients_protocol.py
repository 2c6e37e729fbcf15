"""The Python and Node clients against the protocol the real daemon describes (its `rpc.discover`, which is
Protocol/openrpc.json): every host→daemon method is a method of both Python classes with the same param names, and
an entry of the Node declarations' `Methods` with the same names. init had lost five params and setRequestor three
when the document grew. Deliberate differences are listed, each with its reason."""
import inspect
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Clients" / "python"))

from passbridge.client import AsyncAccessEnabler  # noqa: E402
from passbridge.sync import AccessEnabler  # noqa: E402

#: Sent by the clients themselves (a cancelled call), or reached through `call()` in Python.
THROUGH_CALL = {"$/cancelRequest", "rpc.discover", "rpc.stats"}
#: Python spellings of a wire param: setOptions takes its keys as keyword arguments; preauthorize's `cache=False`
#: is `disableFeatures: ["LOCAL_CACHE"]`.
PYTHON_PARAMS = {"setOptions": ["options"], "preauthorize": ["cache", "resources"]}


def host_methods(passbridge) -> dict:
    request = '{"jsonrpc":"2.0","id":1,"method":"rpc.discover"}\n'
    answer = subprocess.run([str(passbridge)], input=request, capture_output=True, text=True, timeout=30)
    document = json.loads(answer.stdout)["result"]
    return {m["name"]: sorted(p["name"] for p in m.get("params", [])) for m in document["methods"]
            if m.get("x-direction") != "daemon-to-host"}


def test_both_python_classes_take_every_param_of_every_method(passbridge):
    methods = host_methods(passbridge)
    assert "setRequestor" in methods and "init" in methods
    for cls in (AsyncAccessEnabler, AccessEnabler):
        for name, params in methods.items():
            if name in THROUGH_CALL:
                assert hasattr(cls, "call")
                continue
            method = getattr(cls, name, None)
            assert method is not None, f"{cls.__name__} has no {name}"
            taken = sorted(p for p in inspect.signature(method).parameters if p != "self")
            assert taken == PYTHON_PARAMS.get(name, params), f"{cls.__name__}.{name}"


def test_the_node_declarations_list_every_method_with_its_params(passbridge):
    declarations = (ROOT / "Clients/node/passbridge.d.mts").read_text()
    block = declarations[declarations.index("export interface Methods {"):]
    block = block[:block.index("\n}\n")]
    for name, params in host_methods(passbridge).items():
        if name == "$/cancelRequest":
            continue  # the client's abort signal sends it
        entry = re.search(r"^  '?%s'?: \{\s*params: \{(.*?)\};\s*result" % re.escape(name), block, re.M | re.S)
        assert entry, f"Methods has no {name}"
        # Each param's name at the top level of the params object (nested object types skipped).
        depth, names = 0, []
        for token in re.finditer(r"[{}]|(?:/\*\*.*?\*/)|([A-Za-z_]+)\??:", entry.group(1), re.S):
            if token.group(0) == "{":
                depth += 1
            elif token.group(0) == "}":
                depth -= 1
            elif token.group(1) and depth == 0:
                names.append(token.group(1))
        assert sorted(names) == params, f"Methods.{name}"
