"""Who is asking: sessions, CSRF, sign-in throttling and the serving rules of `tribunal review`.

Why none of it hand-rolled: a session is a cookie signed and dated by `itsdangerous` (the library
Starlette's own sessions use), passwords are Argon2id hashes (`jobs.review.accounts`), single
sign-on is Authlib's OpenID Connect client (discovery, state, nonce, PKCE, ID-token checks), TLS is
uvicorn's own. What is ours is the policy:

* **two modes.** With a users file the page is a team's (`team`): every route but the sign-in pages
  and ``/healthz`` needs a session, and the reviewer recorded is the signed-in account. Without
  one, on a loopback address only, it is the single-user page it always was (`local`);
* **sessions** are ``HttpOnly``, ``SameSite=Lax`` (the OpenID provider's redirect back is a
  top-level navigation from another site), ``Secure`` under TLS, and expire after
  `SESSION_SECONDS` (the signature's date is checked on every request, not only the cookie's
  Max-Age); an account disabled since is signed out at its next request;
* **CSRF**: every write (any method but GET/HEAD) carries the session's token in
  ``X-CSRF-Token`` (or the form field ``csrf``), compared in constant time; without it, 403. The
  sign-in form, before any session, is protected by a double-submit token bound to a cookie;
* **throttling**: `LoginThrottle` slows repeated failures per account name and per client
  address, then locks them for `LOCK_SECONDS`;
* **serving**: `serving_problem` refuses a non-loopback address without TLS or without accounts
  unless ``--insecure`` is given, and then every page says so.
"""

from __future__ import annotations

import dataclasses
import hmac
import ipaddress
import os
import secrets
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer

from evalcore.errors import ConfigError
from jobs.review import accounts
from jobs.review.accounts import Account, Role, UsersFile

SESSION_COOKIE = "tribunal_session"
LOGIN_COOKIE = "tribunal_login"
SESSION_SECONDS = 8 * 3600
"""A working day: a session signed longer ago is refused and the reviewer signs in again."""
SLOW_AFTER = 3
"""Failed sign-ins (per account name, per client address) before each next try must wait."""
SLOW_BASE_SECONDS = 2.0
"""The first wait; it doubles with each further failure."""
LOCK_AFTER = 6
"""Failed sign-ins within `WINDOW_SECONDS` that lock the name or address for `LOCK_SECONDS`."""
LOCK_SECONDS = 15 * 60
WINDOW_SECONDS = 15 * 60
CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = ("GET", "HEAD")
PUBLIC_PATHS = ("/login", "/healthz", "/auth/oidc/login", "/auth/oidc/callback")


def is_loopback(host: str) -> bool:
    """Whether an address or name only this machine reaches (127.0.0.0/8, ::1, localhost)."""
    name = host.strip("[]")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def serving_problem(host: str, *, tls: bool, accounts_on: bool, insecure: bool) -> str | None:
    """Why serving on `host` this way is refused (the message says how to fix it), or None."""
    if is_loopback(host) or insecure:
        return None
    missing = [what for what, ok in (("TLS", tls), ("accounts", accounts_on)) if not ok]
    if not missing:
        return None
    fixes = []
    if not tls:
        fixes.append("Give a certificate and key (--tls-cert FILE --tls-key FILE)")
    if not accounts_on:
        fixes.append(("add" if fixes else "Add") + " accounts (`tribunal review-users add NAME --role lead`) and pass --users FILE "
                     "(or configure --oidc-issuer)")
    return (f"refusing to serve on {host} without {' and '.join(missing)}: anyone who reaches the port could read "
            f"the run and record decisions. {'; '.join(fixes)}; or keep --host 127.0.0.1; or, on a "
            "network you trust entirely, add --insecure (every page then says it is insecure)")


