"""Helpers for the pass-emulator end-to-end tests: start the real binary, talk plain HTTP to it, follow
browser redirects, read HTML forms, and validate every JSON answer against Adobe's OpenAPI documents."""
import base64
import html.parser
import http.client
import functools
import json
import os
import pathlib
import re
import signal
import subprocess
import urllib.parse

import jsonschema
import pytest
from openapi_schema_validator import OAS30Validator

ROOT = pathlib.Path(__file__).resolve().parents[2]
# A well-formed three-part JWT (header {"alg":"RS256"}, payload {"software_id":"test"}): the default
# configuration accepts any such software statement.
SOFTWARE_STATEMENT = "eyJhbGciOiJSUzI1NiJ9.eyJzb2Z0d2FyZV9pZCI6InRlc3QifQ.c2lnbmF0dXJl"
REDIRECT = "adobepass://ios.app"
DEVICE_INFO = {"primaryHardwareType": "SetTopBox", "model": "PB-1", "version": "1.0", "manufacturer": "PassBridge",
               "osName": "Linux", "osVersion": "6.1", "connectionType": "LAN"}


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def device_headers(device_id: str = "device-0001") -> dict:
    return {"AP-Device-Identifier": "fingerprint " + b64(device_id), "X-Device-Info": b64(json.dumps(DEVICE_INFO))}


def pfs_header(status: str, provider: str = "MockSSO", expires_ms: int | None = None) -> str:
    """An AP-Partner-Framework-Status value (base64 JSON; expirationDate is a string of ms)."""
    info = {"frameworkPermissionInfo": {"accessStatus": status},
            "frameworkProviderInfo": {"id": provider, "expirationDate": str(expires_ms if expires_ms is not None else 4102444800000)}}
    return b64(json.dumps(info))


# ---------------------------------------------------------------------------------------------- OpenAPI

def _openapi_dir() -> pathlib.Path:
    """Adobe's OpenAPI documents for REST API V2 and DCR (`restApiV2.json`, `dcrApi.json`, published with Adobe
    Pass Authentication's API reference): $PASSBRIDGE_OPENAPI_DIR, else `reference/openapi` of a `shared` folder
    beside the clone, where this project's CI machines provide them.

    They are Adobe's files, not ours, so the repository does not carry them; without them the schema checks
    are skipped on a developer machine and fail when CI is set."""
    candidates = [os.environ.get("PASSBRIDGE_OPENAPI_DIR"), ROOT.parent / "shared" / "reference" / "openapi"]
    for candidate in candidates:
        if candidate and (pathlib.Path(candidate) / "restApiV2.json").is_file():
            return pathlib.Path(candidate)
    message = "Adobe's restApiV2.json / dcrApi.json not found: set PASSBRIDGE_OPENAPI_DIR"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


