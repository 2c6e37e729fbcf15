"""The SDK contract as a checker over one connection's transcript, for the model-based test
(test_engine_model.py). A `Tracker` reads a `rpc_helper.Client`'s `transcript` (what it sent and received, in the
order it saw them) as it grows, keeps what the host knows of its instance (requests pending, a login in progress, its
page, a second-screen code, a logout page), and records each message that breaks one of these rules
(Protocol/README.md, "Lifecycle", "Ordering rules", "Cancelling a request", "Live logins"), then goes on checking:

1. every request is answered exactly once, after the callback that ended it (a result repeats the params of that
   callback: setAuthenticationStatus, setToken, tokenRequestFailed, setMetadataStatus, setRequestorComplete…);
2. no setAuthenticationStatus repeats the last status told to the instance unless a request asked for it: each
   status-asking request accounts for at most one setAuthenticationStatus that arrived while it was pending, and each
   setAuthenticationStatus takes one if it can (in the order they arrive, each the candidate answered first: the
   response follows its callback, so this pairs a status with its own call, and two logouts ended together each keep
   theirs); a repeat that no pending request is left to account for was sent unasked. A change that another instance
   made (news the test passes in with `news_from_elsewhere`) may come unasked, and then accounts for no request: news
   sent as the host sends a request crosses it on the wire, and is not that request's answer;
3. nothing reaches an instance that `init` replaced: once the replacing `init` is answered, no response to a request
   of the old instance, and nothing but setRequestorComplete and a plain status until the new instance's
   setRequestor is answered (it has no requestor and was never told a state);
4. at most one displayProviderDialog per login. A login starts at its first dialog, page or code and ends when the
   host's answer ends it (setSelectedProvider answered with a status during the login, handleExternalURL or
   getAuthenticationToken answered with a status while its page was open), when a getAuthentication or
   getAuthorization that was waiting when it started is answered (its end, or $/cancelRequest), or when one that
   joined it is cancelled ($/cancelRequest ends the login for every call it answers). A logout's page, a
   getAuthorization answered at once meanwhile (logged in elsewhere), and the setAuthenticationStatus of a
   checkAuthentication, checkAuthorization or logout sent meanwhile, end no login.

The fifth rule (checkAuthentication agrees with the backend's logins once quiet) needs the emulator and lives in the
test. Each violation has a `kind` (the rule, and for rule 2 the call in flight) by which the test counts and shrinks
them."""
import json
import urllib.parse
from dataclasses import dataclass, field

# The requests that may ask for a setAuthenticationStatus (invariant 2).
STATUS_ASKING = frozenset({"checkAuthentication", "getAuthentication", "getAuthorization", "checkAuthorization", "logout",
                           "setSelectedProvider", "handleExternalURL", "getAuthenticationToken"})
# The requests that start a login, or join the one in progress.
LOGIN_STARTERS = frozenset({"getAuthentication", "getAuthorization"})


class Violation(AssertionError):
    invariant = 0

    def __init__(self, message: str, kind: str):
        super().__init__(message)
        self.kind = kind


class NotAnsweredOnce(Violation):
    invariant = 1


class AnsweredBeforeItsCallback(Violation):
    invariant = 1


class UnaskedRepeatedStatus(Violation):
    invariant = 2


class SentToReplacedInstance(Violation):
    invariant = 3


class SecondDialogInOneLogin(Violation):
    invariant = 4


class CheckAuthenticationDisagrees(Violation):
    invariant = 5


@dataclass
class StatusTold:
    """A setAuthenticationStatus waiting to be paired with a request that asked for it (invariant 2)."""
    index: int
    status: int
    repeat: bool  # it repeats the status told before it
    candidates: set  # ids of the status-asking requests pending when it came, not yet paired
    during: str  # the call in flight then, for the violation's kind


