"""`tribunal review RUN`: the local web application in which experts decide flags and verdicts.

Starlette (routes, requests) served by uvicorn; pages are Jinja2 templates shipped in
``jobs/review/templates/`` with their CSS and script inline: no CDN, no external URL, works
offline (the Content-Security-Policy forbids loading anything from elsewhere, and runs only the
page's own script, by nonce). Routes:

* ``GET /`` — the queue (filters, progress, every item and its decision in force);
* ``GET /start`` — the first undecided item that passes the filters;
* ``GET /item/<n>`` — one item: the claim in its deliverable, the explanations, the cited
  evidence on its page, each judge's verdict and reasoning, what each decision would change,
  the decision in force and its history; keyboard-first (the page lists the keys);
* ``POST /api/decisions`` — one decision as JSON, recorded with `adjudications.record`;
* ``GET /api/queue`` — the queue and the decisions in force as JSON.

Every read and write goes through `evalcore.storage.fs`, so an ``s3://`` run works the same.
Several reviewers at once are safe by construction: each decision is a new object, created only
if its name is new, and every page re-reads what the others decided (`DecisionLog.refresh`).

Two modes (`jobs.review.auth.Access`): the single-user page on 127.0.0.1 (no set-up; the name is
typed), and a team's page with a users file, where `AuthMiddleware` admits only signed-in
accounts, every write carries the CSRF token, a reviewer sees only their assignments (blind by
default: no system name in the page or its JSON) and a lead sees everything
(`jobs.review.team`, `jobs.review.lead`, `jobs.review.signin`).

Why one module over 500 lines: the page routes share one closure over the state, the access
rules and the template environment, and what each route may show a viewer is decided next to
the route itself; the sign-in, lead and team rules live in their own modules.
"""

from __future__ import annotations

import dataclasses
import re
import secrets
import socket
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from pydantic import BaseModel, ConfigDict, ValidationError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from evalcore.errors import TribunalError
from evalcore.grading import scoring
from evalcore.results.adjudications import MAX_REASON_CHARS, Adjudication, AdjudicationLoad, Decision
from evalcore.storage import fs
from jobs.review.auth import (
    CSRF_HEADER,
    LOOPBACK_HOSTS,
    PUBLIC_PATHS,
    SAFE_METHODS,
    SESSION_COOKIE,
    Access,
    Viewer,
    csrf_ok,
    foreign_write,
    hostname,
)
from jobs.review.citations import cite, quoted_parts
from jobs.review.context import find_document, mark, page_text
from jobs.review.decisions import history
from jobs.review.lead import lead_routes
from jobs.review.queue import SECTION_LABELS, QueueItem
from jobs.review.signin import OIDC_COOKIE, signin_routes
from jobs.review.state import ReviewState, choices
from jobs.review.team import Team, blinded, item_token

TEMPLATES = Path(__file__).with_name("templates")
MAX_DELIVERABLE_CHARS = 60_000
"""A deliverable shown whole (criterion items) is cut after this many characters (the page says so)."""
MAX_LISTED = 1000
"""Items listed on the queue page (filters narrow it; the item pages reach every item)."""
FILTERS = ("system", "task", "category")
MAX_BODY_BYTES = 16 * MAX_REASON_CHARS + 8192
"""The largest decision a POST may carry (a reason of `MAX_REASON_CHARS` characters, each escaped in
JSON at its widest): a larger body is refused before it is read."""


# --------------------------------------------------------------------------------------------
# Page data
# --------------------------------------------------------------------------------------------


def _filters(request: Request) -> dict[str, str]:
    return {name: request.query_params.get(name, "").strip() for name in FILTERS}


def _qs(filters: Mapping[str, str]) -> str:
    kept = {k: v for k, v in filters.items() if v}
    return ("?" + urlencode(kept)) if kept else ""


def _filtered(state: ReviewState, filters: Mapping[str, str]) -> list[QueueItem]:
    return [i for i in state.queue if i.matches(filters.get("system"), filters.get("task"), filters.get("category"))]


def _decision_json(d: Adjudication | None) -> dict[str, Any] | None:
    return None if d is None else d.model_dump(mode="json")


