"""A model-based test of the SDK contract (Hypothesis's stateful testing): random sequences of SDK calls and host
answers on two application instances of one device — two connections of one real daemon on a Unix socket, B
optionally without a web view (second screen) — against the real emulator, with logins and logouts made at the
emulator out of band. After every step, model_contract.py's rules 1–4 are checked over each connection's transcript;
rule 5 (checkAuthentication, once quiet after a setRequestor, agrees with the emulator's logins for the device) is
checked here, against what the model did at the emulator: its admin calls, the pages it walked, the TempPass it
picked, and the logout calls the emulator's request log shows (Sources/PassEmulator/README.md, "Admin interface").

Settling: every step leaves the system settled before the next — each request answered, or waiting on the host (a
login at its dialog, page or second-screen code, a logout at its page). A getAuthentication or getAuthorization is
followed by a getMetadata, which takes its turn after it (Protocol/README.md, "Lifecycle" 3), so that a call that
joined the login in progress, and so shows nothing, is known to have been handled. Nothing is proven by waiting for
silence. At the end of a sequence every pending request is cancelled ($/cancelRequest) and must then be answered, and
rule 5 is checked once more.

The daemon is passbridge-test-daemon (passbridge with test methods, none of which the model calls) with shorter
waits than passbridge's: a logout page timeout of LOGOUT_PAGE_SECONDS (10 s in passbridge) and a second-screen poll
every POLL_SECONDS (4 s). A request queued behind a logout whose page the model left unanswered waits for that
timeout, and a phone's sign-in for the next poll; such steps were most of a run's time (in one, 13 steps of 10 s
each, 130 of 156 s). With Hypothesis's seed fixed: 78 → 54 s (seed 1), 160 → 48 s (seed 2).

Sequences and shrinking: each sequence runs on a daemon of its own (a fresh state directory: a new device, so no
TempPass start, remembered provider or login is carried over, and a counterexample replays as it was found); the
emulator is shared and reset after each. Hypothesis generates PASSBRIDGE_MODEL_EXAMPLES sequences (default 300) of
PASSBRIDGE_MODEL_STEPS steps (default 25) and keeps no database. Hypothesis stops generating shortly after the first
failure it sees (10 s, in its engine's `should_generate_more`), so a defect that most sequences meet would hide every
other: violations are therefore recorded by kind (the rule, and for rule 2 the call in flight) and the sequence goes
on (only a request left unanswered stops it), the run goes on to the last sequence, and then each kind is shrunk by
replaying the shortest sequence that met it without one step at a time (each candidate replayed up to five times:
the daemon's races make some violations come in only some runs). The test fails with, per kind, how many sequences
met it and the smallest sequence found, with the offending connection's transcript.

Two more tests: the checker alone on made-up transcripts (each rule fires; no daemon), and, 200 times over a socket
and over pipes, the sequence that first showed two setAuthenticationStatus(1) for one TempPass pick (a status the
instance's own write echoed back to it)."""
import collections
import concurrent.futures
import itertools
import json
import os
import shutil
import sys
import time
import urllib.request

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from model_contract import CheckAuthenticationDisagrees, NotAnsweredOnce, Tracker, Violation, brief, render
from rpc_helper import REDIRECT_URL, SocketDaemon, StdioDaemon, daemon_args, follow_to_redirect_url

EXAMPLES = int(os.environ.get("PASSBRIDGE_MODEL_EXAMPLES", "300"))
STEPS = int(os.environ.get("PASSBRIDGE_MODEL_STEPS", "25"))
# How long a logout waits for its page (passbridge-test-daemon --test-logout-page-seconds; passbridge waits 10 s).
LOGOUT_PAGE_SECONDS = "1"
# The second-screen login's poll interval (passbridge-test-daemon --test-poll-seconds; passbridge polls every 4 s).
POLL_SECONDS = "0.25"
# Longest wait for a request to be answered or to wait on the host: far above any answer from the loopback emulator,
# and above the second screen's poll and a logout page's timeout.
SETTLE_SECONDS = 20.0
# Shrinking: at most this long per kind of violation; each candidate sequence replayed up to REPLAYS times.
SHRINK_SECONDS = float(os.environ.get("PASSBRIDGE_MODEL_SHRINK_SECONDS", "60"))
REPLAYS = 5
WHO = st.sampled_from(["A", "B"])
UNKNOWN_MVPD = "NoSuchMVPD"