@dataclass
class Request:
    id: int
    method: str
    params: dict | None
    sent_at: int  # index of its "-->" entry in the transcript
    response: dict | None = None
    answered_at: int | None = None
    matched: bool = False  # it accounted for a setAuthenticationStatus (invariant 2)
    during_login: bool = False  # sent while a login waited on the host
    page_open: bool = False  # sent while the login's page was open
    logout_open: bool = False  # sent while a logout page was open: a handleExternalURL then ends the logout first


def brief(message: dict) -> str:
    """One short line for a message: the method and its params (or the id and the result), long values cut."""
    if "method" in message:
        method, params = message["method"], message.get("params")
        if method == "displayProviderDialog":
            return f"displayProviderDialog [{', '.join(m['ID'] for m in params['mvpds'])}]"
        if method == "sendTrackingData":
            return f"sendTrackingData(event {params['eventType']}, {params['data'][0]})"
        if method == "status":
            return f"status {params['id']}" + (f" {params['code']}" if "code" in params else "")
        if method == "setMetadataStatus":
            return f"setMetadataStatus {json.dumps(params.get('metadata'))[:40]}"
        head = f"{message['id']} {method}" if "id" in message else method
        return f"{head} {_short(params)}" if params is not None else head
    if "error" in message:
        return f"{message['id']} error {message['error'].get('code')} {message['error'].get('message')}"
    return f"{message['id']} result {_short(message.get('result'))}"


def _short(value) -> str:
    if isinstance(value, dict):
        value = {k: (v[:24] + "…" if isinstance(v, str) and len(v) > 40 else v) for k, v in value.items() if k != "statuses"}
    return json.dumps(value, separators=(",", ":"))


def render(transcript: list, mark: int | None = None, start: int = 0) -> str:
    """Numbered short lines of `transcript[start:]`, the entry at `mark` flagged with !!."""
    lines = []
    for index in range(start, len(transcript)):
        arrow, message = transcript[index]
        flag = "!!" if index == mark else "  "
        lines.append(f"{flag}{index:4} {arrow} {brief(message)}")
    return "\n".join(lines)


def ending_callback(request: Request, response: dict) -> tuple[str, dict] | None:
    """The callback whose params a result repeats (Protocol/README.md, "Ordering rules"), or None when the result
    repeats none: an error, init's `{}`, setSelectedProvider's `{}` (the login goes on, or the choice is only
    remembered), and handleExternalURL or getAuthenticationToken, which answer the current state with no callback
    when they complete nothing."""
    if "result" not in response:
        return None
    result = {k: v for k, v in response["result"].items() if k != "statuses"}
    method = request.method
    if method == "setRequestor":
        return "setRequestorComplete", {"status": result.get("status")}
    if method in ("checkAuthentication", "getAuthentication", "logout") or (method == "setSelectedProvider" and "status" in result):
        return "setAuthenticationStatus", {"status": result.get("status"), "errorCode": result.get("errorCode")}
    if method in ("checkAuthorization", "getAuthorization"):
        return ("setToken" if "token" in result else "tokenRequestFailed"), result
    if method == "getMetadata":
        return "setMetadataStatus", result
    if method == "getSelectedProvider":
        return "selectedProvider", result
    return None