@dataclass
class LoginThrottle:
    """Failed sign-ins per key (an account name, a client address): slowed, then locked.

    In memory, per server: a second server keeps its own count (the trail records every failure
    on the run, for the record). `clock` is injectable so the rule is tested without waiting."""

    clock: Callable[[], float] = time.monotonic
    _fails: dict[str, list[float]] = field(default_factory=dict)
    _locked: dict[str, float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def wait(self, *keys: str) -> tuple[float, bool]:
        """(seconds before the next try is accepted, locked?) for the most restricted of `keys`."""
        now = self.clock()
        worst, locked = 0.0, False
        with self._lock:
            for key in keys:
                until = self._locked.get(key)
                if until is not None and until > now:
                    worst, locked = max(worst, until - now), True
                    continue
                fails = [t for t in self._fails.get(key, []) if now - t < WINDOW_SECONDS]
                if len(fails) >= SLOW_AFTER:
                    ready = fails[-1] + SLOW_BASE_SECONDS * 2 ** (len(fails) - SLOW_AFTER)
                    worst = max(worst, ready - now)
        return max(worst, 0.0), locked

    def failed(self, *keys: str) -> bool:
        """Count one failure on each key; True when one of them is now locked."""
        now = self.clock()
        locked = False
        with self._lock:
            for key in keys:
                fails = [t for t in self._fails.get(key, []) if now - t < WINDOW_SECONDS] + [now]
                self._fails[key] = fails
                if len(fails) >= LOCK_AFTER:
                    self._locked[key] = now + LOCK_SECONDS
                    self._fails[key] = []
                    locked = True
        return locked

    def succeeded(self, *keys: str) -> None:
        with self._lock:
            for key in keys:
                self._fails.pop(key, None)


@dataclass(frozen=True)
class Session:
    """A signed-in account's session as its cookie carries it."""

    name: str
    csrf: str
    via: str
    """``password`` or ``oidc``."""


class Sessions:
    """Signing and reading session cookies; the users file re-read when it changes."""

    def __init__(self, users_file: Path, secret: str | None = None, *, secure: bool = False,
                 max_age: int = SESSION_SECONDS) -> None:
        self.users_file = users_file
        self.secret = secret or secrets.token_urlsafe(32)
        self.secure = secure
        self.max_age = max_age
        self._signer = URLSafeTimedSerializer(self.secret, salt="tribunal-review-session")
        self._login = URLSafeTimedSerializer(self.secret, salt="tribunal-review-login")
        self._users: tuple[float, UsersFile] | None = None
        self._lock = threading.Lock()

    def users(self) -> UsersFile:
        """The users file as it is now (re-read when its modification time changes)."""
        try:
            mtime = self.users_file.stat().st_mtime
        except OSError:
            mtime = -1.0
        with self._lock:
            if self._users is None or self._users[0] != mtime:
                self._users = (mtime, accounts.load(self.users_file))
            return self._users[1]

    def issue(self, account: Account, via: str) -> str:
        return self._signer.dumps({"u": account.name, "c": secrets.token_urlsafe(24), "v": via})

    def read(self, cookie: str | None) -> tuple[Session, Account] | None:
        """The session and its (enabled) account, or None: unsigned, expired, or the account gone."""
        if not cookie:
            return None
        try:
            raw: Any = self._signer.loads(cookie, max_age=self.max_age)
        except (BadSignature, SignatureExpired):
            return None
        if not isinstance(raw, dict) or not isinstance(raw.get("u"), str) or not isinstance(raw.get("c"), str):
            return None
        account = self.users().get(raw["u"])
        if account is None or account.disabled:
            return None
        return Session(name=raw["u"], csrf=raw["c"], via=str(raw.get("v", "password"))), account

    def cookie_options(self) -> dict[str, Any]:
        return {"max_age": self.max_age, "httponly": True, "samesite": "lax", "secure": self.secure, "path": "/"}

    def login_token(self, nonce: str) -> str:
        """The sign-in form's CSRF token, bound to the `LOGIN_COOKIE` nonce (double submit, signed)."""
        return self._login.dumps(nonce)

    def login_token_ok(self, token: str, nonce: str | None) -> bool:
        if not nonce:
            return False
        try:
            value = self._login.loads(token, max_age=3600)
        except (BadSignature, SignatureExpired):
            return False
        return isinstance(value, str) and hmac.compare_digest(value, nonce)


def csrf_ok(given: str | None, expected: str) -> bool:
    return bool(given) and hmac.compare_digest(str(given), expected)


def safe_next(value: str | None) -> str:
    """Where to go after signing in: a path of this site only (never ``//host`` or a URL)."""
    if not value or not value.startswith("/") or value.startswith("//") or "\\" in value:
        return "/"
    return value


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")


def hostname(host: str) -> str:
    """A Host header or an origin's authority without its port (`[::1]:8000` -> `[::1]`)."""
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def foreign_write(headers: Mapping[str, str], hosts: Sequence[str]) -> str | None:
    """Why a write is refused as coming from another site, or None.

    Why on every write, whatever address the server listens on: a page of another site can reach
    this server through the browser (DNS rebinding: its own name resolved to this machine), and
    then sends its own name as Host and Origin. So the Host must be one of the allowed names, and an
    Origin, when the browser sends one, must be this very host (and a browser's `Sec-Fetch-Site`
    must not say cross-site)."""
    host = headers.get("host", "")
    if hostname(host).lower() not in {h.lower() for h in hosts}:
        return (f"decision refused: host {host!r} is not one this server answers to (allowed: {', '.join(hosts)}; "
                "tribunal review --allowed-host NAME adds one)")
    origin = headers.get("origin")
    if origin is not None and origin.lower() not in {f"http://{host}".lower(), f"https://{host}".lower()}:
        return f"cross-origin decision refused (from {origin})"
    if headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        return f"cross-site decision refused (Sec-Fetch-Site: {headers.get('sec-fetch-site')})"
    return None


@dataclass(frozen=True)
class OidcSettings:
    """An OpenID provider: its issuer URL (discovery at /.well-known/openid-configuration), this
    application's client id, and the name of the environment variable that holds its secret."""

    issuer: str
    client_id: str
    secret_env: str
    label: str = "single sign-on"

    def secret(self) -> str:
        value = os.environ.get(self.secret_env)
        if not value:
            raise ConfigError(f"--oidc-secret-env {self.secret_env}: the variable is not set; export the client "
                              "secret your identity provider gave for this application")
        return value


@dataclasses.dataclass(frozen=True)
class Viewer:
    """Who is asking: a signed-in account, or the single user of the local page."""

    name: str | None
    role: Role
    csrf: str
    local: bool

    @property
    def lead(self) -> bool:
        return self.local or self.role in ("lead", "admin")


@dataclasses.dataclass
class Access:
    """How the application admits requests (`jobs.review.auth`)."""

    sessions: Sessions | None = None
    """None: the single-user page (loopback only, no accounts)."""
    throttle: LoginThrottle = dataclasses.field(default_factory=LoginThrottle)
    insecure: str | None = None
    """Said on every page when serving was allowed by --insecure."""
    oidc: OidcSettings | None = None
    local_csrf: str = dataclasses.field(default_factory=lambda: secrets.token_urlsafe(24))
    """The single-user page's CSRF token (embedded in its pages; another site cannot read them)."""

    @property
    def team(self) -> bool:
        return self.sessions is not None