def admin(emulator, method: str, path: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(emulator.base + "/__admin/" + path, method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read() or b"{}")


class NotSettled(Exception):
    """A request neither answered nor waiting on the host in time: the sequence cannot go on."""


class Environment:
    """What every sequence shares: the binaries, the emulator, a scratch folder; what the run found."""

    def __init__(self, bin_dir, emulator, scratch):
        self.bin_dir, self.emulator, self.scratch = bin_dir, emulator, scratch
        self.numbers = itertools.count()
        self.sequences = self.steps = self.quiet_checks = 0
        self.found: dict[str, list] = collections.defaultdict(list)  # kind -> [(second_screen, calls, report)]
        self.rules: collections.Counter = collections.Counter()  # rules run while generating
        self.told: collections.Counter = collections.Counter()  # callbacks received while generating


class EngineModel(RuleBasedStateMachine):
    environment: Environment = None
    record = True  # what a sequence finds is filed in `environment` (False while replaying)

    def __init__(self):
        super().__init__()
        env = self.environment
        self.emulator = env.emulator
        self.folder = env.scratch / f"m{next(env.numbers)}"
        self.folder.mkdir()
        self.daemon = SocketDaemon(env.bin_dir / "passbridge-test-daemon", self.folder / "pb.sock",
                                   *daemon_args(env.emulator.base, self.folder / "state"), "--test-logout-page-seconds", LOGOUT_PAGE_SECONDS,
                                   "--test-poll-seconds", POLL_SECONDS)
        self.trackers: dict[str, Tracker] = {}
        self.closed: list[Tracker] = []  # connections `restart` closed
        self.web_view: dict[str, bool] = {}
        self.second_screen = False
        self.calls: list[tuple[str, dict]] = []  # the rules run, with their arguments (for the replays)
        self.log: list[str] = []  # what each step did, for the report
        self.kinds: dict[str, Violation] = {}  # the first violation of each kind
        self.stopped = False
        # What the emulator holds for the device: a regular MockMVPD login (made by a page walked here, a phone, an
        # admin call; ended by an admin call or a logout call in its request log), and a TempPass started here (ended, for
        # the device, by a logout call for it).
        self.emulator_login = False
        self.temp_pass = False
        self.requests_seen = 0
        self.abandoned: set[str] = set()
        self.walked: dict[str, str] = {}  # login page → its redirect URL: a redirect the logout took is handed again
        self.phoned: set[str] = set()
        self.device = None
        env.sequences += 1

    # ------------------------------------------------------------------------------------------------ running

    def step(self, name: str, **arguments):
        """Runs rule `name` (its `do_` method) and checks; a request left unanswered stops the sequence."""
        if self.stopped:
            return
        self.calls.append((name, arguments))
        try:
            idle = getattr(self, "do_" + name)(**arguments) is False
            self.environment.rules[name + (" (nothing to do)" if idle else "")] += self.record
            self.check()
        except NotSettled:
            self.stopped = True

    def check(self):
        for tracker in self.trackers.values():
            for violation in tracker.update():
                self.found(violation)

    def found(self, violation: Violation):
        """Files the first violation of each kind this sequence meets."""
        if violation.kind in self.kinds:
            return
        self.kinds[violation.kind] = violation
        if self.record:
            self.environment.found[violation.kind].append((self.second_screen, list(self.calls), str(violation)))

    def describe(self, tracker: Tracker, index: int, text: str) -> str:
        """The report of a violation: the steps so far, then the offending connection's transcript, flagged."""
        steps = "\n".join(f"  {n + 1:2}. {line}" for n, line in enumerate(self.log))
        return f"{text}\nsteps:\n{steps}\ntranscript of {tracker.name}:\n{render(tracker.client.transcript, index)}"

    def observe(self, tracker: Tracker, status: int):
        """A setAuthenticationStatus told to `tracker`: the other instance may be told the same, unasked."""
        for other in self.trackers.values():
            if other is not tracker:
                other.news_from_elsewhere(status)

    def logged_in_at_emulator(self) -> int:
        return 1 if self.emulator_login or self.temp_pass else 0

    def open(self, who: str, web_view: bool):
        tracker = Tracker(who, self.daemon.client(), self.describe, self.observe)
        self.trackers[who], self.web_view[who] = tracker, web_view
        self.request(who, "init", {"webView": web_view})
        self.request(who, "setRequestor", {"requestorID": "REF"})

    def request(self, who: str, method: str, params=None, barrier: bool = False) -> dict | None:
        """Sends one request on `who` and settles; returns its response when it was answered."""
        tracker = self.trackers[who]
        self.log.append(f"{who}: {method} {json.dumps(params, separators=(',', ':')) if params is not None else ''}".rstrip())
        if method == "setRequestor":
            # Its re-sync brings the store to the emulator's logins: news for the other instance.
            self.sync_emulator()
            for other in self.trackers.values():
                if other is not tracker:
                    other.news_from_elsewhere(self.logged_in_at_emulator())
        if method == "logout":
            # Its profiles go at once, before its page and its own status (Protocol/README.md, "Lifecycle" 4): news
            # of a logout for the other instance, which may hear of it first.
            for other in self.trackers.values():
                if other is not tracker:
                    other.news_from_elsewhere(0)
        request_id = tracker.client.send(method, params)
        if barrier:
            tracker.client.send("getMetadata", {"opCode": "METADATA_DEVICE_ID"})
        self.settle()
        return tracker.requests[request_id].response

    def settle(self, until=None, on: Tracker | None = None, seconds: float = SETTLE_SECONDS):
        """Waits until every pending request of both connections is answered or waits on the host, and `until()`
        holds when given (`on` being the connection whose messages make it hold); checks each message as it comes.
        Raises NotSettled (after filing the violation) when that does not happen in time."""
        deadline = time.monotonic() + seconds
        while True:
            self.check()
            busy = [(t, r) for t in self.trackers.values() for r in t.pending() if not t.waits_on_host(r)]
            if not busy and (until is None or until()):
                return
            remaining = deadline - time.monotonic()
            watched = busy[0][0] if busy else on or next(iter(self.trackers.values()))
            if remaining <= 0:
                what = ", ".join(f"{t.name} {r.id} {r.method}" for t, r in busy) or "the awaited outcome"
                self.found(watched.violation(NotAnsweredOnce, len(watched.client.transcript) - 1,
                                             f"not answered, nor waiting on the host, after {seconds:.0f} s: {what}",
                                             kind="not settled: " + (busy[0][1].method if busy else "the awaited outcome")))
                raise NotSettled()
            try:
                watched.client.wait_for(lambda m: True, since=watched.seen, timeout=remaining)
            except AssertionError:
                pass  # the time is up, or the connection ended: checked above

    def sync_emulator(self):
        """Reads the emulator's request log since the last look: a logout call for MockMVPD ended its login there; one
        for TempPass leaves the pass at the emulator (it runs its course), but the device is no longer logged in with
        it until the user picks TempPass again (Protocol/README.md, "Live logins": the re-sync does not add it)."""
        requests = admin(self.emulator, "GET", "requests")["requests"]
        for entry in requests[self.requests_seen:]:
            if entry["method"] == "GET" and entry["path"] == "/api/v2/REF/logout/MockMVPD":
                self.emulator_login = False
            if entry["method"] == "GET" and entry["path"] == "/api/v2/REF/logout/TempPass":
                self.temp_pass = False
        self.requests_seen = len(requests)

    def quiet(self) -> bool:
        return not any(t.pending() for t in self.trackers.values())

    def login_waits(self, tracker: Tracker) -> bool:
        """A login of `tracker` waits on the host, who has not given up on it (an abandoned page, a code the phone
        used)."""
        return tracker.in_login and tracker.page not in self.abandoned and not (
            tracker.regcode and tracker.regcode["code"] in self.phoned)

    def with_pending(self) -> list[tuple[str, int]]:
        return [(w, r.id) for w, t in sorted(self.trackers.items()) for r in t.pending()]

    @staticmethod
    def pick(who, eligible: list):
        """`who` when eligible, else the first eligible one (None when none is): the same choice on every replay."""
        return who if who in eligible else (eligible[0] if eligible else None)

    # ------------------------------------------------------------------------------------------------ the rules
    # Each rule only runs `do_<name>` through `step`, which records the call for the replays. A rule that needs
    # something of the state (a page, a pending request) does nothing without it: no rule has a precondition, since
    # what is pending depends on the daemon's timing, and Hypothesis requires the rules it may choose to be the same
    # whenever it replays the same choices.

    @initialize(second_screen=st.booleans())
    def start(self, second_screen):
        self.second_screen = second_screen
        try:
            self.do_start(second_screen)
            self.check()
        except NotSettled:
            self.stopped = True

    def do_start(self, second_screen):
        """Two application instances: A with a web view, B with one or (second_screen) without."""
        self.log.append(f"A: web view; B: {'second screen' if second_screen else 'web view'}")
        self.open("A", True)
        self.open("B", not second_screen)
        self.device = self.request("A", "getMetadata", {"opCode": "METADATA_DEVICE_ID"})["result"]["metadata"]

    @rule(who=WHO, what=st.sampled_from(["checkAuthentication", "METADATA_DEVICE_ID", "METADATA_AUTHENTICATION"]))
    def ask(self, who, what):
        self.step("ask", who=who, what=what)

    def do_ask(self, who, what):
        """checkAuthentication, or getMetadata of the device id or of the login's expiry."""
        if what == "checkAuthentication":
            self.request(who, what)
        else:
            self.request(who, "getMetadata", {"opCode": what})

    @rule(who=WHO, force=st.booleans())
    def get_authentication(self, who, force):
        self.step("get_authentication", who=who, force=force)

    def do_get_authentication(self, who, force):
        self.request(who, "getAuthentication", {"forceAuthn": True} if force else None, barrier=True)

    @rule(who=WHO, method=st.sampled_from(["getAuthorization", "checkAuthorization"]), resource=st.sampled_from(["ch1", "ch2"]))
    def authorization(self, who, method, resource):
        self.step("authorization", who=who, method=method, resource=resource)

    def do_authorization(self, who, method, resource):
        """ch1 is permitted for the mock user, ch2 denied."""
        self.request(who, method, {"resource": resource}, barrier=method == "getAuthorization")

    @rule(who=WHO, mvpd=st.sampled_from(["MockMVPD", "TempPass", None, UNKNOWN_MVPD]))
    def select_provider(self, who, mvpd):
        self.step("select_provider", who=who, mvpd=mvpd)

    def do_select_provider(self, who, mvpd):
        """setSelectedProvider at any time: at the dialog, at the page, or outside any flow."""
        response = self.request(who, "setSelectedProvider", {"mvpdId": mvpd})
        if mvpd == "TempPass" and response and response.get("result", {}).get("status") == 1:
            self.sync_emulator()  # a logout logged before this pick does not end it
            self.temp_pass = True

    @rule(who=WHO, how=st.integers(0, 3))
    def answer_host(self, who, how):
        self.step("answer_host", who=who, how=how)

    def do_answer_host(self, who, how):
        """The host acts on what its instance waits on (instance `who` if it waits, else the other): at the provider
        dialog, setSelectedProvider MockMVPD (0, 1), TempPass (2) or null (3: cancel; an unknown id and the rest come
        from select_provider); at the login page, walk
        it to the redirect URL and hand that to handleExternalURL (0, 1), leave it for good (2: abandoned) or cancel
        (3: setSelectedProvider null); at the second screen, the phone signs in with the code and the host waits for
        the daemon's poll to end the login (0, 1) or goes on meanwhile (2), or cancels (3); at the logout page, walk it
        and hand the redirect URL back (0, 1, 2), or cancel the logout (3: $/cancelRequest). When nothing waits, the
        user taps "sign in" on `who`: getAuthentication."""
        waiting = [w for w, t in sorted(self.trackers.items()) if self.login_waits(t) or t.logout_page]
        if not waiting:
            return self.do_get_authentication(who, False)
        who = self.pick(who, waiting)
        tracker = self.trackers[who]
        login = self.login_waits(tracker)
        if login and tracker.page:
            if how == 2:
                self.log.append(f"{who}: abandons the login page")
                self.abandoned.add(tracker.page)
            elif how == 3:
                self.do_select_provider(who, None)
            else:
                self.sync_emulator()
                if tracker.page in self.walked:
                    self.log.append(f"{who}: hands the login page's redirect again")
                else:
                    self.log.append(f"{who}: walks the login page")
                    self.walked[tracker.page] = follow_to_redirect_url(tracker.page)
                redirect = self.walked[tracker.page]
                self.emulator_login = True
                self.request(who, "handleExternalURL", {"url": redirect})
        elif login and tracker.regcode:
            if how == 3:
                return self.do_select_provider(who, None)
            code = tracker.regcode
            self.phoned.add(code["code"])
            self.sync_emulator()
            self.log.append(f"{who}: the phone signs in with the code" + (", the TV waits for its poll" if how < 2 else ""))
            follow_to_redirect_url(code["authenticateUrl"], stop_at_page_without_form=True)
            self.emulator_login = True
            if how < 2:
                self.settle(until=lambda: tracker.regcode is not code, on=tracker)
        elif login:
            self.do_select_provider(who, ["MockMVPD", "MockMVPD", "TempPass", None][how])
        elif how == 3:
            self.cancel(who, next(r.id for r in tracker.pending() if r.method == "logout"))
        else:
            self.log.append(f"{who}: walks the logout page")
            redirect = follow_to_redirect_url(tracker.logout_page)
            self.request(who, "handleExternalURL", {"url": redirect})

    @rule(who=WHO, method=st.sampled_from(["handleExternalURL", "getAuthenticationToken"]))
    def complete_now(self, who, method):
        self.step("complete_now", who=who, method=method)

    def do_complete_now(self, who, method):
        """The redirect URL (or getAuthenticationToken) without a page walked: completes nothing, or fails the login."""
        self.request(who, method, {"url": REDIRECT_URL} if method == "handleExternalURL" else None)

    @rule(who=WHO)
    def set_requestor(self, who):
        self.step("set_requestor", who=who)

    def do_set_requestor(self, who):
        """setRequestor again (back to the foreground); once quiet, checkAuthentication must agree with the emulator."""
        self.request(who, "setRequestor", {"requestorID": "REF"})
        if not self.quiet():
            return
        self.sync_emulator()
        expected = self.logged_in_at_emulator()
        self.environment.quiet_checks += self.record
        response = self.request(who, "checkAuthentication")
        tracker = self.trackers[who]
        if response is not None and response.get("result", {}).get("status") != expected:
            self.found(tracker.violation(
                CheckAuthenticationDisagrees, tracker.requests[response["id"]].answered_at,
                f"checkAuthentication answered {response['result'].get('status')}, the emulator has "
                f"{'a login' if expected else 'no login'} for the device (regular: {self.emulator_login}, TempPass: "
                f"{self.temp_pass})", kind=f"{response['result'].get('status')} where the emulator says {expected}"))

    @rule(who=WHO)
    def logout(self, who):
        self.step("logout", who=who)

    def do_logout(self, who):
        """logout: its page (a web view logged in at MockMVPD) is left to answer_host."""
        self.request(who, "logout")

    @rule(nth=st.integers(0, 3))
    def cancel_request(self, nth):
        self.step("cancel_request", nth=nth)

    def do_cancel_request(self, nth):
        """$/cancelRequest of one of the requests pending on either connection; with none pending, of an answered one,
        which the daemon ignores (a second answer would break rule 1 at the next check)."""
        pending = self.with_pending()
        if pending:
            return self.cancel(*pending[nth % len(pending)])
        who = "AB"[nth % 2]
        tracker = self.trackers[who]
        answered = max(tracker.requests)
        self.log.append(f"{who}: $/cancelRequest {answered} ({tracker.requests[answered].method}, answered)")
        tracker.client.send("$/cancelRequest", {"id": answered}, notification=True)

    def cancel(self, who, request_id):
        tracker = self.trackers[who]
        self.log.append(f"{who}: $/cancelRequest {request_id} ({tracker.requests[request_id].method})")
        tracker.client.send("$/cancelRequest", {"id": request_id}, notification=True)
        self.settle(until=lambda: tracker.requests[request_id].response is not None, on=tracker)

    @rule(who=WHO, reopen=st.booleans())
    def restart(self, who, reopen):
        self.step("restart", who=who, reopen=reopen)

    def do_restart(self, who, reopen):
        """The application starts again: a later init replaces its instance (its flows are cancelled), or (reopen) it
        closes its connection and opens another; then setRequestor."""
        if reopen:
            self.log.append(f"{who}: closes its connection and opens another")
            self.closed.append(self.trackers.pop(who))
            self.closed[-1].client.close()
            self.open(who, self.web_view[who])
        else:
            self.request(who, "init", {"webView": self.web_view[who]})
            self.request(who, "setRequestor", {"requestorID": "REF"})

    @rule(login=st.booleans())
    def elsewhere(self, login):
        self.step("elsewhere", login=login)

    def do_elsewhere(self, login):
        """A login (POST) or a logout (DELETE) of the device made out of band, at the emulator."""
        self.sync_emulator()
        if login:
            self.log.append("emulator: POST /__admin/profiles (MockMVPD)")
            admin(self.emulator, "POST", "profiles", {"serviceProvider": "REF", "mvpd": "MockMVPD", "device": self.device})
        else:
            self.log.append("emulator: DELETE /__admin/profiles")
            admin(self.emulator, "DELETE", "profiles", {"serviceProvider": "REF", "device": self.device})
        self.emulator_login = login

    # ------------------------------------------------------------------------------------------------ checks

    @invariant()
    def contract(self):
        """Rules 1–4 over what both connections received since the step (each step also checked as it settled)."""
        if not self.stopped:
            self.environment.steps += self.record
            self.check()

    def teardown(self):
        """Cancels every pending request, which must then be answered (rule 1), and checks rule 5 once more (A's
        setRequestor, then checkAuthentication, all quiet); then stops the daemon, which must exit 0."""
        failing = sys.exc_info()[1] is not None
        try:
            if not self.stopped and not failing and self.trackers:
                try:
                    self.log.append("end: $/cancelRequest of every pending request")
                    for who, request_id in self.with_pending():
                        self.trackers[who].client.send("$/cancelRequest", {"id": request_id}, notification=True)
                    for tracker in list(self.trackers.values()):
                        self.settle(until=lambda: not tracker.pending(), on=tracker)
                    self.do_set_requestor("A")
                except NotSettled:
                    pass
        finally:
            for tracker in self.trackers.values():
                tracker.client.close()
            if self.record:
                for tracker in [*self.trackers.values(), *self.closed]:
                    self.environment.told.update(callbacks(tracker.client.transcript))
            code = self.daemon.stop()
            shutil.rmtree(self.folder, ignore_errors=True)
            admin(self.emulator, "POST", "reset")
        assert failing or code == 0, f"the daemon exited {code}: {self.daemon.log()[-2000:]}"


def callbacks(transcript: list) -> list[str]:
    """The flow callbacks in a transcript (a REGCODE status by that name), for the summary."""
    names = []
    for arrow, message in transcript:
        if arrow == "<--" and "method" in message and "id" not in message:
            method = message["method"]
            if method == "status" and message["params"].get("id") == "REGCODE":
                names.append("REGCODE")
            elif method not in ("sendTrackingData", "status", "setMetadataStatus"):
                names.append(method)
    return names


# ---------------------------------------------------------------------------------------------------- shrinking

def replay(second_screen: bool, calls: list) -> dict[str, Violation]:
    """Runs one recorded sequence again, outside Hypothesis; the violations it met, by kind."""
    EngineModel.record = False
    machine = EngineModel()
    try:
        machine.start(second_screen)
        for name, arguments in calls:
            machine.step(name, **arguments)
            machine.contract()
    finally:
        machine.teardown()
        EngineModel.record = True
    return machine.kinds


def reproduces(kind: str, second_screen: bool, calls: list) -> Violation | None:
    for _ in range(REPLAYS):
        violation = replay(second_screen, calls).get(kind)
        if violation is not None:
            return violation
    return None


def shrink(kind: str, second_screen: bool, calls: list, report: str) -> tuple[int, str]:
    """Drops steps, from the end backwards, while the sequence still meets `kind` (within SHRINK_SECONDS); returns
    (the steps kept, the report of the last replay that met it)."""
    deadline = time.monotonic() + SHRINK_SECONDS
    if second_screen and (violation := reproduces(kind, False, calls)):
        second_screen, report = False, str(violation)
    changed = True
    while changed and time.monotonic() < deadline:
        changed = False
        for index in reversed(range(len(calls))):
            if time.monotonic() >= deadline or index >= len(calls):
                break
            candidate = calls[:index] + calls[index + 1:]
            if violation := reproduces(kind, second_screen, candidate):
                calls, report, changed = candidate, str(violation), True
    return len(calls), report


def hypothesis_settings() -> settings:
    return settings(max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None, database=None,
                    phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))


