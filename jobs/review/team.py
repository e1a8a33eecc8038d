"""The review page as a team's: campaigns, who sees which item, reservations, the trail.

Why apart from the application: the rules of who may see and decide what are the security of a
team review, and they are easier to read (and test) without the routes. `Team` reads the run's
campaigns and trail (so a restarted server, or a second one on the same ``s3://`` run, agrees with
the first), computes each campaign's assignment with `evalcore.results.campaigns.assign` over the
run's queue, and answers: which items a reviewer sees, whether they may decide one, who holds an
item's reservation, which items wait for the lead.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from evalcore.results import campaigns as camp
from evalcore.results import review_trail as trail
from evalcore.results.adjudications import Adjudication, AdjudicationLoad, campaign_outcome
from evalcore.results.campaigns import Campaign
from evalcore.results.review_trail import TrailEvent, TrailReader
from jobs.review.auth import Sessions
from jobs.review.queue import QueueItem, build_queue

if TYPE_CHECKING:
    from jobs.review.state import ReviewState


def item_token(key: Sequence[str]) -> str:
    """An item's opaque name for a blind page (its key names the system)."""
    return "i" + hashlib.sha256("\x1f".join(key).encode()).hexdigest()[:16]


def blind_label(key: Sequence[str]) -> str:
    """What a blind page calls the submission instead of its system: stable, and says nothing of it."""
    return "submission " + hashlib.sha256(("submission\x1f" + "\x1f".join(key[1:3])).encode()).hexdigest()[:6]


