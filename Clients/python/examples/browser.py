"""A tiny scripted web browser on urllib: what the demo uses in place of a web view and of the user's phone.

It follows HTTP redirects by hand (with cookies), fills and submits HTML forms, honours
``<meta http-equiv="refresh">``, and stops *before* loading the app's redirect URL (``adobepass://ios.app``):
like a web view's navigation delegate, it hands that URL back instead of opening it.
"""
import html.parser
import http.cookiejar
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Dict, List, Optional, Tuple

Filler = Callable[[str], Optional[str]]


class _Form:
    def __init__(self, action: str, method: str) -> None:
        self.action, self.method = action, method.upper() or "GET"
        self.fields: List[Tuple[str, str, str, bool]] = []  # (name, type, value, checked)
        self.selects: Dict[str, List[str]] = {}
        self.selected: Dict[str, str] = {}


class _PageParser(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: List[_Form] = []
        self.refresh: Optional[str] = None
        self._select: Optional[str] = None

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        a = {k: (v or "") for k, v in attrs}
        if tag == "form":
            self.forms.append(_Form(a.get("action", ""), a.get("method", "GET")))
        elif tag == "meta" and a.get("http-equiv", "").lower() == "refresh":
            content = a.get("content", "")
            if "url=" in content.lower():
                self.refresh = content[content.lower().index("url=") + 4:].strip("'\" ")
        elif not self.forms:
            return
        elif tag in ("input", "button") and a.get("name"):
            kind = a.get("type", "text" if tag == "input" else "submit").lower()
            self.forms[-1].fields.append((a["name"], kind, a.get("value", ""), "checked" in a))
        elif tag == "select" and a.get("name"):
            self._select = a["name"]
            self.forms[-1].selects[self._select] = []
        elif tag == "option" and self._select:
            value = a.get("value", "")
            self.forms[-1].selects[self._select].append(value)
            if "selected" in a or self._select not in self.forms[-1].selected:
                self.forms[-1].selected[self._select] = value

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # we follow redirects ourselves, to stop at the app's redirect URL


def same_target(url: str, redirect_url: str) -> bool:
    """True if ``url`` is the redirect URL: same scheme, host and path (query and fragment ignored)."""
    a, b = urllib.parse.urlsplit(url), urllib.parse.urlsplit(redirect_url)
    return (a.scheme, a.netloc, a.path.rstrip("/")) == (b.scheme, b.netloc, b.path.rstrip("/"))


class Browser:
    """Follows pages until the redirect URL is reached; ``log`` receives one line per request."""

    def __init__(self, log: Callable[[str], None] = lambda line: None, timeout: float = 15) -> None:
        self.log = log
        self.timeout = timeout
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies), _NoRedirect)
        #: The page the last `run` ended on when it returned None.
        self.last_url = ""
        # Whether the last page showed again a form already submitted (credentials refused, a field left empty).
        self.form_came_back = False

    def _fetch(self, url: str, data: Optional[bytes] = None) -> Tuple[int, Optional[str], str]:
        req = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET")
        try:
            resp = self.opener.open(req, timeout=self.timeout)
        except urllib.error.HTTPError as e:  # 3xx (not followed) and 4xx/5xx arrive here
            resp = e
        body = resp.read().decode("utf-8", "replace")
        location = resp.headers.get("Location")
        return resp.status if hasattr(resp, "status") else resp.code, location, body

    def run(self, url: str, fill: Filler, redirect_url: Optional[str] = None, max_steps: int = 12) -> Optional[str]:
        """Loads ``url`` and keeps going: redirects, meta refreshes, each new form filled by ``fill(name)``.

        Returns the redirect URL as soon as a redirect points at ``redirect_url`` (or at any non-http scheme),
        or ``None`` when a page offers nothing more to do (its URL is then ``last_url``: on a second screen, the
        "done" page). Raises RuntimeError on an HTTP error status.
        """
        submitted = set()
        data: Optional[bytes] = None
        for _ in range(max_steps):
            status, location, body = self._fetch(url, data)
            self.log(f"{'POST' if data is not None else 'GET'} {_short(url)} -> {status}")
            data = None
            if location is not None and 300 <= status < 400:
                target = urllib.parse.urljoin(url, location)
                if (redirect_url and same_target(target, redirect_url)) or urllib.parse.urlsplit(target).scheme not in ("http", "https"):
                    self.log(f"redirect to {target} (not loaded: handed to the app)")
                    return target
                url = target
                continue
            if status >= 400:
                raise RuntimeError(f"HTTP {status} from {_short(url)}: {body[:200]}")
            page = _PageParser()
            page.feed(body)
            form = next((f for f in page.forms if _signature(f) not in submitted), None)
            if form is None:
                if page.refresh:
                    url = urllib.parse.urljoin(url, page.refresh)
                    continue
                self.last_url = url
                self.form_came_back = bool(page.forms)
                return None
            submitted.add(_signature(form))
            payload = urllib.parse.urlencode(_fill_form(form, fill)).encode()
            action = urllib.parse.urljoin(url, form.action or url)
            if form.method == "POST":
                url, data = action, payload
            else:
                url = action.split("?")[0] + "?" + payload.decode()
        raise RuntimeError(f"gave up after {max_steps} pages")


