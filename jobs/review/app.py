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
The application has no login: it listens on 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

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
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from evalcore.errors import TribunalError
from evalcore.grading import scoring
from evalcore.results.adjudications import MAX_REASON_CHARS, Adjudication, AdjudicationLoad, Decision
from jobs.review.citations import cite, quoted_parts
from jobs.review.context import Sources, find_document, mark, page_text
from jobs.review.decisions import DecisionLog, history
from jobs.review.impact import Scorer, rank_by_impact
from jobs.review.queue import SECTION_LABELS, QueueItem, RunData, build_queue

TEMPLATES = Path(__file__).with_name("templates")
MAX_DELIVERABLE_CHARS = 60_000
"""A deliverable shown whole (criterion items) is cut after this many characters (the page says so)."""
MAX_LISTED = 1000
"""Items listed on the queue page (filters narrow it; the item pages reach every item)."""
FILTERS = ("system", "task", "category")
MAX_BODY_BYTES = 16 * MAX_REASON_CHARS + 8192
"""The largest decision a POST may carry (a reason of `MAX_REASON_CHARS` characters, each escaped in
JSON at its widest): a larger body is refused before it is read."""
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")


class ReviewState:
    """Everything the application serves: the run, its queue, its sources, its decisions."""

    def __init__(
        self, run_uri: str, *, endpoint_override: str | None = None, seed: int | None = None, sample: int = 20,
        benchmark: str | None = None, submissions: str | None = None, full: int = 0,
    ) -> None:
        self.data = RunData(run_uri, endpoint_override)
        self.seed = int(self.data.record.config.seed) if seed is None else seed
        self.sample = sample
        self.full = full
        self.scorer = Scorer(self.data)
        self.log = DecisionLog(self.data.run_uri, endpoint_override)
        self.queue = rank_by_impact(build_queue(self.data, seed=self.seed, sample=sample, full=full), self.scorer,
                                    choices, self.log.refresh().latest())
        self.by_key = {item.key: item for item in self.queue}
        self.sources = Sources(self.data.record, benchmark=benchmark, submissions=submissions,
                               endpoint_override=endpoint_override)
        self.categories = sorted({i.category for i in self.queue if i.category})

    def counts(self) -> dict[str, int]:
        """Items per section, and `moves_score`: how many a decision can change a score or the gate of."""
        out = {s: 0 for s in SECTION_LABELS}
        for item in self.queue:
            out[item.section] += 1
        out["moves_score"] = sum(1 for item in self.queue if item.moves_score)
        return out


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


def choices(item: QueueItem) -> list[tuple[str, str, str | None, str]]:
    """(key, decision, materiality, label) of every decision the item's page offers."""
    if item.kind == "flag":
        return [
            ("u", "upheld", None, "uphold: it is a hallucination"),
            ("o", "overturned", None, "overturn: not a hallucination"),
            ("m", "materiality", "minor", "uphold as minor"),
            ("m", "materiality", "material", "uphold as material"),
        ]
    return [("p", "pass", None, "pass"), ("f", "fail", None, "fail")]


def effective_materiality(flag: Mapping[str, Any], in_force: Adjudication | None) -> str | None:
    """How the flag counts now (material, minor or not at all), the decision in force applied."""
    raw = scoring.FlagOutcome(str(flag["status"]), flag["materiality"])
    outcome = scoring.adjudicated_flag(raw, in_force.decision if in_force else None,  # type: ignore[arg-type]
                                       in_force.materiality if in_force else None)
    return scoring.counted_materiality(outcome.status, outcome.materiality)


def _verdicts_for(rows: list[dict[str, Any]], criterion_id: str | None) -> list[dict[str, Any]]:
    return [r for r in rows if r["criterion_id"] == criterion_id]


def item_context(state: ReviewState, item: QueueItem, filters: Mapping[str, str], load: AdjudicationLoad) -> dict[str, Any]:
    """Everything the item page shows (pure but for reading the item's rows and sources)."""
    latest = load.latest()
    items = _filtered(state, filters)
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
        "index_url": index_url, "in_force": in_force, "history": list(reversed(history(load, item.key))),
        "decided_url": f"/item/{then.n}{qs}" if then else index_url,
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
    else:
        criterion = None
        if task_obj is not None:
            criterion = next((c for c in task_obj.criteria if c.id == item.criterion_id), None)
        context["criterion"] = criterion
        context["verdicts"] = _verdicts_for(verdicts, item.criterion_id)
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
        "n": item.n, "key": list(item.key), "kind": item.kind,
        "choices": [{"key": k, "decision": d, "materiality": m, "label": lbl} for k, d, m, lbl in offered],
        "effective": context.get("effective"), "judge_verdict": context.get("judge_verdict"),
        "next_url": context["next_url"], "prev_url": context["prev_url"], "skip_url": context["skip_url"],
        "decided_url": context["decided_url"], "index_url": index_url, "in_force": _decision_json(in_force),
    }
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
    """The item's identity as the page saw it: refused when the server's queue differs."""
    decision: Decision
    materiality: Literal["material", "minor"] | None = None
    reviewer: str = ""
    reason: str = ""


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


