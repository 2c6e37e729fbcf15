"""Behaviour from a JSON configuration (`--config`) and a fixed signing key (`--key`): added service providers,
degraded and no-logout MVPDs, TTLs, resource limits, software statement restrictions, user entitlements."""
import json
import subprocess

import pytest

from emulator_fixtures import REDIRECT, SOFTWARE_STATEMENT, TEST_KEY, TEST_PUBLIC_KEY, Browser, EmulatorProcess, error_of

OTHER_STATEMENT = "eyJhbGciOiJSUzI1NiJ9.eyJzb2Z0d2FyZV9pZCI6Im90aGVyIn0.c2lnbmF0dXJl"
CONFIG = {
    "softwareStatements": [SOFTWARE_STATEMENT, OTHER_STATEMENT],
    "serviceProviders": [
        {"id": "ACME", "name": "Acme Networks", "mediaTokenTTLSeconds": 60, "profileTTLSeconds": 600, "maxAuthorizeResources": 1,
         "maxPreauthorizeResources": 2,
         "mvpds": [{"id": "Cable", "displayName": "Cable Co", "logout": False},
                   {"id": "Down", "displayName": "Down TV", "degradation": "AuthNAll"},
                   {"id": "Closed", "displayName": "Closed TV", "degradation": "AuthZNone", "degradationMessage": "Maintenance tonight."},
                   {"id": "Open", "displayName": "Open TV", "degradation": "AuthZAll"}]},
        {"id": "PRIV", "name": "Private", "softwareStatements": [OTHER_STATEMENT], "mvpds": [{"id": "Cable"}]},
    ],
    "users": [{"username": "ann", "password": "pw", "mvpds": ["Cable"], "permitUnlisted": True,
               "attributes": {"userID": {"value": "ann-1", "state": "plain"}, "maxRating": {"value": {"MPAA": "PG"}, "state": "plain"}},
               "entitlements": {"adult": {"permit": False, "details": "Parental lock."},
                                "caf\u00e9": {"permit": False, "details": "Composed only."}}}],
}


