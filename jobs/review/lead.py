"""The lead's page: campaigns, everyone's progress, the resolution queue and the agreement figures.

Why apart: these routes are a lead's only (a reviewer gets 403 from each), and they are where the
team's numbers are read: per-reviewer progress, the items whose reviewers disagree (with each
reviewer's reasons), and inter-reviewer agreement computed by `evalcore.results.agreement` over
the run's decisions, against the machine's calls (`machine_calls`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from jinja2 import Environment
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from evalcore.errors import TribunalError
from evalcore.results.adjudications import Adjudication, AdjudicationLoad
from evalcore.results.agreement import Agreement, agreement, machine_flag_call, machine_panel_call
from evalcore.results.campaigns import SUGGESTED_K, Campaign

if TYPE_CHECKING:
    from jobs.review.auth import Viewer
    from jobs.review.state import ReviewState
    from jobs.review.team import Team

PageFn = Callable[[Environment, str, Mapping[str, Any], int], HTMLResponse]
BaseFn = Callable[[Request, AdjudicationLoad], dict[str, Any]]


def machine_calls(state: ReviewState, decisions: Sequence[Adjudication]) -> dict[tuple[str, ...], str]:
    """The machine's call on every decided item: the auditor's on a flag, the judge's on a verdict,
    the panel's majority on a criterion."""
    out: dict[tuple[str, ...], str] = {}
    for key in {d.item for d in decisions}:
        item = state.by_key.get(key)
        if item is None:
            continue
        rows = state.data.grading_rows(item.grading_id)
        if item.kind == "flag":
            flag = next((f for f in rows.flags.to_pylist() if f["flag_index"] == item.flag_index), None)
            if flag is not None:
                out[key] = machine_flag_call(str(flag["status"]), flag["materiality"])
            continue
        verdicts = [v for v in rows.verdicts.to_pylist() if v["criterion_id"] == item.criterion_id]
        if item.kind == "verdict":
            said = next((v["verdict"] for v in verdicts if v["judge"] == item.judge), None)
            if said in ("pass", "fail"):
                out[key] = str(said)
        else:
            call = machine_panel_call([v["verdict"] for v in verdicts])
            if call is not None:
                out[key] = call
    return out


def team_agreement(state: ReviewState, load: AdjudicationLoad) -> Agreement:
    """Agreement over the decisions made in campaigns (the only ones with several reviewers per item)."""
    decided = [d for d in load.decisions if d.campaign_id is not None]
    return agreement(decided, machine_calls(state, decided), seed=state.seed)


def agreement_json(a: Agreement) -> dict[str, Any]:
    out: dict[str, Any] = a.model_dump(mode="json")
    out["alpha"] = out.pop("alphas")
    return out


def lead_routes(env: Environment, state: ReviewState, team: Team, base: BaseFn, page: PageFn) -> list[Route]:
    """/lead, /api/campaigns (POST), /api/lead: a lead's or admin's only."""

    def viewer_of(request: Request) -> Viewer:
        viewer: Viewer = request.scope["state"]["viewer"]
        return viewer

    def refused(viewer: Viewer) -> Response | None:
        if viewer.lead:
            return None
        return JSONResponse({"error": f"{viewer.name} is a reviewer: this is a lead's page"}, status_code=403)

    def summary() -> dict[str, Any]:
        team.refresh()
        load = state.log.refresh()
        resolve = team.to_resolve(load)
        return {
            "load": load,
            "campaigns": team.campaigns(),
            "progress": team.progress(load),
            "resolve": resolve,
            "agreement": team_agreement(state, load),
        }

    def lead_page(request: Request) -> Response:
        denied = refused(viewer_of(request))
        if denied is not None:
            return denied
        got = summary()
        users = team.users()
        ctx = base(request, got["load"])
        return page(env, "lead.html.j2", {
            **ctx, **got, "users": users, "suggested_k": SUGGESTED_K, "n_filtered": len(state.queue),
            "decided": len(got["load"].latest()),
        }, 200)

    def api_lead(request: Request) -> Response:
        denied = refused(viewer_of(request))
        if denied is not None:
            return denied
        got = summary()
        return JSONResponse({
            "campaigns": [json.loads(c.model_dump_json()) for c in got["campaigns"]],
            "progress": got["progress"],
            "resolve": [{"n": i.n, "key": list(i.key), "campaign_id": c.campaign_id,
                         "decisions": [{"reviewer": d.reviewer, "decision": d.decision, "materiality": d.materiality,
                                        "reason": d.reason} for d in ds]} for i, c, ds in got["resolve"]],
            "agreement": agreement_json(got["agreement"]),
        })

    async def api_campaigns(request: Request) -> Response:
        viewer = viewer_of(request)
        denied = refused(viewer)
        if denied is not None:
            return denied
        try:
            body = json.loads(await request.body())
            if not isinstance(body, dict):
                raise ValueError("send one JSON object")
            campaign = Campaign(run_id=state.data.run_id, created_by=str(viewer.name),
                                seed=int(body.pop("seed", state.seed)), **body)
        except (ValueError, TypeError, ValidationError) as exc:
            msg = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            return JSONResponse({"error": f"campaign refused: {str(msg).removeprefix('Value error, ')}"},
                                status_code=400)
        known = set(team.users())
        unknown = [r for r in campaign.reviewers if r not in known]
        if unknown:
            return JSONResponse({"error": f"campaign refused: no enabled account {', '.join(unknown)}"}, status_code=400)
        try:
            await run_in_threadpool(team.start, campaign, str(viewer.name))
        except TribunalError as exc:
            return JSONResponse({"error": str(exc)}, status_code=500)
        assigned = team.assignment(campaign)
        return JSONResponse({"campaign": json.loads(campaign.model_dump_json()), "items": len(assigned),
                             "loads": {r: sum(r in rs for rs in assigned.values()) for r in campaign.reviewers}},
                            status_code=201)

    return [
        Route("/lead", lead_page), Route("/api/lead", api_lead),
        Route("/api/campaigns", api_campaigns, methods=["POST"]),
    ]