def test_the_sdk_contract_holds_over_random_sequences(bin_dir, emulator, short_tmp, tmp_path, request):
    environment = Environment(bin_dir, emulator, short_tmp)
    EngineModel.environment = environment
    started = time.monotonic()
    # Hypothesis keeps caches in .hypothesis/ of the working folder unless told otherwise: here, the test's tmp_path.
    if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        set_hypothesis_home_dir(tmp_path / "hypothesis")
    kinds = []
    try:
        run_state_machine_as_test(EngineModel, settings=hypothesis_settings())
        generated = time.monotonic() - started
        sequences, steps, quiet_checks = environment.sequences, environment.steps, environment.quiet_checks
        for kind, found in sorted(environment.found.items()):
            second_screen, calls, report = min(found, key=lambda f: len(f[1]))
            kept, report = shrink(kind, second_screen, calls, report)
            kinds.append(f"[{len(kinds) + 1}] {kind}: in {len(found)} of {sequences} sequences; the smallest found "
                         f"({kept} steps):\n{report}")
    finally:
        set_hypothesis_home_dir(None)
        reporter = request.config.pluginmanager.get_plugin("terminalreporter")
        capture = request.config.pluginmanager.get_plugin("capturemanager")
        if reporter is not None and capture is not None:
            with capture.global_and_fixture_disabled():
                reporter.write_line(
                    f"\nmodel: {environment.sequences} sequences run ({EXAMPLES} generated, the rest replays), "
                    f"{environment.steps} steps checked, {environment.quiet_checks} quiet checkAuthentication checks, "
                    f"{len(environment.found)} kinds of violation, {time.monotonic() - started:.0f} s\nmodel: rules: "
                    + ", ".join(f"{name} {n}" for name, n in sorted(environment.rules.items()))
                    + "\nmodel: callbacks: " + ", ".join(f"{name} {n}" for name, n in sorted(environment.told.items())))
    if kinds:
        pytest.fail(f"the SDK contract broke in {len(kinds)} ways over {sequences} sequences ({steps} steps, "
                    f"{quiet_checks} quiet checks; {generated:.0f} s to generate, "
                    f"{time.monotonic() - started - generated:.0f} s to shrink):\n\n" + "\n\n".join(kinds), pytrace=False)