def effective_materiality(flag: Mapping[str, Any], in_force: Adjudication | None) -> str | None:
    """How the flag counts now (material, minor or not at all), the decision in force applied."""
    raw = scoring.FlagOutcome(str(flag["status"]), flag["materiality"])
    outcome = scoring.adjudicated_flag(raw, in_force.decision if in_force else None,  # type: ignore[arg-type]
                                       in_force.materiality if in_force else None)
    return scoring.counted_materiality(outcome.status, outcome.materiality)


def _verdicts_for(rows: list[dict[str, Any]], criterion_id: str | None) -> list[dict[str, Any]]:
    return [r for r in rows if r["criterion_id"] == criterion_id]


@dataclasses.dataclass(frozen=True)
class ItemView:
    """How much of an item a viewer may see (a blind campaign's reviewer sees less)."""

    blind: bool = False
    """No system name, anywhere in the page or its JSON (`team.blind_label` instead)."""
    hide_vendors: bool = False
    """The judges and the auditor as ``judge 1`` … instead of their vendors and models."""
    hide_others: bool = False
    """Other reviewers' decisions hidden (until this reviewer has decided)."""
    visible: Sequence[QueueItem] | None = None
    """The items this viewer may open (None: all); navigation stays within them."""


def _aliases(verdicts: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    return {j: f"judge {k + 1}" for k, j in enumerate(sorted({str(v["judge"]) for v in verdicts}))}


def item_context(state: ReviewState, item: QueueItem, filters: Mapping[str, str], load: AdjudicationLoad,
                 view: ItemView = ItemView()) -> dict[str, Any]:
    """Everything the item page shows (pure but for reading the item's rows and sources)."""
    latest = load.latest()
    pool = state.queue if view.visible is None else view.visible
    items = [i for i in pool if i.matches(filters.get("system"), filters.get("task"), filters.get("category"))]
    pos = next((k for k, i in enumerate(items) if i.n == item.n), None)
    qs = _qs(filters)
    decided = sum(1 for i in items if i.key in latest)
    nxt = items[pos + 1] if pos is not None and pos + 1 < len(items) else None
    prev = items[pos - 1] if pos else None
    after = items[pos + 1:] if pos is not None else []
    undecided = next((i for i in after if i.key not in latest and i.n != item.n), None)
    before = items[:pos] if pos is not None else []
    # after deciding this one: the next undecided item, from the start when none is left after it
    then = undecided or next((i for i in before if i.key not in latest and i.n != item.n), None)
    index_url = "/" + qs

    row = state.data.row(item.grading_id)
    rows = state.data.grading_rows(item.grading_id)
    verdicts = rows.verdicts.to_pylist()
    flags = rows.flags.to_pylist()
    flag = next((f for f in flags if f["flag_index"] == item.flag_index), None) if item.kind == "flag" else None
    in_force = latest.get(item.key)
    task = state.sources.task(item.task_id)
    task_problem = task if isinstance(task, str) else None
    task_obj = None if isinstance(task, str) else task
    deliverables = state.sources.deliverables(item.system, item.task_id)
    deliverable_problem = deliverables if isinstance(deliverables, str) else None
    texts = {} if isinstance(deliverables, str) else {n: d for n, d in deliverables.items()}

    context: dict[str, Any] = {
        "item": item, "section_label": SECTION_LABELS[item.section], "row": row, "flag": flag,
        "task": task_obj, "task_problem": task_problem, "deliverable_problem": deliverable_problem,
        "position": (pos + 1) if pos is not None else None, "n_filtered": len(items), "decided": decided,
        "prev_url": f"/item/{prev.n}{qs}" if prev else None,
        "next_url": f"/item/{nxt.n}{qs}" if nxt else index_url,
        "skip_url": f"/item/{undecided.n}{qs}" if undecided else (f"/item/{nxt.n}{qs}" if nxt else index_url),
        "index_url": index_url, "in_force": None if view.hide_others else in_force,
        "history": [] if view.hide_others else list(reversed(history(load, item.key))),
        "decided_url": f"/item/{then.n}{qs}" if then else index_url, "hidden_others": view.hide_others,
    }
    if item.kind == "flag" and flag is not None:
        deliverable = texts.get(flag["deliverable"])
        candidates = [deliverable] if deliverable is not None else list(texts.values())
        excerpt = None
        for d in candidates:
            if d is not None and not d.missing:
                excerpt = mark(d.text, flag["span"])
                if excerpt.found:
                    break
        context["excerpt"] = excerpt
        evidence = None
        if task_obj is not None and flag["evidence_document"]:
            doc = find_document(task_obj, flag["evidence_document"])
            if doc is not None:
                page = page_text(doc.text, flag["evidence_page"])
                evidence = {"on_page": page is not None,
                            "marked": mark(page, flag["evidence_passage"], None) if page is not None
                            else mark(doc.text, flag["evidence_passage"], 2000)}
        context["evidence"] = evidence
        context["effective"] = effective_materiality(flag, in_force)
        context["other_flags"] = [f for f in flags if f["flag_index"] != item.flag_index]
        if view.hide_vendors:
            context["flag"] = {**flag, "auditor": "the auditor", "auditor_model": "model hidden"}
    else:
        criterion = None
        if task_obj is not None:
            criterion = next((c for c in task_obj.criteria if c.id == item.criterion_id), None)
        context["criterion"] = criterion
        context["verdicts"] = _verdicts_for(verdicts, item.criterion_id)
        if view.hide_vendors:
            alias = _aliases(context["verdicts"])
            said = {**alias, **{str(v["judge_model"]): alias[str(v["judge"])] for v in context["verdicts"]
                                if v["judge_model"]}}
            pattern = re.compile("|".join(re.escape(n) for n in sorted(said, key=len, reverse=True)), re.IGNORECASE)

            def masked(text: str | None) -> str | None:
                """A reasoning that names a judge (its vendor or model) names its alias instead."""
                return text if text is None or not said else pattern.sub(lambda m: said.get(m.group(0).lower(), "a judge"), text)

            context["verdicts"] = [{**v, "judge": alias[str(v["judge"])], "judge_model": "",
                                    "reasoning": masked(v["reasoning"])} for v in context["verdicts"]]
            if item.judge is not None:
                item = dataclasses.replace(item, judge=alias.get(item.judge, "judge"))
                context["item"] = item
        names = (criterion.deliverables if criterion and criterion.deliverables else list(texts))
        context["texts"] = [(n, texts[n]) for n in names if n in texts]
        context["max_chars"] = MAX_DELIVERABLE_CHARS
        # the passages the judges' reasonings quote, marked with who quoted them (`citations`)
        reasonings = [(v["judge"], v["reasoning"] or "") for v in context["verdicts"]]
        context["cited"] = {n: cite(d.text, reasonings, MAX_DELIVERABLE_CHARS)
                            for n, d in context["texts"] if not d.missing}
        context["quoted"] = sum(len(quoted_parts(r)) for _, r in reasonings)
        context["quotes_found"] = any(c.found for c in context["cited"].values())
        judge_row = next((v for v in context["verdicts"] if v["judge"] == item.judge), None)
        context["judge_verdict"] = judge_row["verdict"] if judge_row else None
    offered = choices(item)
    context["outcomes"] = state.scorer.outcomes(item, offered, latest)
    context["data"] = {
        "n": item.n, "key": [item_token(item.key)] if view.blind else list(item.key), "kind": item.kind,
        "choices": [{"key": k, "decision": d, "materiality": m, "label": lbl} for k, d, m, lbl in offered],
        "effective": context.get("effective"), "judge_verdict": context.get("judge_verdict"),
        "next_url": context["next_url"], "prev_url": context["prev_url"], "skip_url": context["skip_url"],
        "decided_url": context["decided_url"], "index_url": index_url,
        "in_force": None if view.hide_others else _decision_json(in_force),
    }
    if view.blind:
        context["item"] = blinded(context["item"])
        context["row"] = {k: v for k, v in row.items() if k not in ("system", "submission_id", "family")}
    return context


def queue_json(state: ReviewState, items: Sequence[QueueItem], latest: Mapping[tuple[str, ...], Adjudication]) -> list[dict[str, Any]]:
    return [{**i.as_json(), "decision": _decision_json(latest.get(i.key))} for i in items]


# --------------------------------------------------------------------------------------------
# The application
# --------------------------------------------------------------------------------------------


class DecisionIn(BaseModel):
    """A decision as the page (or a script) posts it: the item by its queue position, and the call."""

    model_config = ConfigDict(extra="forbid")

    item: int
    key: list[str] | None = None
    """The item's identity as the page saw it (its opaque token on a blind page): refused when the
    server's queue differs."""
    decision: Decision
    materiality: Literal["material", "minor"] | None = None
    reviewer: str = ""
    """Single-user page: the name typed. With accounts the signed-in account is recorded; another name is refused."""
    reason: str = ""
    resolve: bool = False
    """A lead resolving a disagreement (refused for a reviewer)."""


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=select_autoescape(["html", "j2"]))

    def score(value: float | None) -> str:
        return "—" if value is None else f"{value:.2f}"

    def rate(value: float | None) -> str:
        return "—" if value is None else f"{100 * value:.1f}%"

    env.filters.update(score=score, rate=rate)
    return env