class Team:
    """Campaigns and the trail of one run, as one server sees them."""

    def __init__(self, state: ReviewState, sessions: Sessions) -> None:
        self.state = state
        self.sessions = sessions
        self.trail = TrailReader(state.data.run_uri, state.data.endpoint)
        self._assignments: dict[str, dict[tuple[str, ...], list[str]]] = {}
        self._campaigns: list[Campaign] = []
        self._lock = threading.Lock()

    # -- campaigns ------------------------------------------------------------------------------

    def refresh(self) -> list[Campaign]:
        """Every campaign of the run (another server's too), each with its items in the queue."""
        found, _ = camp.load_all(self.state.data.run_uri, self.state.data.endpoint)
        run_id = self.state.data.run_id
        found = [c for c in found if c.run_id == run_id]
        for c in found:
            if c.campaign_id not in self._assignments:
                keys = self.items_of(c)
                with self._lock:
                    self._assignments[c.campaign_id] = camp.assign(keys, c.reviewers, c.k, c.seed)
        with self._lock:
            self._campaigns = found
        return found

    def items_of(self, c: Campaign) -> list[tuple[str, ...]]:
        """The campaign's items (its sections of the queue built with its seed and sample), in the
        review page's order; items the server's own queue lacks are added to it."""
        built = [i for i in build_queue(self.state.data, seed=c.seed, sample=c.sample) if i.section in c.sections]
        self.state.include(built)
        order = {i.key: i.n for i in self.state.queue}
        return sorted((i.key for i in built), key=lambda k: order[k])

    def users(self) -> list[str]:
        """The enabled accounts (who may be named in a campaign)."""
        return [a.name for a in self.sessions.users().accounts if not a.disabled]

    def start(self, campaign: Campaign, actor: str) -> Campaign:
        """Store a new campaign and record its assignment in the trail."""
        camp.save(self.state.data.run_uri, campaign, self.state.data.endpoint)
        keys = self.items_of(campaign)
        assigned = camp.assign(keys, campaign.reviewers, campaign.k, campaign.seed)
        with self._lock:
            self._assignments[campaign.campaign_id] = assigned
        loads = {r: sum(r in rs for rs in assigned.values()) for r in campaign.reviewers}
        self.record("campaign", actor, campaign_id=campaign.campaign_id,
                    detail={"name": campaign.name, "items": len(keys), "k": campaign.k,
                            "sections": ",".join(campaign.sections), "seed": campaign.seed,
                            "sample": campaign.sample, "blind": campaign.blind,
                            "hide_vendors": campaign.hide_vendors})
        for reviewer, n in loads.items():
            self.record("assignment", actor, campaign_id=campaign.campaign_id,
                        detail={"reviewer": reviewer, "items": n})
        self.refresh()
        return campaign

    def campaigns(self) -> list[Campaign]:
        with self._lock:
            return list(self._campaigns)

    def assignment(self, c: Campaign) -> dict[tuple[str, ...], list[str]]:
        with self._lock:
            return self._assignments.get(c.campaign_id, {})

    def campaign_for(self, key: tuple[str, ...], name: str | None = None) -> Campaign | None:
        """The latest campaign holding the item (and assigning it to `name`, when given)."""
        for c in reversed(self.campaigns()):
            assigned = self.assignment(c).get(key)
            if assigned is not None and (name is None or name in assigned):
                return c
        return None

    def assigned_items(self, name: str) -> list[QueueItem]:
        """The items assigned to `name` in any campaign, in queue order."""
        keys = {k for c in self.campaigns() for k, rs in self.assignment(c).items() if name in rs}
        return [i for i in self.state.queue if i.key in keys]

    def campaign_items(self) -> list[QueueItem]:
        keys = {k for c in self.campaigns() for k in self.assignment(c)}
        return [i for i in self.state.queue if i.key in keys]

    # -- who sees and decides what -------------------------------------------------------------

    def decided_by(self, load: AdjudicationLoad, c: Campaign, key: tuple[str, ...], name: str) -> bool:
        return any(d.item == key and d.campaign_id == c.campaign_id and d.reviewer == name and not d.resolution
                   for d in load.decisions)

    def progress(self, load: AdjudicationLoad) -> list[dict[str, object]]:
        """Per campaign and reviewer: items assigned and decided (the lead's view of everyone)."""
        out: list[dict[str, object]] = []
        for c in self.campaigns():
            assigned = self.assignment(c)
            for r in c.reviewers:
                mine = [k for k, rs in assigned.items() if r in rs]
                done = sum(1 for k in mine if self.decided_by(load, c, k, r))
                out.append({"campaign": c.name, "campaign_id": c.campaign_id, "reviewer": r,
                            "assigned": len(mine), "decided": done})
        return out

    def to_resolve(self, load: AdjudicationLoad) -> list[tuple[QueueItem, Campaign, list[Adjudication]]]:
        """Items whose reviewers disagree and that no lead has resolved: the lead's queue."""
        by_item: dict[tuple[str, ...], list[Adjudication]] = {}
        for d in load.decisions:
            by_item.setdefault(d.item, []).append(d)
        out = []
        for item in self.campaign_items():
            c = self.campaign_for(item.key)
            if c is None:
                continue
            ours = [d for d in by_item.get(item.key, []) if d.campaign_id == c.campaign_id]
            if ours and campaign_outcome(ours) == "split":
                out.append((item, c, sorted((d for d in ours if not d.resolution), key=Adjudication.order)))
        return out

    # -- reservations and the trail ---------------------------------------------------------------

    def record(self, kind: trail.EventKind, actor: str, *, campaign_id: str | None = None,
               item: Sequence[str] | None = None, decision_id: str | None = None,
               detail: Mapping[str, trail.Scalar] | None = None) -> None:
        trail.append(self.state.data.run_uri, TrailEvent(
            kind=kind, actor=actor, run_id=self.state.data.run_id, campaign_id=campaign_id,
            item=list(item) if item is not None else None, decision_id=decision_id, detail=dict(detail or {}),
        ), self.state.data.endpoint)

    def holder(self, key: tuple[str, ...], name: str, c: Campaign | None) -> tuple[str, dt.datetime] | None:
        """Who else holds the item's reservation now (and until when), or None.

        Reviewers the campaign assigned the same item to decide it independently, so they never
        block each other; anyone else who opened it within the reservation time, and has not
        decided it since, does."""
        now = dt.datetime.now(dt.UTC)
        assigned = set(self.assignment(c).get(key, [])) if c else set()
        events = self.trail.refresh()
        done = {e.actor: e.at for e in events if e.kind in ("decision", "resolution") and e.item == list(key)}
        for e in reversed(events):
            if e.kind != "reservation" or e.item != list(key) or e.actor == name:
                continue
            if e.actor in done and done[e.actor] >= e.at:
                continue  # the holder has decided it since: the reservation ended with the decision
            until = dt.datetime.fromisoformat(str(e.detail.get("until")))
            if until > now and not (name in assigned and e.actor in assigned):
                return e.actor, until
        return None

    def reserve(self, key: tuple[str, ...], name: str, c: Campaign | None) -> tuple[str, dt.datetime] | None:
        """Reserve the item for `name` (one trail event per opening) unless someone else holds it."""
        held = self.holder(key, name, c)
        if held is not None:
            return held
        minutes = c.reservation_minutes if c else 30
        until = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=minutes)
        mine = [e for e in self.trail.refresh() if e.kind == "reservation" and e.item == list(key) and e.actor == name
                and dt.datetime.fromisoformat(str(e.detail.get("until"))) > dt.datetime.now(dt.UTC)
                + dt.timedelta(minutes=minutes / 2)]
        if not mine:  # an opening while half the reservation is left renews nothing
            self.record("reservation", name, campaign_id=c.campaign_id if c else None, item=key,
                        detail={"until": until.isoformat()})
        return None


def blinded(item: QueueItem) -> QueueItem:
    """The item as a blind page shows it: no system (its page names the submission by `blind_label`)."""
    return dataclasses.replace(item, system=blind_label(item.key))