# ---------------------------------------------------------------------------------------------------- the checker itself
# Made-up transcripts, no daemon: each rule of model_contract.py fires on the message that breaks it, and the pairings
# the model relies on (news from elsewhere, two calls ended together) break nothing.

def _sent(request_id, method, params=None):
    return "-->", {"jsonrpc": "2.0", "id": request_id, "method": method, **({"params": params} if params is not None else {})}


def _told(method, params):
    return "<--", {"jsonrpc": "2.0", "method": method, "params": params}


def _answer(request_id, result=None, error=None):
    return "<--", {"jsonrpc": "2.0", "id": request_id, **({"error": error} if error else {"result": result})}


IN, OUT = {"status": 1, "errorCode": ""}, {"status": 0, "errorCode": "User Not Authenticated Error"}
CANCELLED = {"status": 0, "errorCode": "Provider not Selected Error"}
DIALOG = _told("displayProviderDialog", {"mvpds": []})
CHECKER_CASES = {
    "a clean exchange": ([_sent(1, "checkAuthentication"), _told("setAuthenticationStatus", OUT), _answer(1, OUT)], [], None),
    "answered twice": ([_sent(1, "checkAuthentication"), _told("setAuthenticationStatus", OUT), _answer(1, OUT),
                        _answer(1, OUT)], ["invariant 1, NotAnsweredOnce (checkAuthentication answered twice)"], None),
    "answered before its callback": ([_sent(1, "checkAuthentication"), _answer(1, OUT), _told("setAuthenticationStatus", OUT)],
                                     ["invariant 1, AnsweredBeforeItsCallback (checkAuthentication)"], None),
    "one pick told twice": ([_sent(1, "checkAuthentication"), _told("setAuthenticationStatus", OUT), _answer(1, OUT),
                             _sent(2, "setSelectedProvider", {"mvpdId": "TempPass"}), _told("setAuthenticationStatus", IN),
                             _told("setAuthenticationStatus", IN), _answer(2, IN)],
                            ["invariant 2, UnaskedRepeatedStatus (during setSelectedProvider)"], None),
    "news crossing a call": ([_sent(1, "checkAuthentication"), _told("setAuthenticationStatus", OUT), _answer(1, OUT),
                              _sent(2, "checkAuthentication"), _told("setAuthenticationStatus", IN),
                              _told("setAuthenticationStatus", IN), _answer(2, IN)], [], 1),
    "two logouts ended together": ([_told("setAuthenticationStatus", IN), _sent(1, "logout"),
                                    _told("navigateToUrl", {"url": "http://e/mock-mvpd/MockMVPD/logout"}), _sent(2, "logout"),
                                    _told("setAuthenticationStatus", OUT), _answer(1, error={"code": -32800}),
                                    _told("setAuthenticationStatus", OUT), _answer(2, OUT)], [], None),
    "told after the replacing init": ([_sent(1, "init", {}), _answer(1, {}), _sent(2, "getAuthentication"), DIALOG,
                                       _sent(3, "init", {}), _answer(3, {}), _told("setAuthenticationStatus", CANCELLED),
                                       _answer(2, CANCELLED)],
                                      ["invariant 3, SentToReplacedInstance"] * 2, None),
    "a second dialog in one login": ([_sent(1, "getAuthentication"), DIALOG, _sent(2, "checkAuthentication"),
                                      _told("setAuthenticationStatus", OUT), _answer(2, OUT), DIALOG],
                                     ["invariant 4, SecondDialogInOneLogin"], None),
}


