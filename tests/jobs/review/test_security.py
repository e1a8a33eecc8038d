"""A team's review page is safe to serve to the publisher's experts (issue 38): sign-in required on
every route, CSRF on every write, signed expiring HttpOnly cookies, the recorded reviewer the
signed-in account, a reviewer confined to their own assignments, throttled and locked sign-ins,
and no serving beyond the loopback without TLS and accounts. The application is the real one
(`create_app` over a built run, `tests.jobs.review.team_run`), driven through Starlette's test
client (HTTP in process); the refusal to serve through the real command."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.routing import Route
from starlette.testclient import TestClient
from typer.testing import CliRunner

from evalcore.results import adjudications as adj
from evalcore.results import review_trail
from jobs.cli.app import app as cli
from jobs.review import accounts
from jobs.review.app import create_app
from jobs.review.auth import (
    LOCK_AFTER,
    LOCK_SECONDS,
    LOOPBACK_HOSTS,
    SESSION_COOKIE,
    SLOW_AFTER,
    Access,
    LoginThrottle,
    Sessions,
    serving_problem,
)
from jobs.review.state import ReviewState
from tests.jobs.review.team_run import PASSWORD, build_team_run, users_file

BASE = "http://127.0.0.1"


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, ReviewState]:
    root = tmp_path_factory.mktemp("team-security")
    run = build_team_run(root)
    return run, users_file(root), ReviewState(str(run))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _client(team: tuple[Path, Path, ReviewState], *, secure: bool = False, throttle: LoginThrottle | None = None,
            max_age: int = 3600) -> TestClient:
    run, users, state = team
    access = Access(sessions=Sessions(users, "a test secret", secure=secure, max_age=max_age),
                    throttle=throttle or LoginThrottle())
    # under TLS the browser sends Secure cookies back over https only: so does the test client
    return TestClient(create_app(state, allowed_hosts=LOOPBACK_HOSTS, access=access),
                      base_url=BASE.replace("http:", "https:") if secure else BASE, follow_redirects=False)


def _sign_in(client: TestClient, name: str, password: str = PASSWORD) -> Any:
    page = client.get("/login")
    token = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert token is not None
    return client.post("/login", data={"name": name, "password": password, "csrf": token.group(1), "next": "/"})


def _csrf(client: TestClient) -> str:
    token: str = client.get("/api/queue").json()["csrf"]
    return token


@pytest.fixture
def fresh(team: tuple[Path, Path, ReviewState], tmp_path: Path) -> Iterator[tuple[Path, Path, ReviewState]]:
    """The team run with an empty decisions, campaigns and trail folder (a copy per test)."""
    import shutil

    run, users, _ = team
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    yield copy, users, ReviewState(str(copy))


def test_every_route_without_a_session_answers_401_or_the_sign_in_page(team: tuple[Path, Path, ReviewState]) -> None:
    client = _client(team)
    routes = [r for r in client.app.routes if isinstance(r, Route)]  # type: ignore[attr-defined]
    assert {r.path for r in routes} >= {"/", "/start", "/item/{n:int}", "/api/queue", "/api/decisions", "/lead",
                                        "/api/lead", "/api/campaigns", "/logout"}
    for route in routes:
        if route.path in ("/login", "/healthz", "/auth/oidc/login", "/auth/oidc/callback"):
            continue
        path = route.path.replace("{n:int}", "0")
        for method in sorted(route.methods or {"GET"}):
            if method == "HEAD":
                continue
            got = client.request(method, path, json={} if method == "POST" else None)
            if method == "GET" and not path.startswith("/api/"):
                assert got.status_code == 303 and got.headers["location"].startswith("/login?next="), (method, path)
            else:
                assert got.status_code == 401, (method, path, got.status_code)
    forged = client.get("/api/queue", cookies={SESSION_COOKIE: "eyJ1IjoibGVlIn0.forged.signature"})
    assert forged.status_code == 401


def test_the_session_cookie_is_signed_httponly_samesite_expiring_and_secure_under_tls(
    team: tuple[Path, Path, ReviewState],
) -> None:
    for secure in (False, True):
        client = _client(team, secure=secure)
        got = _sign_in(client, "ana")
        assert got.status_code == 303 and got.headers["location"] == "/"
        cookie = next(c for c in got.headers.get_list("set-cookie") if c.startswith(SESSION_COOKIE + "="))
        flags = {f.strip().split("=")[0].lower() for f in cookie.split(";")[1:]}
        assert {"httponly", "max-age", "path", "samesite"} <= flags
        assert "samesite=lax" in cookie.lower()
        assert ("secure" in flags) is secure
    expired = _client(team, max_age=-1)
    _sign_in(expired, "ana")
    assert expired.get("/api/queue").status_code == 401  # the signature's date is checked, not only Max-Age


def test_a_write_without_the_csrf_token_is_refused_with_403(fresh: tuple[Path, Path, ReviewState]) -> None:
    run, _, state = fresh
    client = _client(fresh)
    _sign_in(client, "lee")
    item = state.queue[0]
    body = {"item": item.n, "key": list(item.key), "decision": "upheld", "reason": "checked"}
    assert client.post("/api/decisions", json=body).status_code == 403
    assert client.post("/api/decisions", json=body, headers={"X-CSRF-Token": "guess"}).status_code == 403
    campaign = {"name": "c", "sections": ["material"], "k": 1, "reviewers": ["ana"]}
    assert client.post("/api/campaigns", json=campaign).status_code == 403
    assert client.post("/logout").status_code == 403
    assert not (run / "adjudications").exists()
    ok = client.post("/api/decisions", json=body, headers={"X-CSRF-Token": _csrf(client)})
    assert ok.status_code == 201, ok.text
    [d] = adj.load(str(run)).decisions
    assert d.reviewer == "lee"  # the signed-in account, never a typed name


def test_a_reviewer_cannot_record_under_another_account_read_anothers_assignments_or_resolve(
    fresh: tuple[Path, Path, ReviewState],
) -> None:
    run, _, state = fresh
    lead = _client(fresh)
    _sign_in(lead, "lee")
    started = lead.post("/api/campaigns", headers={"X-CSRF-Token": _csrf(lead)},
                        json={"name": "material", "sections": ["material"], "k": 1, "reviewers": ["ana", "ben"]})
    assert started.status_code == 201, started.text
    assert started.json()["loads"] == {"ana": 2, "ben": 2}
    ana = _client(fresh)
    _sign_in(ana, "ana")
    mine = ana.get("/api/queue").json()["items"]
    assert len(mine) == 2
    ben_items = [i for i in state.queue if i.section == "material" and i.n not in {m["n"] for m in mine}]
    assert len(ben_items) == 2
    other = ben_items[0]
    assert ana.get(f"/item/{other.n}").status_code == 403
    headers = {"X-CSRF-Token": _csrf(ana)}
    body = {"item": other.n, "decision": "overturned", "reason": "not in the memo"}
    assert ana.post("/api/decisions", json=body, headers=headers).status_code == 403
    own = {"item": mine[0]["n"], "key": mine[0]["key"], "decision": "overturned", "reason": "not in the memo"}
    refused = ana.post("/api/decisions", json={**own, "reviewer": "ben"}, headers=headers)
    assert refused.status_code == 403 and "signed in as ana" in refused.json()["error"]
    assert ana.post("/api/decisions", json={**own, "resolve": True}, headers=headers).status_code == 403
    assert ana.get("/lead").status_code == 403 and ana.get("/api/lead").status_code == 403
    assert ana.post("/api/campaigns", json={"name": "x", "sections": ["split"], "reviewers": ["ana"]},
                    headers=headers).status_code == 403
    assert not (run / "adjudications").exists()
    ok = ana.post("/api/decisions", json=own, headers=headers)
    assert ok.status_code == 201, ok.text
    [d] = adj.load(str(run)).decisions
    assert (d.reviewer, d.campaign_id, d.required) == ("ana", started.json()["campaign"]["campaign_id"], 1)
    events = review_trail.read(str(run))
    campaign_id = started.json()["campaign"]["campaign_id"]
    assert {("sign_in", "lee"), ("sign_in", "ana"), ("campaign", "lee"), ("decision", "ana")} <= {
        (e.kind, e.actor) for e in events}
    assert sorted(str(e.detail["reviewer"]) for e in events if e.kind == "assignment" and e.campaign_id == campaign_id) \
        == ["ana", "ben"]
    out = run.parent / "trail.jsonl"  # `tribunal adjudicate --export`: the trail with each decision's call
    exported = CliRunner().invoke(cli, ["adjudicate", str(run), "--export", str(out)], env={"COLUMNS": "300"})
    assert exported.exit_code == 0, exported.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {(r["kind"], r["actor"], r["decision"]) for r in rows} >= {("decision", "ana", "overturned"),
                                                                      ("campaign", "lee", None)}


def test_repeated_failed_sign_ins_are_slowed_then_locked_even_for_the_right_password(
    team: tuple[Path, Path, ReviewState],
) -> None:
    clock = Clock()
    client = _client(team, throttle=LoginThrottle(clock=clock))
    for _ in range(SLOW_AFTER):
        assert _sign_in(client, "ben", "wrong password!!").status_code == 401
    slowed = _sign_in(client, "ben")
    assert slowed.status_code == 429 and int(slowed.headers["retry-after"]) >= 1
    for _ in range(LOCK_AFTER - SLOW_AFTER):
        clock.now += 3600 / 4 / LOCK_AFTER  # wait out each slow-down, within the 15-minute window
        assert _sign_in(client, "ben", "wrong password!!").status_code == 401
    clock.now += 60
    locked = _sign_in(client, "ben")  # the right password, but locked
    assert locked.status_code == 429 and "locked" in locked.text
    clock.now += LOCK_SECONDS + 1
    assert _sign_in(client, "ben").status_code == 303


def test_a_disabled_accounts_session_ends_at_its_next_request(team: tuple[Path, Path, ReviewState]) -> None:
    _, users, _ = team
    accounts.add(users, "tmp-reviewer", "reviewer", PASSWORD)
    client = _client(team)
    _sign_in(client, "tmp-reviewer")
    assert client.get("/api/queue").status_code == 200
    accounts.disable(users, "tmp-reviewer")
    assert client.get("/api/queue").status_code == 401


def test_a_non_loopback_host_without_tls_or_accounts_is_refused_saying_how_to_fix_it(
    team: tuple[Path, Path, ReviewState], tmp_path: Path,
) -> None:
    assert serving_problem("127.0.0.1", tls=False, accounts_on=False, insecure=False) is None
    assert serving_problem("10.0.0.5", tls=True, accounts_on=True, insecure=False) is None
    assert serving_problem("10.0.0.5", tls=False, accounts_on=False, insecure=True) is None
    run, users, _ = team
    runner = CliRunner()
    bare = runner.invoke(cli, ["review", str(run), "--host", "0.0.0.0"], env={"COLUMNS": "300"})
    assert bare.exit_code == 1
    assert "refusing to serve on 0.0.0.0 without TLS and accounts" in bare.output
    assert "--tls-cert FILE --tls-key FILE" in bare.output and "tribunal review-users add" in bare.output
    no_tls = runner.invoke(cli, ["review", str(run), "--host", "0.0.0.0", "--users", str(users)], env={"COLUMNS": "300"})
    assert no_tls.exit_code == 1 and "without TLS:" in no_tls.output
    inside = run / "users.json"
    accounts.add(inside, "x", "lead", PASSWORD)
    refused = runner.invoke(cli, ["review", str(run), "--users", str(inside)], env={"COLUMNS": "300"})
    assert refused.exit_code == 1 and "inside the run folder" in refused.output
    inside.unlink()


def test_the_users_file_is_0600_keeps_argon2_hashes_and_review_users_manages_it(tmp_path: Path) -> None:
    path = tmp_path / "conf" / "users.json"
    runner = CliRunner()
    env = {"TRIBUNAL_REVIEW_PASSWORD": PASSWORD, "COLUMNS": "300"}
    assert runner.invoke(cli, ["review-users", "add", "lee", "--role", "lead", "--users", str(path)], env=env).exit_code == 0
    assert runner.invoke(cli, ["review-users", "add", "ana", "--users", str(path)], env=env).exit_code == 0
    assert path.stat().st_mode & 0o777 == 0o600
    text = path.read_text()
    assert PASSWORD not in text and "$argon2id$" in text
    listed = runner.invoke(cli, ["review-users", "list", "--users", str(path)], env=env)
    assert listed.exit_code == 0 and "lee" in listed.output and "lead" in listed.output and "enabled" in listed.output
    assert runner.invoke(cli, ["review-users", "disable", "ana", "--users", str(path)], env=env).exit_code == 0
    assert accounts.verify(accounts.load(path), "ana", PASSWORD) is None
    assert accounts.verify(accounts.load(path), "lee", PASSWORD) is not None
    short = runner.invoke(cli, ["review-users", "add", "bo", "--users", str(path)],
                          env={**env, "TRIBUNAL_REVIEW_PASSWORD": "short"})
    assert short.exit_code == 1 and "at least 12" in short.output
    path.chmod(0o644)
    with pytest.raises(Exception, match="chmod 600"):
        accounts.load(path)


def _self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key (PEM), made with `cryptography`."""
    import datetime as dt
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "review.crt", folder / "review.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def test_given_a_certificate_and_key_the_page_is_served_over_tls_with_secure_cookies(
    team: tuple[Path, Path, ReviewState], tmp_path: Path,
) -> None:
    import ssl

    import httpx

    from tests.jobs.review.test_review import serving

    run, users, _ = team
    cert, key = _self_signed(tmp_path)
    trust = ssl.create_default_context(cafile=str(cert))
    with serving(str(run), "--users", str(users), "--tls-cert", str(cert), "--tls-key", str(key)) as url:
        assert url.startswith("https://")
        with httpx.Client(base_url=url, verify=trust, follow_redirects=False) as client:
            page = client.get("/login")
            token = re.search(r'name="csrf" value="([^"]+)"', page.text)
            assert token is not None
            got = client.post("/login", data={"name": "ana", "password": PASSWORD, "csrf": token.group(1), "next": "/"},
                              headers={"Origin": url.rstrip("/")})
            assert got.status_code == 303, got.text
            cookie = next(c for c in got.headers.get_list("set-cookie") if c.startswith(SESSION_COOKIE + "="))
            assert "secure" in cookie.lower() and "httponly" in cookie.lower()
            assert client.get("/api/queue").status_code == 200
        with pytest.raises(httpx.RemoteProtocolError):
            httpx.get(url.replace("https:", "http:") + "healthz", timeout=10)  # no plain HTTP on the TLS port