@pytest.fixture(scope="module")
def custom(bin_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("config")
    (folder / "config.json").write_text(json.dumps(CONFIG))
    (folder / "key.pem").write_text(TEST_KEY)
    process = EmulatorProcess(bin_dir, "--config", str(folder / "config.json"), "--key", str(folder / "key.pem"))
    yield process
    assert process.stop() == 0


def login(emulator, token, username="ann", password="pw"):
    session = emulator.v2("POST", "/ACME/sessions", token, form={"mvpd": "Cable", "domainName": "adobe.com", "redirectUrl": REDIRECT}).json()
    browser = Browser(emulator.base)
    page, url = browser.go(session["url"])
    final, where = browser.submit(page, url, username=username, password=password)
    assert final is None and where == REDIRECT


def test_configured_providers_ttls_limits_and_entitlements(custom):
    custom.admin("POST", "reset")
    token = custom.token()
    config = custom.v2("GET", "/ACME/configuration", token).json()["requestor"]
    assert config["name"] == "Acme Networks" and [m["id"] for m in config["mvpds"]] == ["Cable", "Down", "Closed", "Open"]
    error_of(custom.v2("GET", "/REF/configuration", token), 400, "invalid_parameter_service_provider")
    login(custom, token)
    profile = custom.v2("GET", "/ACME/profiles/Cable", token).json()["profiles"]["Cable"]
    assert profile["notAfter"] - profile["notBefore"] == 600_000
    assert profile["attributes"]["maxRating"] == {"value": {"MPAA": "PG"}, "state": "plain"}
    decision = custom.v2("POST", "/ACME/decisions/authorize/Cable", token, json_body={"resources": ["anything"]}).json()["decisions"][0]
    assert decision["authorized"] is True and decision["token"]["notAfter"] - decision["token"]["notBefore"] == 60_000
    denied = custom.v2("POST", "/ACME/decisions/preauthorize/Cable", token, json_body={"resources": ["x", "adult"]}).json()["decisions"]
    assert denied[1]["error"]["details"] == "Parental lock."
    error_of(custom.v2("POST", "/ACME/decisions/authorize/Cable", token, json_body={"resources": ["a", "b"]}), 403, "too_many_resources",
             "configuration")
    error_of(custom.v2("POST", "/ACME/decisions/preauthorize/Cable", token, json_body={"resources": ["a", "b", "c"]}), 403,
             "too_many_resources")
    logout = custom.v2("GET", "/ACME/logout/Cable?redirectUrl=x%3A%2F%2Fy", token).json()["logouts"]["Cable"]
    assert (logout["actionName"], logout["actionType"]) == ("complete", "none")

    serialized = decision["token"]["serializedToken"]
    result = subprocess.run([str(custom.binary), "verify-token", serialized, "--resource", "anything", "--url", custom.base],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert custom.admin("GET", "public-key").text.strip() == TEST_PUBLIC_KEY.strip()


def test_degradation_rules(custom):
    custom.admin("POST", "reset")
    token = custom.token()
    session = custom.v2("POST", "/ACME/sessions", token, form={"mvpd": "Down", "domainName": "adobe.com", "redirectUrl": REDIRECT}).json()
    assert (session["actionName"], session["reasonType"]) == ("authorize", "degraded")
    profile = custom.v2("GET", "/ACME/profiles/Down", token).json()["profiles"]["Down"]
    assert profile["type"] == "degraded" and profile["issuer"] == "Adobe"
    assert profile["attributes"]["userID"]["value"].startswith("95cf93bcd183214a")
    permit = custom.v2("POST", "/ACME/decisions/authorize/Open", token, json_body={"resources": ["r1"]}).json()["decisions"][0]
    assert permit["authorized"] is True and permit["source"] == "degradation" and "token" in permit
    deny = custom.v2("POST", "/ACME/decisions/preauthorize/Closed", token, json_body={"resources": ["r1"]}).json()["decisions"][0]
    assert deny["authorized"] is False and deny["source"] == "degradation"
    assert deny["error"]["code"] == "authorization_denied_by_degradation_rule" and deny["error"]["details"] == "Maintenance tonight."
    assert custom.v2("GET", "/ACME/logout/Down?redirectUrl=x%3A%2F%2Fy", token).json()["logouts"]["Down"]["actionName"] == "complete"


def test_software_statement_restrictions(custom):
    custom.admin("POST", "reset")
    unlisted = "eyJhbGciOiJSUzI1NiJ9.eyJzb2Z0d2FyZV9pZCI6Im5vIn0.c2lnbmF0dXJl"
    response = custom.call("POST", "/o/client/register", json.dumps({"software_statement": unlisted}).encode(),
                           {"Content-Type": "application/json"})
    assert response.status == 400 and response.json() == {"error": "unapproved_software_statement"}
    error_of(custom.v2("GET", "/PRIV/configuration", custom.token()), 401, "invalid_access_token_service_provider", "application-registration")
    other = custom.token(custom.register(OTHER_STATEMENT))
    assert custom.v2("GET", "/PRIV/configuration", other).status == 200


def test_bad_configuration_and_usage_exit_codes(bin_dir, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"serviceProviders": [{"id": "X", "mvpds": [{"id": 5}]}]}))
    result = subprocess.run([str(bin_dir / "pass-emulator"), "--config", str(bad)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 1 and "serviceProviders[0].mvpds[0].id" in result.stderr and result.stdout == ""
    usage = subprocess.run([str(bin_dir / "pass-emulator"), "--bogus"], capture_output=True, text=True, timeout=30)
    assert usage.returncode == 2 and usage.stderr == "pass-emulator: unknown option --bogus (see pass-emulator --help)\n"


def test_entitlements_tell_resources_apart_byte_for_byte(custom):
    """As Adobe's backend does (Protocol/README.md, "Preauthorization"): "café" composed and decomposed are two
    resources. The entitlements were keyed by Swift strings, which took them for one: the decomposed id, not
    listed, was denied with the composed one's text."""
    custom.admin("POST", "reset")
    token = custom.token()
    login(custom, token)
    body = {"resources": ["caf\u00e9", "cafe\u0301"]}
    decisions = custom.v2("POST", "/ACME/decisions/preauthorize/Cable", token, json_body=body).json()["decisions"]
    assert [(d["resource"], d["authorized"], d.get("error", {}).get("details")) for d in decisions] == [
        ("caf\u00e9", False, "Composed only."), ("cafe\u0301", True, None)]