@pytest.mark.parametrize("case", CHECKER_CASES)
def test_the_checker_flags_each_rule_on_a_made_up_transcript(case):
    transcript, kinds, news = CHECKER_CASES[case]
    tracker = Tracker("app", type("Client", (), {"transcript": transcript})())
    if news is not None:
        tracker.news_from_elsewhere(news)
    assert [violation.kind for violation in tracker.update()] == kinds


def test_a_redirect_while_a_logout_page_is_open_ends_the_logout_and_the_login_page_still_waits():
    """Protocol/README.md, "Ordering rules": with a logout page and a login page open together, the next
    handleExternalURL ends the logout; the login waits on the host for the one after. Found by a random run (1 in
    3,069 sequences): the checker took the first redirect as the login's end, then reported the login's calls as
    neither answered nor waiting."""
    transcript = [_sent(1, "getAuthentication", {"forceAuthn": True}), DIALOG, _sent(2, "logout"),
                  _told("navigateToUrl", {"url": "http://e/mock-mvpd/MockMVPD/logout"}),
                  _sent(3, "setSelectedProvider", {"mvpdId": "MockMVPD"}), _told("navigateToUrl", {"url": "http://e/a"}),
                  _answer(3, {}), _sent(4, "handleExternalURL", {"url": REDIRECT_URL}), _told("setAuthenticationStatus", OUT),
                  _answer(4, OUT), _answer(2, OUT)]
    tracker = Tracker("app", type("Client", (), {"transcript": transcript})())
    assert tracker.update() == []
    assert tracker.in_login and tracker.waits_on_host(tracker.requests[1])
    transcript += [_sent(5, "handleExternalURL", {"url": REDIRECT_URL}), _told("setAuthenticationStatus", IN), _answer(5, IN),
                   _answer(1, IN)]
    assert tracker.update() == []
    assert not tracker.in_login and not tracker.pending()