def _page(env: Environment, template: str, context: Mapping[str, Any], status: int = 200) -> HTMLResponse:
    """A page with a fresh nonce: only its own inline style and script may run."""
    nonce = secrets.token_urlsafe(16)
    html = env.get_template(template).render(**context, nonce=nonce)
    csp = (f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; connect-src 'self'; "
           "img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
    return HTMLResponse(html, status_code=status, headers={
        "Content-Security-Policy": csp, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    })


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _viewer(request: Request) -> Viewer:
    viewer: Viewer = request.scope["state"]["viewer"]
    return viewer


class AuthMiddleware:
    """Admits a request or answers it: every route but the sign-in pages and /healthz needs a session
    (team mode), and every write needs the CSRF token (both modes). Puts the `Viewer` in the scope."""

    def __init__(self, app: ASGIApp, access: Access) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        path = request.url.path
        write = request.method not in SAFE_METHODS
        sessions = self.access.sessions
        if sessions is None:
            viewer = Viewer(name=None, role="admin", csrf=self.access.local_csrf, local=True)
        elif path in PUBLIC_PATHS:
            scope.setdefault("state", {})["viewer"] = None
            await self.app(scope, receive, send)
            return
        else:
            found = await run_in_threadpool(sessions.read, request.cookies.get(SESSION_COOKIE))
            if found is None:
                response: Response
                if write or path.startswith("/api/"):
                    response = _error(401, "sign in first (your session is missing, expired or its account disabled)")
                else:
                    target = path + (f"?{request.url.query}" if request.url.query else "")
                    response = RedirectResponse("/login?" + urlencode({"next": target}), status_code=303)
                response.delete_cookie(SESSION_COOKIE, path="/")
                await response(scope, receive, send)
                return
            session, account = found
            viewer = Viewer(name=account.name, role=account.role, csrf=session.csrf, local=False)
        if write:
            given = request.headers.get(CSRF_HEADER)
            if not csrf_ok(given, viewer.csrf) and request.headers.get("content-type", "").startswith(
                    "application/x-www-form-urlencoded"):
                form = await request.form()
                token = form.get("csrf")
                given = token if isinstance(token, str) else None
                scope["_tribunal_form"] = form
            if not csrf_ok(given, viewer.csrf):
                await _error(403, "the request carries no valid CSRF token (X-CSRF-Token): reload the page")(
                    scope, receive, send)
                return
        scope.setdefault("state", {})["viewer"] = viewer
        await self.app(scope, receive, send)


def create_app(state: ReviewState, allowed_hosts: Sequence[str] = LOOPBACK_HOSTS, access: Access | None = None) -> Starlette:
    """The Starlette application over one run's review state; it answers only to `allowed_hosts`.

    `access` says who may use it (`Access`; default: the single-user page)."""
    env = _environment()
    hosts = list(allowed_hosts)
    access = access or Access()
    team = Team(state, access.sessions) if access.sessions is not None else None
    if team is not None:
        team.refresh()

    def visible(viewer: Viewer) -> list[QueueItem] | None:
        """The items the viewer may open: a reviewer's assignments; everything for a lead (None)."""
        if viewer.lead or team is None:
            return None
        return team.assigned_items(str(viewer.name))

    def view_of(viewer: Viewer, item: QueueItem, load: AdjudicationLoad) -> ItemView:
        if viewer.lead or team is None:
            return ItemView()
        c = team.campaign_for(item.key, viewer.name)
        mine = visible(viewer)
        if c is None:
            return ItemView(blind=True, hide_others=True, visible=mine)
        decided = team.decided_by(load, c, item.key, str(viewer.name))
        return ItemView(blind=c.blind, hide_vendors=c.hide_vendors, hide_others=c.blind and not decided, visible=mine)

    def is_decided(viewer: Viewer, item: QueueItem, load: AdjudicationLoad,
                   latest: Mapping[tuple[str, ...], Adjudication]) -> bool:
        if viewer.lead or team is None:
            return item.key in latest
        c = team.campaign_for(item.key, viewer.name)
        return c is not None and team.decided_by(load, c, item.key, str(viewer.name))

    def base(request: Request, load: AdjudicationLoad) -> dict[str, Any]:
        viewer = _viewer(request)
        filters = _filters(request)
        blind = not viewer.lead
        if blind:
            filters["system"] = ""
        return {
            "run_id": state.data.run_id, "run_uri": state.data.run_uri, "filters": filters, "qs": _qs(filters),
            "systems": [] if blind else state.data.systems(), "tasks": state.data.tasks(),
            "categories": state.categories, "problems": load.problems if viewer.lead else [], "seed": state.seed,
            "sample": state.sample, "counts": state.counts(), "viewer": viewer, "csrf": viewer.csrf,
            "insecure": access.insecure, "team": access.team,
        }

    def pool(request: Request) -> tuple[list[QueueItem], dict[str, str]]:
        viewer = _viewer(request)
        filters = _filters(request)
        if not viewer.lead:
            filters["system"] = ""
        mine = visible(viewer)
        items = state.queue if mine is None else mine
        return [i for i in items if i.matches(filters["system"], filters["task"], filters["category"])], filters

    def index(request: Request) -> Response:
        viewer = _viewer(request)
        load = state.log.refresh()
        latest = load.latest()
        ctx = base(request, load)
        items, _ = pool(request)
        decided = {i.key for i in items if is_decided(viewer, i, load, latest)}
        first = next((i for i in items if i.key not in decided), items[0] if items else None)
        shown_latest = latest if viewer.lead else {}
        listed = items[:MAX_LISTED] if viewer.lead else [blinded(i) for i in items[:MAX_LISTED]]
        return _page(env, "index.html.j2", {
            **ctx, "items": listed, "n_filtered": len(items), "max_listed": MAX_LISTED,
            "decided": len(decided), "latest": shown_latest, "labels": SECTION_LABELS, "mine": decided,
            "start_url": f"/item/{first.n}{ctx['qs']}" if first else None,
            "no_assignments": not viewer.lead and not items,
        })

    def start(request: Request) -> Response:
        viewer = _viewer(request)
        load = state.log.refresh()
        latest = load.latest()
        items, filters = pool(request)
        first = next((i for i in items if not is_decided(viewer, i, load, latest)), items[0] if items else None)
        return RedirectResponse(f"/item/{first.n}{_qs(filters)}" if first else "/" + _qs(filters), status_code=303)

    def item_page(request: Request) -> Response:
        viewer = _viewer(request)
        n = int(request.path_params["n"])
        if not 0 <= n < len(state.queue):
            return PlainTextResponse(f"no item {n}: the queue has {len(state.queue)} items", status_code=404)
        item = state.queue[n]
        mine = visible(viewer)
        if mine is not None and item not in mine:
            return PlainTextResponse(f"item {n} is not assigned to {viewer.name}", status_code=403)
        filters = _filters(request)
        if not viewer.lead:
            filters["system"] = ""
        if not item.matches(filters["system"], filters["task"], filters["category"]):
            return RedirectResponse("/start" + _qs(filters), status_code=303)
        load = state.log.refresh()
        view = view_of(viewer, item, load)
        ctx = {**base(request, load), **item_context(state, item, filters, load, view)}
        if team is not None:
            c = team.campaign_for(item.key, None if viewer.lead else viewer.name)
            held = team.reserve(item.key, str(viewer.name), c)
            ctx["reserved_by"] = held
            ctx["campaign"] = c
            ctx["resolvable"] = viewer.lead and c is not None and str(viewer.name) not in team.assignment(c).get(item.key, [])
            ctx["data"] = {**ctx["data"], "resolve": ctx["resolvable"]}
            if view.hide_others and not view.blind:
                ctx["hidden_others"] = True
        return _page(env, "item.html.j2", ctx)

    def api_queue(request: Request) -> Response:
        viewer = _viewer(request)
        load = state.log.refresh()
        latest = load.latest()
        items, _ = pool(request)
        if viewer.lead:
            rows = queue_json(state, items, latest)
        else:
            rows = []
            for i in items:
                mine = [d for d in load.decisions if d.item == i.key and d.reviewer == viewer.name]
                row = {**blinded(i).as_json(), "key": [item_token(i.key)],
                       "decision": _decision_json(max(mine, key=Adjudication.order)) if mine else None}
                rows.append(row)
        return JSONResponse({
            "run_id": state.data.run_id, "seed": state.seed, "total": len(items),
            "decided": sum(1 for i in items if is_decided(viewer, i, load, latest)), "items": rows,
            "problems": load.problems if viewer.lead else [], "csrf": viewer.csrf,
            "account": viewer.name, "role": viewer.role,
        })

    def record(body: DecisionIn, viewer: Viewer) -> Response:
        if not 0 <= body.item < len(state.queue):
            return _error(404, f"no item {body.item}: the queue has {len(state.queue)} items")
        item = state.queue[body.item]
        if body.key is not None and body.key not in (list(item.key), [item_token(item.key)]):
            return _error(409, f"item {body.item} is another item here than the page showed: "
                               "reload the page (the queue was built with other settings)")
        campaign_id: str | None = None
        required: int | None = None
        resolution = False
        if viewer.local:
            reviewer = body.reviewer.strip()
            if not reviewer:
                return _error(400, "a reviewer name is required: type your name in the reviewer field")
        else:
            assert team is not None
            reviewer = str(viewer.name)
            if body.reviewer.strip() and body.reviewer.strip() != reviewer:
                return _error(403, f"you are signed in as {reviewer}: a decision is recorded under the signed-in "
                                   f"account, never under another ({body.reviewer.strip()!r})")
            mine = team.campaign_for(item.key, reviewer)
            anyone = team.campaign_for(item.key)
            if body.resolve and not viewer.lead:
                return _error(403, f"{reviewer} is a reviewer: only a lead resolves a disagreement")
            if viewer.lead and anyone is not None and (body.resolve or mine is None):
                campaign_id, required, resolution = anyone.campaign_id, anyone.k, True
            elif mine is not None:
                campaign_id, required = mine.campaign_id, mine.k
            elif not viewer.lead:
                return _error(403, f"item {body.item} is not assigned to {reviewer}")
            held = team.holder(item.key, reviewer, mine or anyone)
            if held is not None:
                return _error(409, f"item {body.item} is reserved by {held[0]} until "
                                   f"{held[1].strftime('%H:%M')} UTC: take another item")
        if not body.reason.strip():
            return _error(400, "a reason is required: say why, in a few words")
        if len(body.reason.strip()) > MAX_REASON_CHARS:
            return _error(413, f"the reason is {len(body.reason.strip()):,} characters long; a reason may have at most "
                               f"{MAX_REASON_CHARS:,}: shorten it")
        try:
            decision = Adjudication(
                run_id=state.data.run_id, grading_id=item.grading_id, kind=item.kind, system=item.system,
                task_id=item.task_id,
                flag_index=item.flag_index, criterion_id=item.criterion_id, judge=item.judge,
                decision=body.decision, materiality=body.materiality, reviewer=reviewer,
                reason=body.reason.strip(), queue=item.section, campaign_id=campaign_id, required=required,
                resolution=resolution, seed=state.seed if item.section in ("sample", "full") else None,
            )
            decision = state.data.identified(decision)  # the grading and the claim it was made on
        except ValidationError as exc:
            first = exc.errors()[0]
            return _error(400, str(first["msg"]).removeprefix("Value error, "))
        try:
            uri = state.log.record(decision)
            if team is not None:
                team.record("resolution" if resolution else "decision", reviewer, campaign_id=campaign_id,
                            item=item.key, decision_id=decision.decision_id,
                            detail={"decision": decision.decision, "materiality": decision.materiality})
        except TribunalError as exc:
            return _error(500, str(exc))
        load = state.log.refresh()
        latest = load.latest()
        out = _decision_json(decision) or {}
        if not viewer.lead:
            out = {k: v for k, v in out.items() if k not in ("system",)}
        return JSONResponse({
            "recorded": uri if viewer.lead else fs.basename(uri), "decision": out,
            "decided": sum(1 for i in state.queue if i.key in latest), "total": len(state.queue),
        }, status_code=201)

    async def post_decision(request: Request) -> Response:
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return _error(415, "send the decision as application/json")
        refused = foreign_write(request.headers, hosts)
        if refused is not None:
            return _error(403, refused)
        size = request.headers.get("content-length", "")
        if size.isdigit() and int(size) > MAX_BODY_BYTES:
            return _error(413, f"a decision of {int(size):,} bytes is refused (at most {MAX_BODY_BYTES:,}: a reason "
                               f"may have at most {MAX_REASON_CHARS:,} characters)")
        raw = bytearray()
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_BODY_BYTES:
                return _error(413, f"a decision of more than {MAX_BODY_BYTES:,} bytes is refused (a reason may have "
                                   f"at most {MAX_REASON_CHARS:,} characters)")
        try:
            body = DecisionIn.model_validate_json(bytes(raw))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            return _error(400, f"{where}: {first['msg']}" if where else str(first["msg"]))
        return await run_in_threadpool(record, body, _viewer(request))

    def health(request: Request) -> Response:
        return PlainTextResponse("ok")

    routes = [
        Route("/", index), Route("/start", start), Route("/item/{n:int}", item_page),
        Route("/api/queue", api_queue), Route("/api/decisions", post_decision, methods=["POST"]),
        Route("/healthz", health),
    ]
    if team is not None:
        routes += signin_routes(env, state, team, access, hosts, _page)
        routes += lead_routes(env, state, team, base, _page)
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=hosts), Middleware(AuthMiddleware, access=access)]
    if access.oidc is not None and access.sessions is not None:
        # Authlib keeps the OpenID state, nonce and PKCE verifier here between the redirect and the callback
        middleware.append(Middleware(SessionMiddleware, secret_key=access.sessions.secret, session_cookie=OIDC_COOKIE,
                                     max_age=600, same_site="lax", https_only=access.sessions.secure))
    return Starlette(routes=routes, middleware=middleware)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: a free one), made before the server starts so the
    URL can be printed with its real port."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def allowed_names(host: str, extra: Sequence[str] = ()) -> list[str]:
    """The host names the server answers to: the loopback names, the address it listens on (unless
    it is a wildcard), this machine's name when it listens on every address, and `--allowed-host`."""
    shown = f"[{host}]" if ":" in host else host
    names = [*LOOPBACK_HOSTS]
    if host in ("0.0.0.0", "::", ""):
        names += [socket.gethostname(), socket.getfqdn()]
    else:
        names += [host, shown]
    names += [hostname(h.strip()) for h in extra if h.strip()]
    return list(dict.fromkeys(n for n in names if n))


def serve(state: ReviewState, host: str, port: int, on_ready: Callable[[str], None],
          allowed_hosts: Sequence[str] = (), access: Access | None = None,
          tls: tuple[str, str] | None = None) -> None:
    """Serve the application until interrupted; `on_ready` gets the URL once the port is listening.

    `tls` is (certificate, key) in PEM: uvicorn's own TLS (`ssl_certfile`, `ssl_keyfile`)."""
    import uvicorn

    sock = bind(host, port)
    actual = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    app = create_app(state, allowed_hosts=allowed_names(host, allowed_hosts), access=access)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                            ssl_certfile=tls[0] if tls else None, ssl_keyfile=tls[1] if tls else None)
    server = uvicorn.Server(config)
    on_ready(f"{'https' if tls else 'http'}://{shown}:{actual}/")
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