class OpenAPI:
    """Response validation against one OpenAPI document, looked up by method, path template and status."""

    def __init__(self, path: pathlib.Path, prefix: str):
        spec = json.loads(path.read_text())
        schemas = spec.get("components", {}).get("schemas", {})
        # The error `message` is a string, as in Adobe's examples (the OpenAPI's empty-object type is a generator artefact).
        if "ErrorInformation" in schemas:
            schemas["ErrorInformation"]["properties"]["message"] = {"type": "string"}
        # The same artefact types a user-metadata `value` as an object, while Adobe's documents and examples
        # send strings, numbers, arrays and objects (Adobe Pass REST API V2, "Profiles": the profile attributes): accept any JSON value there.
        if "UserMetadataResponse" in schemas:
            schemas["UserMetadataResponse"]["properties"]["value"] = {}
        self.spec = spec
        self.prefix = prefix
        templates = sorted(spec["paths"], key=lambda t: t.count("{"))
        self.routes = [(re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", t) + "$"), t) for t in templates]

    def schema_for(self, method: str, path: str, status: int):
        assert path.startswith(self.prefix), path
        rest = path[len(self.prefix):]
        for pattern, template in self.routes:
            op = self.spec["paths"][template].get(method.lower())
            if pattern.match(rest) and op:
                response = op["responses"].get(str(status))
                content = (response or {}).get("content", {})
                for media in content.values():
                    if media.get("schema"):
                        return media["schema"]
                if status >= 400 and "ErrorInformation" in self.spec.get("components", {}).get("schemas", {}):
                    return {"$ref": "#/components/schemas/ErrorInformation"}
                return None
        raise AssertionError(f"no OpenAPI operation for {method} {path}")

    def validate(self, method: str, path: str, status: int, body) -> None:
        schema = self.schema_for(method, path, status)
        assert schema is not None, f"OpenAPI lists no JSON body for {method} {path} -> {status}"
        OAS30Validator({**schema, "components": self.spec.get("components", {})}).validate(body)


# ---------------------------------------------------------------------------------------------- HTTP

class Response:
    def __init__(self, status: int, headers: dict, body: bytes):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def __repr__(self):
        return f"<Response {self.status} {self.body[:200]!r}>"


def request(base: str, method: str, path: str, body: bytes | None = None, headers: dict | None = None, timeout: float = 10) -> Response:
    """One HTTP exchange with no redirect following. `path` may be absolute (same host) or relative."""
    parsed = urllib.parse.urlsplit(urllib.parse.urljoin(base + "/", path))
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=timeout)
    try:
        target = parsed.path + ("?" + parsed.query if parsed.query else "")
        connection.request(method, target, body=body, headers=headers or {})
        raw = connection.getresponse()
        data = raw.read()
        return Response(raw.status, {k.lower(): v for k, v in raw.getheaders()}, data)
    finally:
        connection.close()


class FormParser(html.parser.HTMLParser):
    """Collects the forms of a page: action, method, and named inputs/selects with their default values."""

    def __init__(self):
        super().__init__()
        self.forms = []
        self._select = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.forms.append({"action": attrs.get("action", ""), "method": attrs.get("method", "get").upper(), "fields": {}, "options": {}})
        elif tag == "input" and self.forms and attrs.get("name"):
            self.forms[-1]["fields"][attrs["name"]] = attrs.get("value", "")
        elif tag == "select" and self.forms:
            self._select = attrs.get("name")
            self.forms[-1]["fields"][self._select] = ""
            self.forms[-1]["options"][self._select] = []
        elif tag == "option" and self._select:
            self.forms[-1]["options"][self._select].append(attrs.get("value", ""))

    def handle_endtag(self, tag):
        if tag == "select":
            self._select = None


def parse_form(page: str) -> dict:
    parser = FormParser()
    parser.feed(page)
    assert parser.forms, "the page has no form"
    return parser.forms[0]


class Browser:
    """A user agent: follows redirects while they stay on http(s), stops at any other scheme (the app's redirect URL)."""

    def __init__(self, base: str):
        self.base = base
        self.visited: list[str] = []

    def go(self, url: str, method: str = "GET", form: dict | None = None):
        """Returns (final Response or None, final URL). A non-http final URL is where the browser handed over."""
        body = urllib.parse.urlencode(form).encode() if form is not None else None
        headers = {"Content-Type": "application/x-www-form-urlencoded"} if form is not None else {}
        url = urllib.parse.urljoin(self.base + "/", url)
        for _ in range(10):
            self.visited.append(url)
            response = request(self.base, method, url, body, headers)
            if response.status in (301, 302, 303, 307) and "location" in response.headers:
                url = urllib.parse.urljoin(url, response.headers["location"])
                method, body, headers = "GET", None, {}
                if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
                    return None, url
                continue
            return response, url
        raise AssertionError("too many redirects")

    def submit(self, page: Response, page_url: str, **values):
        form = parse_form(page.text)
        fields = dict(form["fields"])
        fields.update(values)
        return self.go(urllib.parse.urljoin(page_url, form["action"]), form["method"], fields)


# ---------------------------------------------------------------------------------------------- the emulator

# A throwaway RSA key pair for the tests that pass `--key` (it protects nothing). It differs from
# Tests/emulator-key.pem, the key every other emulator of the suite signs with (conftest.py).
TEST_KEY = """-----BEGIN PRIVATE KEY-----
MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQDMAuG14USRMJq5
KeZ5Yew4pb4IV6SybWwUkGDB3rHgcBlgW5kvprLfEUMho92CkG56omYHywc9x35K
jvQSlZugUQICcSc5EqXzOn49ZB7nP120zRfoLn7bEVWSjI4qqwD3FBiUAFu+/jtk
aFkRIGrA0UNSXVxMXOWJBJYF6/OnB2XpDcJV+moo2h7B5WCnCLf+iZ6KAyQn5znS
2dCxTMx/xlN34shgU8Bp0cKEk9pwTuzbdmft7e5XvFHw70+eqkDovTwOdPBmh7IY
+It3UerYG5CU7gQB4LcEHdZT5z46iVHZFcPzUwMazZ84H6do0shi3SdZH1Qni7Is
Fxsrc2bNAgMBAAECggEAJRH2+ooi3/EBhFjZQMAq4MY5KCHo0uUwKPJtKn0xPDOS
YOB0DuUPBpqH5MJ2WyWsdYsx2AOr3q1zxM+CCSh3PWPK5i+ybVv2nKJJ0xTwyptI
hzRnPjDIqzzUnEr/AEDPbZYQuz/va96dYyrU2FhYHY5I2dwOC/ArY0Dak9vii7xo
ZLC30YX5KXdos/x3WIMCgdINxmnA5+1bDAkOXiNegB8nAOsQ5gYqY5TPpp5YwEtZ
b0n7e6ElQBj4KO+G4Kxf9a8AafVWKF7ZjXQAGzB9QsbHXc2S10cG4TuhPKN6qtyq
tof7am70Mmn3zpAB0/T/vI0S/oD/8G7qHFgqgHsDcQKBgQD92xfRQE6NEzojQd6c
crrFkTVUXn3+ekf2QHdc60jWPSErKbZE0LaUnuklI4KIAssvj8mMH5PpniXhJdi9
jq+T2LCbbRfS2B4D+qIeb48IttyQBuAXuG9ES/TqI1j6/WRL8zV4BtX/VcGX9Pza
PIHVcJ+a9k73fw2iI6rmuHjvGQKBgQDNvALDwKS4+GtdQBcIX2CYbrbqxBMhMTC/
RPMDOHCz64Y1nxPJBwTgK7Ta6qOtlXcP15IDcdBfyDY5YB0kWM50DPye49EtNmyl
/y0bXnJmEEMuKNi8VylHShJ9qqJKoGanDD6bLNqZpsD6CnDhvyrqjO2OX3BgwT0p
VyEAA6IP1QKBgQDF5k5sB7j1C/8vy0MTLfHi4W/0xPFuOL/u/pTPMHGI6wD3mD4K
6bbcqAHTvRoelCb4fhy+i0ORRYP8QLf2Fs1T8gLEOEjxSyAjM/m8xnV4cq4B7go3
E8ZSNPDKsyHEEVRmTUTqvFGKC72vjAKu06rXzUPv14L6OOdU9n9d/IPyyQKBgQCb
08boS/a4H3j6tXt8nPlGG72yTfcLUf3RMcE69DnxHPiXjrjmr8lSnegrVEPLS4VV
23q93yvsEHJ5vMH18MnW/qstEfMy4qEijge1TjEp+zFXOhsHdKFQXNtqkZ7BFYML
DewxjqS4cqSB/vyHEEvKQhoAl2s/7b2MnXDiWN4cTQKBgBuUiGqjC9Zi4DUeuTua
+5+Vf95B70Jb2wsYh5ZJi2HsLAxoN/ZRidfAB7c2nbyUPIsFfDqu2JVj1cYqdYH+
1+QtuYghB/GXv3CsE/EAL5z7ZyyAvwiQdt0koeEB9Gl/JM8+nKmViKJxxXHdEHAA
6O+Zz1YeCDlHXgS0U+15fwiy
-----END PRIVATE KEY-----
"""
TEST_PUBLIC_KEY = """-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAzALhteFEkTCauSnmeWHs
OKW+CFeksm1sFJBgwd6x4HAZYFuZL6ay3xFDIaPdgpBueqJmB8sHPcd+So70EpWb
oFECAnEnORKl8zp+PWQe5z9dtM0X6C5+2xFVkoyOKqsA9xQYlABbvv47ZGhZESBq
wNFDUl1cTFzliQSWBevzpwdl6Q3CVfpqKNoeweVgpwi3/omeigMkJ+c50tnQsUzM
f8ZTd+LIYFPAadHChJPacE7s23Zn7e3uV7xR8O9PnqpA6L08DnTwZoeyGPiLd1Hq
2BuQlO4EAeC3BB3WU+c+OolR2RXD81MDGs2fOB+naNLIYt0nWR9UJ4uyLBcbK3Nm
zQIDAQAB
-----END PUBLIC KEY-----
"""

class EmulatorProcess:
    """A running pass-emulator: its base URL, the API documents, and helpers for DCR, REST V2 and admin calls."""

    def __init__(self, bin_dir: pathlib.Path, *args: str):
        self.binary = pathlib.Path(bin_dir) / "pass-emulator"
        self.process = subprocess.Popen([str(self.binary), "--port", "0", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline().strip()
        assert line.startswith("http://127.0.0.1:"), f"first stdout line was {line!r}"
        self.base = line

    @functools.cached_property
    def rest(self) -> "OpenAPI":
        """Adobe's REST API V2 document (loaded on first schema check)."""
        return OpenAPI(_openapi_dir() / "restApiV2.json", "/api/v2")

    @functools.cached_property
    def dcr(self) -> "OpenAPI":
        """Adobe's DCR document (loaded on first schema check)."""
        return OpenAPI(_openapi_dir() / "dcrApi.json", "/o")

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=10)
        finally:
            self.process.stdout.close()
            self.process.stderr.close()

    # raw and admin
    def call(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None) -> Response:
        return request(self.base, method, path, body, headers)

    def admin(self, method: str, path: str, payload=None) -> Response:
        body = json.dumps(payload).encode() if payload is not None else None
        return self.call(method, "/__admin/" + path, body, {"Content-Type": "application/json"} if body else {})

    def advance(self, seconds: float) -> None:
        assert self.admin("POST", "clock", {"advanceSeconds": seconds}).status == 200

    def now_ms(self) -> int:
        return self.admin("GET", "clock").json()["nowMillis"]

    # DCR
    def register(self, statement: str = SOFTWARE_STATEMENT) -> dict:
        response = self.call("POST", "/o/client/register", json.dumps({"software_statement": statement, "redirect_uri": REDIRECT}).encode(),
                             {"Content-Type": "application/json", "X-Device-Info": b64(json.dumps(DEVICE_INFO))})
        assert response.status == 201, response
        self.dcr.validate("POST", "/o/client/register", 201, response.json())
        return response.json()

    def token(self, client: dict | None = None) -> str:
        client = client or self.register()
        form = urllib.parse.urlencode({"client_id": client["client_id"], "client_secret": client["client_secret"], "grant_type": "client_credentials"})
        response = self.call("POST", "/o/client/token", form.encode(), {"Content-Type": "application/x-www-form-urlencoded"})
        assert response.status == 201, response
        self.dcr.validate("POST", "/o/client/token", 201, response.json())
        return response.json()["access_token"]

    # REST V2 (every JSON answer is validated against restApiV2.json)
    def v2(self, method: str, path: str, token: str | None, *, form: dict | None = None, json_body=None, device: str | None = "device-0001",
           headers: dict | None = None, validate: bool = True) -> Response:
        all_headers = {}
        if token is not None:
            all_headers["Authorization"] = "Bearer " + token
        if device is not None:
            all_headers.update(device_headers(device))
        body = None
        if form is not None:
            body = urllib.parse.urlencode(form).encode()
            all_headers["Content-Type"] = "application/x-www-form-urlencoded"
        if json_body is not None:
            body = json.dumps(json_body).encode()
            all_headers["Content-Type"] = "application/json;charset=utf-8"
        all_headers.update(headers or {})
        response = self.call(method, "/api/v2" + path, body, all_headers)
        if validate:
            assert response.headers.get("content-type", "").startswith("application/json"), response
            self.rest.validate(method, "/api/v2" + urllib.parse.urlsplit(path).path, response.status, response.json())
        return response

    def login(self, token: str, mvpd: str = "MockMVPD", device: str = "device-0001", username: str = "demo", password: str = "demo") -> str:
        """Session + browser login; returns the code once the browser reached the redirect URL."""
        session = self.v2("POST", "/REF/sessions", token, form={"mvpd": mvpd, "domainName": "adobe.com", "redirectUrl": REDIRECT}, device=device).json()
        assert session["actionName"] == "authenticate", session
        browser = Browser(self.base)
        page, url = browser.go(session["url"])
        assert page is not None and page.status == 200, page
        final, where = browser.submit(page, url, username=username, password=password)
        assert final is None and where == REDIRECT, (final, where)
        return session["code"]


def error_of(response: Response, status: int, code: str, action: str | None = None) -> dict:
    """Asserts a top-level enhanced error and returns it."""
    assert response.status == status, response
    body = response.json()
    assert body["status"] == status and body["code"] == code, body
    assert isinstance(body["message"], str) and body["message"]
    if action is not None:
        assert body["action"] == action, body
    return body


@pytest.fixture(scope="module")
def emulator(bin_dir):
    process = EmulatorProcess(bin_dir)
    yield process
    assert process.stop() == 0


@pytest.fixture(autouse=True)
def _fresh_emulator(request):
    """Every test that uses the emulator starts from a reset state and clock."""
    if "emulator" in request.fixturenames:
        emulator = request.getfixturevalue("emulator")
        assert emulator.admin("POST", "reset").status == 200
        assert emulator.admin("DELETE", "faults").status == 200
    yield


@pytest.fixture
def token(emulator) -> str:
    return emulator.token()


__all__ = ["Browser", "EmulatorProcess", "REDIRECT", "SOFTWARE_STATEMENT", "b64", "device_headers", "emulator", "error_of", "parse_form",
           "pfs_header", "request", "token", "_fresh_emulator", "jsonschema"]