def test_a_second_logout_answered_at_once_leaves_the_first_ones_page_open():
    """As above, with a second logout sent while both pages are open, answered at once (nothing was stored): the first
    logout's page is still open, so the next redirect still ends that logout and the login page still waits. Found by
    a CI run (1 in 303 sequences): the checker forgot the page when the second logout was answered, took the redirect
    as the login's end, and reported getAuthorization as neither answered nor waiting."""
    transcript = [_sent(6, "logout"), _told("navigateToUrl", {"url": "http://e/mock-mvpd/MockMVPD/logout"}),
                  _sent(7, "getAuthorization", {"resource": "ch1"}), DIALOG,
                  _sent(9, "setSelectedProvider", {"mvpdId": "MockMVPD"}), _told("navigateToUrl", {"url": "http://e/a"}),
                  _answer(9, {}), _sent(10, "logout"), _told("setAuthenticationStatus", OUT), _answer(10, OUT),
                  _sent(11, "handleExternalURL", {"url": REDIRECT_URL}), _told("setAuthenticationStatus", OUT),
                  _answer(11, OUT), _answer(6, OUT)]
    tracker = Tracker("app", type("Client", (), {"transcript": transcript})())
    assert tracker.update() == []
    assert tracker.in_login and tracker.waits_on_host(tracker.requests[7])


