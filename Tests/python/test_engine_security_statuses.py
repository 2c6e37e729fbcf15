"""The SDK's security and internal statuses (Protocol/README.md, "Failure reasons"): SEC420 for a backend whose TLS
certificate does not verify, SEC412 when Adobe says the device is not the login's (the login is dropped), N500 for a
login whose backend answer cannot be used. The real daemon over pipes, against a loopback HTTPS server with a
self-signed certificate and against the emulator."""
import http.server
import ssl
import subprocess
import threading

import pytest

from rpc_helper import NOT_AUTHENTICATED, StdioDaemon, daemon_args, notifications_named, web_login


@pytest.fixture()
def self_signed_backend(tmp_path):
    """An HTTPS server on loopback whose certificate nobody signed: any request would get a 200, none arrives."""
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    reached = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the standard library's name)
            reached.append(self.path)
            self.send_response(200)
            self.end_headers()

        do_POST = do_GET

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{server.server_address[1]}", reached
    server.shutdown()


def test_a_backend_whose_certificate_does_not_verify_says_sec420(bin_dir, self_signed_backend, tmp_path):
    url, reached = self_signed_backend
    daemon = StdioDaemon(bin_dir, *daemon_args(url, tmp_path / "state"))
    notes, response = daemon.exchange("setRequestor", {"requestorID": "REF"})
    assert notes[0]["params"] == {"status": 0}
    status = next(n["params"] for n in notes if n["method"] == "status")
    assert status["id"] == "SEC420" and status["level"] == "error"
    assert [s["id"] for s in response["result"]["statuses"]] == ["SEC420"]
    assert reached == [], "a request went through an unverified channel"
    assert daemon.stop() == 0


def test_a_device_that_is_not_the_logins_says_sec412_and_drops_the_login(bin_dir, emulator, tmp_path):
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    web_login(daemon)
    emulator.admin("item-errors", {"resource": "ch1", "code": "device_identifier_mismatch"})
    notes, response = daemon.exchange("checkAuthorization", {"resource": "ch1"})
    assert notifications_named(notes) == ["setAuthenticationStatus", "tokenRequestFailed", "sendTrackingData", "status"]
    assert notes[0]["params"] == {"status": 0, "errorCode": NOT_AUTHENTICATED}
    assert notes[3]["params"]["id"] == "SEC412" and notes[3]["params"]["level"] == "warning"
    assert response["result"]["errorCode"] == NOT_AUTHENTICATED
    assert daemon.call("checkAuthentication")["status"] == 0
    assert daemon.stop() == 0


def test_a_login_whose_session_answer_cannot_be_used_says_n500(bin_dir, emulator, tmp_path):
    daemon = StdioDaemon(bin_dir, *daemon_args(emulator.base, tmp_path / "state"))
    assert daemon.call("setRequestor", {"requestorID": "REF"}) == {"status": 1}
    emulator.admin("faults", {"method": "POST", "path": "/api/v2/REF/sessions", "kind": "malformed", "count": 1})
    start = daemon.mark()
    login = daemon.send("getAuthentication")
    daemon.notification("displayProviderDialog", start)
    result = daemon.call("setSelectedProvider", {"mvpdId": "MockMVPD"})
    assert result["errorCode"] == "Internal Authentication Error"
    assert [s["id"] for s in result["statuses"]] == ["N500"]
    assert daemon.response(login, start)[1]["result"]["statuses"] == result["statuses"]
    assert daemon.stop() == 0
