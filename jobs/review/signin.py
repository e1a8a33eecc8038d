"""Signing in to a team's review page: with a password, or through the firm's OpenID provider.

Why apart: these are the only routes open without a session, so everything they accept is
checked here: the sign-in form's double-submit CSRF token and origin, the throttle before the
password is even checked, the same answer for an unknown name and a wrong password, and for
OpenID Connect Authlib's client (discovery from the issuer URL, state and nonce in a signed
short-lived cookie, PKCE, the ID token's signature, issuer, audience and expiry). An account
signed in by OpenID is the users file's account with that e-mail: the provider says who someone
is, the users file says what they may do. Every sign-in, failure and lock-out goes to the trail.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from jinja2 import Environment
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from jobs.review import accounts
from jobs.review.accounts import Account
from jobs.review.auth import LOGIN_COOKIE, SESSION_COOKIE, Access, foreign_write, safe_next
from jobs.review.state import ReviewState

if TYPE_CHECKING:
    from jobs.review.team import Team

PageFn = Callable[[Environment, str, Mapping[str, Any], int], HTMLResponse]
OIDC_COOKIE = "tribunal_oidc"


def signin_routes(env: Environment, state: ReviewState, team: Team, access: Access, hosts: Sequence[str],
                  page: PageFn) -> list[Route]:
    """The sign-in, sign-out and OpenID Connect routes of a team's page."""
    sessions = access.sessions
    assert sessions is not None
    oauth_client: Any = None
    if access.oidc is not None:
        from authlib.integrations.starlette_client import OAuth

        oauth = OAuth()
        oauth.register("sso", client_id=access.oidc.client_id, client_secret=access.oidc.secret(),
                       server_metadata_url=access.oidc.issuer.rstrip("/") + "/.well-known/openid-configuration",
                       client_kwargs={"scope": "openid email profile", "code_challenge_method": "S256"})
        oauth_client = oauth.create_client("sso")

    def login_page(request: Request, message: str = "", status: int = 200) -> Response:
        nonce = secrets.token_urlsafe(24)
        response = page(env, "login.html.j2", {
            "run_id": state.data.run_id, "token": sessions.login_token(nonce), "message": message,
            "next": safe_next(request.query_params.get("next")), "oidc": access.oidc, "insecure": access.insecure,
        }, status)
        response.set_cookie(LOGIN_COOKIE, nonce, max_age=3600, httponly=True, samesite="strict",
                            secure=sessions.secure, path="/login")
        return response

    def signed_in(account: Account, via: str, target: str) -> Response:
        response = RedirectResponse(safe_next(target), status_code=303)
        response.set_cookie(SESSION_COOKIE, sessions.issue(account, via), **sessions.cookie_options())
        response.delete_cookie(LOGIN_COOKIE, path="/login")
        return response

    async def login(request: Request) -> Response:
        if request.method == "GET":
            return login_page(request)
        # a form posted under `Referrer-Policy: no-referrer` says `Origin: null`; the browser's
        # Sec-Fetch-Site and the double-submit token below still tell a foreign form apart
        headers = {k: v for k, v in request.headers.items() if not (k == "origin" and v == "null")}
        refused = foreign_write(headers, hosts)
        if refused is not None:
            return login_page(request, refused.replace("decision refused", "sign-in refused"), 403)
        form = await request.form()
        name, password, token = (str(form.get(k, "")) for k in ("name", "password", "csrf"))
        target = str(form.get("next", "/"))
        if not sessions.login_token_ok(token, request.cookies.get(LOGIN_COOKIE)):
            return login_page(request, "the sign-in form expired or came from elsewhere: sign in again", 403)
        client = request.client.host if request.client else "?"
        keys = (f"name:{name.strip().lower()}", f"addr:{client}")
        wait, locked = access.throttle.wait(*keys)
        if wait > 0:
            what = (f"too many failed sign-ins: locked for {int(wait // 60) + 1} more minute(s)" if locked
                    else f"too many failed sign-ins: wait {int(wait) + 1} second(s) before trying again")
            await run_in_threadpool(team.record, "sign_in_locked" if locked else "sign_in_failed", name or "?",
                                    detail={"address": client, "refused": "throttled"})
            response = login_page(request, what, 429)
            response.headers["Retry-After"] = str(int(wait) + 1)
            return response
        account = await run_in_threadpool(accounts.verify, sessions.users(), name.strip(), password)
        if account is None:
            now_locked = access.throttle.failed(*keys)
            await run_in_threadpool(team.record, "sign_in_locked" if now_locked else "sign_in_failed", name or "?",
                                    detail={"address": client})
            return login_page(request, "wrong account name or password", 401)
        access.throttle.succeeded(*keys)
        await run_in_threadpool(team.record, "sign_in", account.name, detail={"address": client, "via": "password"})
        return signed_in(account, "password", target)

    async def logout(request: Request) -> Response:
        viewer = request.scope["state"]["viewer"]
        await run_in_threadpool(team.record, "sign_out", str(viewer.name))
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(SESSION_COOKIE, path="/")
        return response

    async def oidc_login(request: Request) -> Response:
        if oauth_client is None:
            return login_page(request, "single sign-on is not configured on this server", 404)
        request.session["next"] = safe_next(request.query_params.get("next"))
        redirect = str(request.url_for("oidc_callback"))
        response: Response = await oauth_client.authorize_redirect(request, redirect)
        return response

    async def oidc_callback(request: Request) -> Response:
        if oauth_client is None:
            return login_page(request, "single sign-on is not configured on this server", 404)
        from authlib.integrations.starlette_client import OAuthError

        client = request.client.host if request.client else "?"
        try:
            token = await oauth_client.authorize_access_token(request)
        except OAuthError as exc:
            await run_in_threadpool(team.record, "sign_in_failed", "?", detail={"address": client, "via": "oidc",
                                                                                "error": exc.error or str(exc)})
            return login_page(request, f"single sign-on failed ({exc.error or exc}): try again", 401)
        claims = token.get("userinfo") or {}
        email = str(claims.get("email") or claims.get("sub") or "")
        account = sessions.users().by_email(email) if email else None
        if account is None or account.disabled:
            await run_in_threadpool(team.record, "sign_in_failed", email or "?",
                                    detail={"address": client, "via": "oidc", "refused": "no enabled account"})
            return login_page(request, f"{email or 'this identity'} has no enabled account on this review: an admin "
                                       f"adds one with `tribunal review-users add NAME --role reviewer --email {email}`",
                              403)
        await run_in_threadpool(team.record, "sign_in", account.name, detail={"address": client, "via": "oidc",
                                                                              "email": email})
        return signed_in(account, "oidc", str(request.session.pop("next", "/")))

    return [
        Route("/login", login, methods=["GET", "POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/auth/oidc/login", oidc_login),
        Route("/auth/oidc/callback", oidc_callback, name="oidc_callback"),
    ]