def test_a_get_authentication_token_while_a_logout_page_is_open_ends_the_logout_as_a_redirect_does():
    """getAuthenticationToken is handleExternalURL without a URL (Protocol/README.md, "Ordering rules"): with a logout
    page and a login page open it ends the logout, and the login page still waits. Found by a CI run (6 of 311
    sequences): the checker took it for the login's end, as it once did the redirect."""
    transcript = [_sent(13, "getAuthentication", {"forceAuthn": True}), DIALOG, _sent(17, "logout"),
                  _told("navigateToUrl", {"url": "http://e/mock-mvpd/MockMVPD/logout"}),
                  _sent(18, "setSelectedProvider", {"mvpdId": "MockMVPD"}), _told("navigateToUrl", {"url": "http://e/a"}),
                  _answer(18, {}), _sent(19, "getAuthenticationToken"), _told("setAuthenticationStatus", OUT),
                  _answer(19, OUT), _answer(17, OUT)]
    tracker = Tracker("app", type("Client", (), {"transcript": transcript})())
    assert tracker.update() == []
    assert tracker.in_login and tracker.waits_on_host(tracker.requests[13])


# ---------------------------------------------------------------------------------------------------- the TempPass case

TEMP_PASS_RUNS = 200
TEMP_PASS_WORKERS = 4


