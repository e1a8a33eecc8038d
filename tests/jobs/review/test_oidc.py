"""Single sign-on end to end (issue 38): a real OpenID provider (panva/oidc-provider, installed from
tests/oidc/package-lock.json by `npm ci`, run by node on 127.0.0.1) and `tribunal review --users FILE
--oidc-issuer URL` as a subprocess, in Chromium: the sign-in button leads to the provider, whose own
sign-in and consent pages are filled in, and back to the review page signed in as the users file's
account with that e-mail; an identity with no account is refused. Authlib checks the ID token's
signature (the provider's keys), issuer, audience, nonce and expiry; nothing is mocked."""

from __future__ import annotations

import os
import queue
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from evalcore.results import review_trail
from jobs.review import accounts
from tests.browser import CHROMIUM, CHROMIUM_ARGS, needs_chromium
from tests.jobs.review.team_run import build_team_run, users_file
from tests.jobs.review.test_review import serving

OIDC = Path(__file__).resolve().parents[2] / "oidc"
NODE = shutil.which("node")
pytestmark = [needs_chromium, pytest.mark.browser,
              pytest.mark.skipif(NODE is None or not (OIDC / "node_modules" / "oidc-provider").is_dir(),
                                 reason="node and `npm ci` in tests/oidc (done by .ci/run) are needed")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def provider(client_id: str, secret: str, redirect: str) -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen([str(NODE), "provider.mjs", str(port), client_id, secret, redirect], cwd=OIDC,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    try:
        seen = []
        while True:
            line = lines.get(timeout=60)
            if line is None:
                raise AssertionError(f"the OpenID provider exited ({proc.wait()}):\n{''.join(seen)}")
            seen.append(line)
            if line.startswith("issuer "):
                yield line.split(" ", 1)[1].strip()
                break
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_reviewer_signs_in_through_a_real_openid_provider_and_an_unknown_identity_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from playwright.sync_api import expect, sync_playwright

    run = build_team_run(tmp_path)
    users = users_file(tmp_path)
    accounts.add(users, "ana-sso", "reviewer", None, email="ana@firm.example")
    port = _free_port()
    monkeypatch.setenv("TRIBUNAL_OIDC_SECRET", "a client secret for the test only")
    with provider("tribunal-review", os.environ["TRIBUNAL_OIDC_SECRET"],
                  f"http://127.0.0.1:{port}/auth/oidc/callback") as issuer, \
            serving(str(run), "--port", str(port), "--users", str(users), "--oidc-issuer", issuer,
                    "--oidc-client-id", "tribunal-review") as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            for login, signed_in in (("ana", True), ("mallory", False)):
                page = browser.new_context().new_page()
                page.set_default_timeout(60_000)
                page.goto(url)
                page.click("#sso")
                page.wait_for_url(f"{issuer}/**")
                page.fill('input[name="login"]', login)
                page.fill('input[name="password"]', "anything")
                page.click('button[type="submit"]')
                page.wait_for_selector('input[name="login"]', state="detached")  # the provider's consent page
                page.click('button[type="submit"]')
                if signed_in:
                    page.wait_for_selector("#account")
                    expect(page.locator("#account")).to_have_text("ana-sso")
                    assert page.url.startswith(url)
                else:
                    expect(page.locator("#message")).to_contain_text("mallory@firm.example has no enabled account")
                page.context.close()
        finally:
            browser.close()
    events = review_trail.read(str(run))
    assert any(e.kind == "sign_in" and e.actor == "ana-sso" and e.detail.get("via") == "oidc" for e in events)
    assert any(e.kind == "sign_in_failed" and e.actor == "mallory@firm.example" for e in events)