def _hostname(host: str) -> str:
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
    if _hostname(host).lower() not in {h.lower() for h in hosts}:
        return (f"decision refused: host {host!r} is not one this server answers to (allowed: {', '.join(hosts)}; "
                "tribunal review --allowed-host NAME adds one)")
    origin = headers.get("origin")
    if origin is not None and origin.lower() not in {f"http://{host}".lower(), f"https://{host}".lower()}:
        return f"cross-origin decision refused (from {origin})"
    if headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        return f"cross-site decision refused (Sec-Fetch-Site: {headers.get('sec-fetch-site')})"
    return None


def create_app(state: ReviewState, allowed_hosts: Sequence[str] = LOOPBACK_HOSTS) -> Starlette:
    """The Starlette application over one run's review state; it answers only to `allowed_hosts`."""
    env = _environment()
    hosts = list(allowed_hosts)

    def base(request: Request, load: AdjudicationLoad) -> dict[str, Any]:
        filters = _filters(request)
        return {
            "run_id": state.data.run_id, "run_uri": state.data.run_uri, "filters": filters, "qs": _qs(filters),
            "systems": state.data.systems(), "tasks": state.data.tasks(), "categories": state.categories,
            "problems": load.problems, "seed": state.seed, "sample": state.sample, "counts": state.counts(),
        }

    def index(request: Request) -> Response:
        load = state.log.refresh()
        latest = load.latest()
        ctx = base(request, load)
        items = _filtered(state, ctx["filters"])
        first = next((i for i in items if i.key not in latest), items[0] if items else None)
        return _page(env, "index.html.j2", {
            **ctx, "items": items[:MAX_LISTED], "n_filtered": len(items), "max_listed": MAX_LISTED,
            "decided": sum(1 for i in items if i.key in latest), "latest": latest, "labels": SECTION_LABELS,
            "start_url": f"/item/{first.n}{ctx['qs']}" if first else None,
        })

    def start(request: Request) -> Response:
        latest = state.log.refresh().latest()
        filters = _filters(request)
        items = _filtered(state, filters)
        first = next((i for i in items if i.key not in latest), items[0] if items else None)
        return RedirectResponse(f"/item/{first.n}{_qs(filters)}" if first else "/" + _qs(filters), status_code=303)

    def item_page(request: Request) -> Response:
        n = int(request.path_params["n"])
        if not 0 <= n < len(state.queue):
            return PlainTextResponse(f"no item {n}: the queue has {len(state.queue)} items", status_code=404)
        item = state.queue[n]
        filters = _filters(request)
        if not item.matches(filters["system"], filters["task"], filters["category"]):
            return RedirectResponse("/start" + _qs(filters), status_code=303)
        load = state.log.refresh()
        return _page(env, "item.html.j2", {**base(request, load), **item_context(state, item, filters, load)})

    def api_queue(request: Request) -> Response:
        load = state.log.refresh()
        latest = load.latest()
        items = _filtered(state, _filters(request))
        return JSONResponse({
            "run_id": state.data.run_id, "seed": state.seed, "total": len(items),
            "decided": sum(1 for i in items if i.key in latest), "items": queue_json(state, items, latest),
            "problems": load.problems,
        })

    def record(body: DecisionIn) -> Response:
        if not 0 <= body.item < len(state.queue):
            return _error(404, f"no item {body.item}: the queue has {len(state.queue)} items")
        item = state.queue[body.item]
        if body.key is not None and tuple(body.key) != item.key:
            return _error(409, f"item {body.item} is {'/'.join(item.key)} here, not {'/'.join(body.key)}: "
                               "reload the page (the queue was built with other settings)")
        if not body.reviewer.strip():
            return _error(400, "a reviewer name is required: type your name in the reviewer field")
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
                decision=body.decision, materiality=body.materiality, reviewer=body.reviewer.strip(),
                reason=body.reason.strip(), queue=item.section,
                seed=state.seed if item.section in ("sample", "full") else None,
            )
            decision = state.data.identified(decision)  # the grading and the claim it was made on
        except ValidationError as exc:
            first = exc.errors()[0]
            return _error(400, str(first["msg"]).removeprefix("Value error, "))
        try:
            uri = state.log.record(decision)
        except TribunalError as exc:
            return _error(500, str(exc))
        latest = state.log.refresh().latest()
        return JSONResponse({
            "recorded": uri, "decision": _decision_json(decision),
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
        return await run_in_threadpool(record, body)

    def health(request: Request) -> Response:
        return PlainTextResponse("ok")

    routes = [
        Route("/", index), Route("/start", start), Route("/item/{n:int}", item_page),
        Route("/api/queue", api_queue), Route("/api/decisions", post_decision, methods=["POST"]),
        Route("/healthz", health),
    ]
    return Starlette(routes=routes, middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=hosts)])


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
    names += [_hostname(h.strip()) for h in extra if h.strip()]
    return list(dict.fromkeys(n for n in names if n))


def serve(state: ReviewState, host: str, port: int, on_ready: Callable[[str], None],
          allowed_hosts: Sequence[str] = ()) -> None:
    """Serve the application until interrupted; `on_ready` gets the URL once the port is listening."""
    import uvicorn

    sock = bind(host, port)
    actual = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    app = create_app(state, allowed_hosts=allowed_names(host, allowed_hosts))
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    on_ready(f"http://{shown}:{actual}/")
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()