def temp_pass_case(client) -> list:
    """On one instance: the picker cancelled; a login page cancelled; an unknown MVPD at the picker;
    setSelectedProvider MockMVPD outside any flow; then setSelectedProvider TempPass outside any flow, which must
    send one setAuthenticationStatus(1), then N011. A getMetadata at the end takes its turn after everything the
    pick caused. Returns the problems found (none when the contract held)."""
    tracker = Tracker("app", client)

    def exchange(method, params=None):
        notes, response = client.exchange(method, params, timeout=SETTLE_SECONDS)
        tracker.update()
        return notes, response

    def at_picker():
        mark = client.mark()
        login = client.send("getAuthentication")
        client.notification("displayProviderDialog", mark, timeout=SETTLE_SECONDS)
        return login, mark

    exchange("init", {})
    exchange("setRequestor", {"requestorID": "REF"})
    login, mark = at_picker()
    exchange("setSelectedProvider", {"mvpdId": None})
    client.response(login, mark, timeout=SETTLE_SECONDS)
    login, mark = at_picker()
    exchange("setSelectedProvider", {"mvpdId": "MockMVPD"})
    exchange("setSelectedProvider", {"mvpdId": None})
    client.response(login, mark, timeout=SETTLE_SECONDS)
    login, mark = at_picker()
    exchange("setSelectedProvider", {"mvpdId": UNKNOWN_MVPD})
    client.response(login, mark, timeout=SETTLE_SECONDS)
    exchange("setSelectedProvider", {"mvpdId": "MockMVPD"})
    notes, response = exchange("setSelectedProvider", {"mvpdId": "TempPass"})
    exchange("getMetadata", {"opCode": "METADATA_DEVICE_ID"})
    problems = [str(violation) for violation in tracker.violations]
    told = [brief(n) for n in notes if n["method"] in ("setAuthenticationStatus", "status")]
    if response.get("result", {}).get("status") != 1 or told != ['setAuthenticationStatus {"status":1,"errorCode":""}', "status N011"]:
        problems.append(f"the TempPass pick sent {told}, answered {brief(response)}"
                        + ("" if problems else f"\n{render(client.transcript)}"))
    return problems


@pytest.mark.parametrize("transport", ["socket", "pipes"])
def test_a_temp_pass_pick_outside_any_flow_is_told_once(transport, bin_dir, emulator, short_tmp):
    numbers = itertools.count()

    def one_run(_):
        folder = short_tmp / f"c{next(numbers)}"
        folder.mkdir()
        args = daemon_args(emulator.base, folder / "state")
        if transport == "pipes":
            daemon = client = StdioDaemon(bin_dir, *args)
        else:
            daemon = SocketDaemon(bin_dir, folder / "pb.sock", *args)
            client = daemon.client()
        try:
            return temp_pass_case(client)
        finally:
            if transport == "socket":
                client.close()
            assert daemon.stop() == 0
            shutil.rmtree(folder, ignore_errors=True)

    with concurrent.futures.ThreadPoolExecutor(TEMP_PASS_WORKERS) as pool:
        results = list(pool.map(one_run, range(TEMP_PASS_RUNS)))
    failed = [problems for problems in results if problems]
    assert not failed, f"{len(failed)} of {TEMP_PASS_RUNS} runs broke the contract; the first:\n" + "\n".join(failed[0])