def test_hide_vendors_names_no_judge_and_an_item_a_reviewer_opened_is_reserved_from_a_second_lead(
    fresh: tuple[Path, Path, ReviewState],
) -> None:
    run, _, state = fresh
    lee = _client(fresh)
    _sign_in(lee, "lee")
    started = lee.post("/api/campaigns", headers={"X-CSRF-Token": _csrf(lee)},
                       json={"name": "split", "sections": ["split"], "k": 1, "reviewers": ["ana"], "hide_vendors": True})
    assert started.status_code == 201, started.text
    split = next(i for i in state.queue if i.section == "split")
    ana = _client(fresh)
    _sign_in(ana, "ana")
    page = ana.get(f"/item/{split.n}")
    assert page.status_code == 200
    for name in ("openai", "xai", "anthropic", "gpt-6-sol", "grok-4.7", "claude-opus-5-5", split.system):
        assert name not in page.text, name
    assert "judge 1" in page.text and "judge 3" in page.text
    assert "openai" in lee.get(f"/item/{split.n}").text  # the lead sees everything
    root = _client(fresh)
    _sign_in(root, "root")  # an admin, not assigned: a second lead
    body = {"item": split.n, "decision": "pass", "reason": "the memo meets it"}
    held = root.post("/api/decisions", json=body, headers={"X-CSRF-Token": _csrf(root)})
    assert held.status_code == 409 and "reserved by ana" in held.json()["error"]
    assert ana.post("/api/decisions", json=body, headers={"X-CSRF-Token": _csrf(ana)}).status_code == 201
    assert root.post("/api/decisions", json=body, headers={"X-CSRF-Token": _csrf(root)}).status_code == 201
    assert [d.reviewer for d in sorted(adj.load(str(run)).decisions, key=adj.Adjudication.order)] == ["ana", "root"]
