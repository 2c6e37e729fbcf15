"""Ordering the engine owes by construction. Two getAuthentication sent back to back share one login flow (Protocol/README.md, Ordering rules): one
provider dialog, and one setSelectedProvider null ends both with "Provider not Selected Error". Proven by
repetition, 200 runs over a real socket and 200 over real pipes, against the emulator.

Before the fix, 1 run in 200 on the socket and 5 in 50 over pipes opened a second dialog and left the second
call waiting: each getAuthentication read the store before deciding to join, and the host could end the first
login in between. Now one getAuthentication checks at a time, in arrival order, and a call that finds a login
in progress joins it at once (`Engine.getAuthentication`)."""
from concurrent.futures import ThreadPoolExecutor

from rpc_helper import StdioDaemon, daemon_args
from test_bridge_flows import ready

PROVIDER_NOT_SELECTED = "Provider not Selected Error"
RUNS = 200
PIPE_RUNS = 200


def two_logins_cancelled_at_the_dialog(client) -> str | None:
    """One run on a ready instance; None when it went as the rules say, else what went wrong."""
    start = client.mark()
    first = client.send("getAuthentication")
    second = client.send("getAuthentication")
    client.notification("displayProviderDialog", start)
    client.send("setSelectedProvider", {"mvpdId": None})
    try:
        answers = [client.response(request, start, timeout=10)[1] for request in (first, second)]
    except AssertionError:
        notes = [m["method"] for m in client.received[start:] if "method" in m]
        return f"a getAuthentication was never answered; notifications: {notes}"
    notes = [m["method"] for m in client.received[start:] if "method" in m]
    dialogs, statuses = notes.count("displayProviderDialog"), notes.count("setAuthenticationStatus")
    if dialogs != 1 or statuses != 1:
        return f"{dialogs} dialogs and {statuses} setAuthenticationStatus: {notes}"
    for answer in answers:
        result = answer.get("result", {})
        if result.get("status") != 0 or result.get("errorCode") != PROVIDER_NOT_SELECTED:
            return f"answered {answer}"
    return None


def assert_every_run(scenario, runs: int, workers: int, connect, finish):
    """Runs `scenario(client)` `runs` times, `workers` at once, each on a client `connect()` makes and `finish`
    ends; fails with the count and the first thing that went wrong."""
    def run(_):
        client = connect()
        try:
            return scenario(client)
        finally:
            finish(client)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        failures = [failure for failure in pool.map(run, range(runs)) if failure]
    assert failures == [], f"{len(failures)} of {runs} runs went wrong, first: {failures[0]}"


def on_socket(daemon):
    """Fresh connections to one socket daemon."""
    return {"connect": daemon.client, "finish": lambda client: client.close()}


def over_pipes(bin_dir, emulator, tmp_path):
    """A daemon of its own per run, over stdio, all on one state directory."""
    state = tmp_path / "state"

    def finish(client):
        assert client.stop() == 0

    return {"connect": lambda: StdioDaemon(bin_dir, *daemon_args(emulator.base, state)), "finish": finish}


def ready_then_two_logins(client):
    ready(client)
    return two_logins_cancelled_at_the_dialog(client)


def test_two_logins_back_to_back_share_one_dialog_on_the_socket_every_time(daemon):
    assert_every_run(ready_then_two_logins, RUNS, 20, **on_socket(daemon))


def test_two_logins_back_to_back_share_one_dialog_over_pipes_every_time(bin_dir, emulator, tmp_path):
    assert_every_run(ready_then_two_logins, PIPE_RUNS, 10, **over_pipes(bin_dir, emulator, tmp_path))


# ---------------------------------------------------------------- calls held behind a slow setRequestor

CONFIGURATION = "/api/v2/REF/configuration"
# The calls a host sends while setRequestor is in flight (Protocol/README.md, Lifecycle 3), with the callback that
# ends each held one; getSelectedProvider and setOptions are never held and answer at once.
HELD_TRANSCRIPT = [
    ("checkAuthentication", None, "setAuthenticationStatus"),
    ("getSelectedProvider", None, None),
    ("getMetadata", {"opCode": "METADATA_AUTHENTICATION"}, "setMetadataStatus"),
    ("checkPreauthorizedResources", {"resources": ["ch1"]}, "preauthorizedResources"),
    ("checkAuthorization", {"resource": "ch1"}, "tokenRequestFailed"),
    ("setOptions", {}, None),
    ("logout", None, "setAuthenticationStatus"),
]
TERMINAL = {"setRequestorComplete", "setAuthenticationStatus", "setMetadataStatus", "preauthorizedResources",
            "tokenRequestFailed", "setToken"}


def held_calls_in_order(client) -> str | None:
    """init, setRequestor (its configuration slowed at the emulator), then the seven calls at once: the held ones
    end, callbacks and responses alike, in the order they were sent, after setRequestor's own answer."""
    assert client.call("init", {}) == {}
    start = client.mark()
    requestor = client.send("setRequestor", {"requestorID": "REF"})
    ids = [(client.send(method, params), ends) for method, params, ends in HELD_TRANSCRIPT]
    try:
        for request, _ in ids:
            client.response(request, start, timeout=20)
        client.response(requestor, start, timeout=20)
    except AssertionError as timeout:
        return f"not every call was answered: {timeout}"
    messages = client.received[start:]
    terminal = [m["method"] for m in messages if m.get("method") in TERMINAL]
    expected = ["setRequestorComplete"] + [ends for _, ends in ids if ends]
    if terminal != expected:
        return f"callbacks {terminal}"
    answered = [m["id"] for m in messages if "id" in m and "method" not in m]
    held = [request for request, ends in ids if ends]
    if [request for request in answered if request in held] != held:
        return f"responses in the order {answered}"
    if answered.index(requestor) > answered.index(held[0]):
        return f"a held call was answered before setRequestor: {answered}"
    return None


def slow_configuration(emulator, count):
    assert emulator.admin("faults", {"method": "GET", "path": CONFIGURATION, "kind": "latency", "value": 300,
                                     "count": count}) == 201


def test_calls_held_behind_set_requestor_end_in_the_order_sent_on_the_socket_every_time(daemon, emulator):
    slow_configuration(emulator, RUNS)
    assert_every_run(held_calls_in_order, RUNS, 40, **on_socket(daemon))


def test_calls_held_behind_set_requestor_end_in_the_order_sent_over_pipes_every_time(bin_dir, emulator, tmp_path):
    slow_configuration(emulator, PIPE_RUNS)
    assert_every_run(held_calls_in_order, PIPE_RUNS, 20, **over_pipes(bin_dir, emulator, tmp_path))