def _signature(form: _Form) -> Tuple[str, Tuple[str, ...]]:
    return form.action, tuple(sorted({f[0] for f in form.fields} | set(form.selects)))


def _fill_form(form: _Form, fill: Filler) -> List[Tuple[str, str]]:
    out: List[Tuple[str, str]] = []
    radios: Dict[str, List[Tuple[str, bool]]] = {}
    submit_used = False
    for name, kind, value, checked in form.fields:
        if kind == "radio":
            radios.setdefault(name, []).append((value, checked))
        elif kind == "checkbox":
            if checked:
                out.append((name, value or "on"))
        elif kind in ("submit", "button", "image"):
            if not submit_used:
                out.append((name, value))
                submit_used = True
        else:
            wanted = fill(name) if kind != "hidden" else None
            out.append((name, wanted if wanted is not None else value))
    for name, buttons in radios.items():
        wanted = fill(name)
        offered = [v for v, _ in buttons]
        choice = wanted if wanted is not None and wanted in offered else next((v for v, c in buttons if c), offered[0])
        out.append((name, choice))
    for name, options in form.selects.items():
        wanted = fill(name)
        out.append((name, wanted if wanted is not None and wanted in options else form.selected.get(name, "")))
    return out


def _short(url: str) -> str:
    """The URL without its query string (queries may carry codes and tokens)."""
    return url.split("?")[0]


def main(argv: Optional[List[str]] = None) -> int:
    """``browser.py URL [--redirect-url U] [--phone] [--field NAME=VALUE]…``: prints the redirect URL reached.

    A stand-in web view for scripts (Clients/shell/examples/login.sh's ``WEB_VIEW``): exit 0 with the URL on
    stdout, 1 if the pages never led to the redirect URL. With ``--phone`` it plays the other device of a second
    screen, whose pages end on a page of their own (the "done" page), not at the app's redirect URL: exit 0 with
    that page's URL.
    """
    import argparse
    import sys

    parser = argparse.ArgumentParser(description="Follow a login page up to the app's redirect URL.")
    parser.add_argument("url")
    parser.add_argument("--redirect-url", default="adobepass://ios.app")
    parser.add_argument("--field", action="append", default=[], help="NAME=VALUE to type into a form field")
    parser.add_argument("--phone", action="store_true",
                        help="the other device of a second screen: success is the last page (the done page)")
    args = parser.parse_args(argv)
    fields = dict(f.split("=", 1) for f in args.field)
    browser = Browser(log=lambda line: print(line, file=sys.stderr))
    reached = browser.run(args.url, fields.get, args.redirect_url)
    if reached is None:
        if args.phone:
            print(browser.last_url)
            return 0
        if browser.form_came_back:
            print(f"{_short(browser.last_url)} showed its form again after it was sent: the page refused what was "
                  "typed, or a field was left empty (--field NAME=VALUE types one; the emulator's pages take "
                  "username=demo password=demo)", file=sys.stderr)
        else:
            print(f"the pages ended on {_short(browser.last_url)} without reaching the redirect URL "
                  "(a second screen's done page? use --phone)", file=sys.stderr)
        return 1
    print(reached)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