@dataclass
class Tracker:
    """What one connection (one application instance) was sent and told, checked as it grows."""
    name: str
    client: object
    describe: object = None  # callable(tracker, index, text) -> str: the report of a violation
    observe: object = None  # callable(tracker, status) on each setAuthenticationStatus, to pass news on to others
    violations: list = field(default_factory=list)  # in the order found
    news: set = field(default_factory=set)  # statuses another instance moved the login to since this one was told
    pos: int = 0  # transcript entries processed
    seen: int = 0  # received messages processed
    requests: dict = field(default_factory=dict)
    asking: list = field(default_factory=list)  # unanswered status-asking request ids, in send order
    unpaired: list = field(default_factory=list)  # StatusTold not paired yet, in the order they came
    last_status: int | None = None
    in_login: bool = False
    members: set = field(default_factory=set)  # the getAuthentication/getAuthorization ids waiting when it started
    dialogs: int = 0
    page: str | None = None  # the login page (navigateToUrl) of the login in progress
    regcode: dict | None = None  # the REGCODE status of the second-screen login in progress
    logout_page: str | None = None
    inits: int = 0
    replacing: tuple | None = None  # (init id, ids sent before it) while a replacing init is in flight
    replaced: frozenset = frozenset()  # ids of replaced instances' requests, once the replacing init was answered
    window: bool = False  # between a replacing init's answer and the next setRequestor's answer

    def violation(self, cls, index: int, text: str, kind: str | None = None) -> Violation:
        """A violation of rule `cls.invariant` at transcript entry `index`: its message (with the report `describe`
        makes) and its kind."""
        report = self.describe(self, index, text) if self.describe else f"{text}\n{render(self.client.transcript, index)}"
        return cls(f"invariant {cls.invariant} ({cls.__name__}) on {self.name}: {report}",
                   f"invariant {cls.invariant}, {cls.__name__}" + (f" ({kind})" if kind else ""))

    def fail(self, cls, index: int, text: str, kind: str | None = None):
        self.violations.append(self.violation(cls, index, text, kind))

    def news_from_elsewhere(self, status: int):
        """Another instance's login or logout (or setRequestor's re-sync) may have moved the login to `status`."""
        self.news.add(status)

    def login_starts(self):
        if not self.in_login:
            self.in_login = True
            self.members = {r.id for r in self.pending() if r.method in LOGIN_STARTERS}

    def login_over(self):
        self.in_login, self.dialogs, self.page, self.regcode, self.members = False, 0, None, None, set()

    def pending(self) -> list[Request]:
        return [r for r in self.requests.values() if r.response is None]

    def waits_on_host(self, request: Request) -> bool:
        """A pending request that waits on the host: a login at its dialog, page or code; a logout at its page."""
        if request.method in LOGIN_STARTERS:
            return self.in_login
        return request.method == "logout" and self.logout_page is not None

    def update(self) -> list[Violation]:
        """Checks what arrived since the last call; returns the violations found (also kept in `violations`)."""
        before = len(self.violations)
        transcript = self.client.transcript
        end = len(transcript)
        while self.pos < end:
            index = self.pos
            arrow, message = transcript[index]
            self.pos += 1
            if arrow == "-->":
                self._sent(index, message)
            else:
                self.seen += 1
                if "method" not in message:
                    self._response(index, message)
                elif "id" not in message:
                    self._notification(index, message)
        return self.violations[before:]

    def _sent(self, index: int, message: dict):
        if "id" not in message:
            return  # a notification ($/cancelRequest)
        request = Request(message["id"], message["method"], message.get("params"), index,
                          during_login=self.in_login, page_open=self.page is not None,
                          logout_open=self.logout_page is not None)
        if request.method == "init":
            if self.inits:
                self.replacing = (request.id, frozenset(self.requests))
            self.inits += 1
        self.requests[request.id] = request
        if request.method in STATUS_ASKING:
            self.asking.append(request.id)

    def _response(self, index: int, message: dict):
        request = self.requests.get(message.get("id"))
        if request is None:
            self.fail(NotAnsweredOnce, index, f"a response to id {message.get('id')!r}, which was never sent",
                      kind="a response to no request")
            return
        if request.response is not None:
            self.fail(NotAnsweredOnce, index, f"request {request.id} ({request.method}) answered a second time",
                      kind=f"{request.method} answered twice")
            return
        request.response, request.answered_at = message, index
        if request.id in self.asking:
            self.asking.remove(request.id)
            self._pair(request)
        if request.id in self.replaced:
            self.fail(SentToReplacedInstance, index,
                      f"request {request.id} ({request.method}) of the replaced instance answered after the replacing "
                      f"init")
        self._check_callback_before(request, index)
        if self.replacing and request.id == self.replacing[0]:
            self.replaced = self.replaced | self.replacing[1]
            self.replacing = None
            self.window = True
            self.last_status, self.logout_page, self.news = None, None, set()
            self.login_over()
        elif self.window and request.method == "setRequestor":
            self.window = False
        ended_with_status = "status" in message.get("result", {})
        cancelled_joiner = request.method in LOGIN_STARTERS and request.during_login and \
            message.get("error", {}).get("code") == -32800
        if request.id in self.members or cancelled_joiner \
                or (request.method == "setSelectedProvider" and request.during_login and ended_with_status) \
                or (request.method in ("handleExternalURL", "getAuthenticationToken") and request.page_open and ended_with_status
                    and not request.logout_open):
            self.login_over()
        # The page is the logout's that opened it: a second logout answered meanwhile (with no page of its own, since
        # nothing was stored) leaves the first one's open. Clearing it then made the model take the redirect the first
        # logout ends on for the login page's, and find a login still waiting on the host "not waiting" (a CI run).
        if request.method == "logout" and not any(r.method == "logout" for r in self.pending()):
            self.logout_page = None

    def _pair(self, request: Request):
        """`request` is answered: the first unpaired status it could account for is its own; a status left with no
        candidate is unpaired for good, a violation when it was a repeat."""
        told = next((t for t in self.unpaired if request.id in t.candidates), None)
        if told is None:
            return
        self.unpaired.remove(told)
        request.matched = True
        for other in list(self.unpaired):
            other.candidates.discard(request.id)
            if not other.candidates:
                self.unpaired.remove(other)
                self._unasked(other)

    def _unasked(self, told: StatusTold):
        if told.repeat:
            self.fail(UnaskedRepeatedStatus, told.index,
                      f"setAuthenticationStatus({told.status}) repeats the last status told to this instance, and no "
                      f"pending request asked for it", kind=told.during)

    def _check_callback_before(self, request: Request, index: int):
        """Invariant 1's order: the callback a result repeats came after the request was sent, before the result."""
        expected = ending_callback(request, request.response)
        if expected is None:
            return
        method, params = expected
        transcript = self.client.transcript
        for at in range(request.sent_at + 1, index):
            arrow, message = transcript[at]
            if arrow == "<--" and message.get("method") == method and "id" not in message and \
                    all(message.get("params", {}).get(k) == v for k, v in params.items()):
                return
        self.fail(AnsweredBeforeItsCallback, index,
                  f"request {request.id} ({request.method}) answered with no {method} {_short(params)} between it and "
                  f"its response", kind=request.method)

    def _notification(self, index: int, message: dict):
        method, params = message["method"], message.get("params") or {}
        if self.window and method != "setRequestorComplete" and not (method == "status" and params.get("id") != "REGCODE"):
            self.fail(SentToReplacedInstance, index,
                      f"{method} after the replacing init was answered, before the new instance's setRequestor was")
        if method == "setAuthenticationStatus":
            status = params.get("status")
            if status == self.last_status or status not in self.news:  # news of a change made elsewhere answers none
                candidates = {rid for rid in self.asking if not self.requests[rid].matched}
                pending = self.pending()
                told = StatusTold(index, status, status == self.last_status, candidates,
                                  f"during {pending[-1].method}" if pending else "with no request pending")
                if candidates:
                    self.unpaired.append(told)
                else:
                    self._unasked(told)
            self.last_status = status
            self.news.discard(status)
            if self.observe:
                self.observe(self, status)
        elif method == "displayProviderDialog":
            if self.in_login and self.dialogs:
                self.fail(SecondDialogInOneLogin, index, "a second displayProviderDialog in one login")
            self.login_starts()
            self.dialogs += 1
        elif method == "navigateToUrl":
            url = params.get("url", "")
            if urllib.parse.urlsplit(url).path.endswith("/logout"):
                self.logout_page = url
            else:
                self.login_starts()
                self.page = url
        elif method == "status" and params.get("id") == "REGCODE":
            self.login_starts()
            self.regcode = params
