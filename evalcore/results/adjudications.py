"""Expert decisions as data: reviewed flags and verdicts, recorded append-only in the run's folder.

Why: one confirmed material hallucination zeroes a task, so systems' makers dispute flags and an
expert sometimes overturns a judge. A publisher must be able to say who decided what, when and why,
and recompute — without ever editing what the judges and the auditor said. So:

* a decision is one row (`Adjudication`, extra fields refused like every row), stored as one JSON
  object per decision under ``<run>/adjudications/`` and written only if its name is new
  (`fs.write_new`: ``O_EXCL`` locally, a conditional PUT on S3), so two reviewers deciding at once
  never overwrite each other;
* the raw verdict and flag tables are never changed; the reduction applies the decisions by the
  rules in `evalcore.grading.scoring` (`adjudicated_flag`, `adjudicated_panel`);
* the latest decision per item wins: by `decided_at`, then by the order the decisions were recorded
  (`recorded_at`, set when the object is written, one microsecond apart within one import, so two
  rows of a file dated alike keep the file's order), and only then by decision id; the whole
  history is kept and listed in the report;
* a decision is about one grading: it names the run, the grading it was made on (`grading_id`)
  and, for a flag, the claim it judged (`claim_hash`). A decision of another run, or one whose
  grading a later sweep replaced (or whose flag index now holds another claim), is set aside with
  a note instead of being applied to what it never saw;
* what comes in is checked like a sweep's inputs: ids are one safe file-name component (never a
  path), a decision may not be dated in the future (beyond `MAX_CLOCK_SKEW`), a reason is at most
  `MAX_REASON_CHARS` characters, and a file of decisions is read as a spreadsheet saves it
  (byte-order mark, CRLF, `;` or tab separators) and recorded only once every row is valid
  (`evalcore.results.decision_files`).

Items: a **flag** (system, task, flag index: upheld / overturned / materiality), one **judge's
verdict** on one criterion (pass / fail), or a **criterion**'s outcome for the whole panel
(pass / fail).

Why one module: a decision's row, the rule for which decision is in force and its application to
a grading (`apply`, and `rescore` for one grading's what-ifs) read the same identity (`item`,
`grading_id`, `claim_hash`) and change together; split, a change to one would have to be mirrored
in another module.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import duckdb
import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from evalcore.errors import InputError, TribunalError
from evalcore.grading import scoring
from evalcore.storage import fs
from evalcore.storage.run_folder import folder_of

MAX_REASON_CHARS = 10_000
"""The longest reason a decision may give (about three pages): a reason is read by people, and a
decision object is re-read on every page of the review; anything longer is refused with this figure."""
MAX_CLOCK_SKEW = dt.timedelta(minutes=5)
"""How far in the future a decision may be dated (clocks of reviewers' machines differ a little); a
later date would make it outrank every decision recorded after it, so it is refused."""
DECISION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
"""A decision id is one file-name component: letters, digits, `_` and `-` (no `/`, no `..`)."""

ItemKind = Literal["flag", "verdict", "criterion"]
Decision = Literal["upheld", "overturned", "materiality", "pass", "fail"]
_DECISIONS: dict[str, set[str]] = {
    "flag": {"upheld", "overturned", "materiality"},
    "verdict": {"pass", "fail"},
    "criterion": {"pass", "fail"},
}


class Adjudication(BaseModel):
    """One expert decision on one item of one run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    decision_id: str = Field(
        default_factory=lambda: uuid.uuid4().hex, pattern=f"^{DECISION_ID.pattern}$",
        description="Unique id of this decision: 1-64 letters, digits, _ or - (it names the decision's file).")
    run_id: str = Field(description="Run the decision applies to.")
    grading_id: str | None = Field(
        default=None, description="The grading the decision was made on; a decision whose grading a later sweep "
        "replaced is set aside. None only in decisions recorded before it was kept.")
    claim_hash: str | None = Field(
        default=None, description="Flags: `claim_hash` of the flag's span when decided; the decision is set aside "
        "when the flag at its index is now another claim.")
    kind: ItemKind = Field(description="flag | verdict (one judge on one criterion) | criterion (the whole panel).")
    system: str = Field(min_length=1, description="Evaluated system.")
    task_id: str = Field(min_length=1, description="Task id.")
    flag_index: int | None = Field(default=None, ge=0, description="Flags: the flag's index in the Stage 1 list.")
    criterion_id: str | None = Field(default=None, description="Verdicts and criteria: the criterion.")
    judge: str | None = Field(default=None, description="Verdicts: the judge (vendor name).")
    decision: Decision = Field(description="flag: upheld | overturned | materiality; verdict/criterion: pass | fail.")
    materiality: Literal["material", "minor"] | None = Field(
        default=None, description="The expert's materiality (required for `materiality`, optional for `upheld`)."
    )
    reviewer: str = Field(min_length=1, description="Who decided (required).")
    decided_at: dt.datetime = Field(
        default_factory=lambda: dt.datetime.now(dt.UTC), description="When (UTC)."
    )
    recorded_at: dt.datetime | None = Field(
        default=None, description="When it was written into the run (set by `record`): orders decisions dated alike.")
    reason: str = Field(min_length=1, max_length=MAX_REASON_CHARS, description="Why, in the reviewer's words "
                        f"(required, at most {MAX_REASON_CHARS:,} characters).")
    queue: Literal["material", "split", "sample", "full"] | None = Field(
        default=None,
        description="The review queue the item came from (material flags, split criteria, the seeded random "
        "sample of items, the seeded random sample of whole submissions); None when recorded outside the review "
        "page. Only `sample` and `full` decisions are unbiased labels.",
    )
    seed: int | None = Field(
        default=None, description="The seed of the random section (`sample`, `full`) the item came from: a "
        "uniform sample is one seed's order (`evalcore.results.corrected.sample_order`).")
    campaign_id: str | None = Field(
        default=None, pattern=f"^{DECISION_ID.pattern}$",
        description="The review campaign the decision was made in (None: a decision outside any campaign).")
    required: int | None = Field(
        default=None, ge=1, le=10, description="Campaigns: how many reviewers the campaign asks for on the item (k); "
        "the item's decision is in force once k distinct reviewers agree, or a lead resolves it.")
    resolution: bool = Field(
        default=False, description="A lead's resolution of the item (in force over the reviewers' decisions).")

    @field_validator("decision_id", "campaign_id", mode="before")
    @classmethod
    def _one_file_name(cls, value: object) -> object:
        """In plain words, before the pattern (whose message quotes the regular expression)."""
        if isinstance(value, str) and not DECISION_ID.fullmatch(value):
            raise ValueError(f"{value!r} may hold only letters, digits, '-' and '_' (at most 64, the first a letter "
                             "or a digit): it names a file")
        return value

    @model_validator(mode="after")
    def _fits_its_item(self) -> Adjudication:
        """Each kind names its item completely and takes only its own decisions."""
        if self.decision not in _DECISIONS[self.kind]:
            raise ValueError(f"a {self.kind} decision is one of {', '.join(sorted(_DECISIONS[self.kind]))}, "
                             f"not {self.decision!r}")
        if self.kind == "flag" and self.flag_index is None:
            raise ValueError("a flag decision needs flag_index")
        if self.kind in ("verdict", "criterion") and not self.criterion_id:
            raise ValueError(f"a {self.kind} decision needs criterion_id")
        if self.kind == "verdict" and not self.judge:
            raise ValueError("a verdict decision needs the judge")
        if self.decision == "materiality" and self.materiality is None:
            raise ValueError("a materiality decision needs materiality (material or minor)")
        if self.decided_at.tzinfo is None:
            raise ValueError("decided_at needs a time zone (UTC)")
        if self.decided_at > dt.datetime.now(dt.UTC) + MAX_CLOCK_SKEW:
            raise ValueError(f"decided_at {self.decided_at.isoformat()} is in the future (more than "
                             f"{int(MAX_CLOCK_SKEW.total_seconds() // 60)} minutes ahead of this clock): it would "
                             "outrank every later decision")
        if self.kind != "flag" and self.claim_hash is not None:
            raise ValueError("only a flag decision names a claim (claim_hash)")
        return self

    def order(self) -> tuple[dt.datetime, dt.datetime, str]:
        """Which of two decisions on one item is later: decided_at, then the order they were recorded,
        then (two writers in the same microsecond) the decision id."""
        return (self.decided_at, self.recorded_at or self.decided_at, self.decision_id)

    @property
    def item(self) -> tuple[str, ...]:
        """The item decided: decisions with the same item replace each other (latest wins)."""
        if self.kind == "flag":
            return ("flag", self.system, self.task_id, str(self.flag_index))
        if self.kind == "verdict":
            return ("verdict", self.system, self.task_id, str(self.criterion_id), str(self.judge))
        return ("criterion", self.system, self.task_id, str(self.criterion_id))

    @property
    def submission_id(self) -> str:
        """`<system>::<task_id>`, as in the run's tables."""
        return f"{self.system}::{self.task_id}"

    def file_name(self) -> str:
        """Sortable by time, unique by id: ``<UTC time>-<decision id>.json``."""
        return f"{self.decided_at.astimezone(dt.UTC).strftime('%Y%m%dT%H%M%S%fZ')}-{self.decision_id}.json"


class AdjudicationLoad(BaseModel):
    """Every decision recorded for a run, and the files that could not be read (`file: reason`)."""

    decisions: list[Adjudication] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)

    def latest(self) -> dict[tuple[str, ...], Adjudication]:
        """The decision in force per item (`in_force`); an item still awaiting a reviewer or a
        lead's resolution has none."""
        return in_force(self.decisions)


def same_call(a: Adjudication, b: Adjudication) -> bool:
    """Two decisions say the same thing about their item (decision and, when given, materiality)."""
    return (a.decision, a.materiality) == (b.decision, b.materiality)


def campaign_outcome(decisions: Sequence[Adjudication]) -> Adjudication | None | Literal["pending", "split"]:
    """The outcome of one item's decisions in one campaign: the decision in force, ``pending``
    (fewer than k reviewers decided) or ``split`` (they disagree: the lead's resolution queue).

    Each reviewer's latest decision counts once; the latest lead resolution overrides them."""
    ordered = sorted(decisions, key=Adjudication.order)
    resolutions = [d for d in ordered if d.resolution]
    if resolutions:
        return resolutions[-1]
    mine: dict[str, Adjudication] = {}
    for d in ordered:
        mine[d.reviewer] = d
    k = max((d.required or 1) for d in ordered)
    calls = sorted(mine.values(), key=Adjudication.order)
    if not calls:
        return "pending"
    if any(not same_call(calls[0], d) for d in calls[1:]):
        return "split"
    return calls[-1] if len(calls) >= k else "pending"


def in_force(decisions: Sequence[Adjudication]) -> dict[tuple[str, ...], Adjudication]:
    """The decision in force per item, the one rule every reader applies (reduce, report, calibrate,
    show, the review page).

    Why not simply the latest: in a campaign that asks k reviewers per item, one reviewer's call is
    not yet the publisher's, and two who disagree need the lead. So, per item: a lead's resolution
    (the latest) is in force; else, in the item's latest campaign, the unanimous call of k distinct
    reviewers; else nothing (pending or split). Decisions outside any campaign (`tribunal
    adjudicate`, the single-user page) keep the rule they always had: the latest is in force, and
    a later one outside a campaign replaces a campaign's outcome."""
    by_item: dict[tuple[str, ...], list[Adjudication]] = {}
    for d in sorted(decisions, key=Adjudication.order):
        by_item.setdefault(d.item, []).append(d)
    out: dict[tuple[str, ...], Adjudication] = {}
    for key, items in by_item.items():
        last = items[-1]
        if last.campaign_id is None:
            out[key] = last
            continue
        outcome = campaign_outcome([d for d in items if d.campaign_id == last.campaign_id])
        if isinstance(outcome, Adjudication):
            out[key] = outcome
    return out


def claim_hash(span: str) -> str:
    """The identity of a flag's claim: a decision on flag N holds only while flag N is this claim."""
    return hashlib.sha256(span.encode()).hexdigest()[:16]


def folder(run_uri: str) -> str:
    """The run's decisions folder."""
    return folder_of(run_uri).adjudications


def record(run_uri: str, decision: Adjudication, endpoint_override: str | None = None) -> str:
    """Write one decision as a new object; returns its URI. Never overwrites (ids are unique)."""
    return record_all(run_uri, [decision], endpoint_override)[0]


def record_all(run_uri: str, decisions: Sequence[Adjudication], endpoint_override: str | None = None) -> list[str]:
    """Write several decisions, one object each, in order; all or none.

    Every id is checked first (unique in the batch, new in the run), so a write fails only on a
    storage error; then the objects this call wrote are removed again, so a failed import leaves
    nothing (the documented promise). `recorded_at` is stamped one microsecond apart in the given
    order: decisions dated alike are in force in the order they were recorded."""
    root = folder(run_uri)
    ids = [d.decision_id for d in decisions]
    dup = next((i for i in ids if ids.count(i) > 1), None)
    if dup is not None:
        raise InputError(root, f"decision id {dup!r} is given twice (decision ids must be unique)")
    existing = fs.list_files(root, suffix=".json", endpoint_override=endpoint_override) \
        if fs.is_dir(root, endpoint_override) else []
    taken = {fs.basename(u).removesuffix(".json").partition("-")[2] for u in existing}  # <time>-<id>.json
    clash = next((i for i in ids if i in taken), None)
    if clash is not None:
        raise InputError(root, f"a decision with id {clash!r} already exists (decision ids must be unique)")
    now = dt.datetime.now(dt.UTC)
    written: list[str] = []
    try:
        for k, d in enumerate(decisions):
            stamped = d.model_copy(update={"recorded_at": now + dt.timedelta(microseconds=k)})
            uri = fs.join(root, stamped.file_name())
            if not fs.write_new(uri, stamped.model_dump_json(indent=1).encode(), endpoint_override):
                raise InputError(uri, "a decision with this id already exists (decision ids must be unique)")
            written.append(uri)
    except (OSError, TribunalError):
        _remove(written, endpoint_override)
        raise
    return written


def _remove(uris: Sequence[str], endpoint_override: str | None) -> None:
    """Take back what a failed import wrote (best effort: a later reduce lists what remains)."""
    for uri in uris:
        filesystem, path = fs.resolve(uri, endpoint_override)
        try:
            filesystem.delete_file(path)
        except OSError:
            pass


def run_id_of(run_uri: str, endpoint_override: str | None = None) -> str | None:
    """The run's id from its run.json (None when it cannot be read: then no decision is set aside for it)."""
    try:
        value = json.loads(fs.read_bytes(folder_of(run_uri).record, endpoint_override)).get("run_id")
    except (OSError, ValueError, AttributeError, TribunalError):
        return None
    return value if isinstance(value, str) else None


def foreign(uri: str, decision: Adjudication, run_id: str | None) -> str | None:
    """Why a stored decision is set aside because it was recorded for another run, or None."""
    if run_id is None or decision.run_id == run_id:
        return None
    return f"{uri}: recorded for run {decision.run_id}, not this run ({run_id}); set aside"


def first_line(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        errors = exc.errors()
        if errors:
            loc = ".".join(str(p) for p in errors[0]["loc"])
            msg = str(errors[0]["msg"]).removeprefix("Value error, ")
            return f"{loc}: {msg}" if loc else msg
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def load(run_uri: str, endpoint_override: str | None = None) -> AdjudicationLoad:
    """Every decision under the run's folder; a damaged file, or one of another run, is named in
    `problems` (set aside), never fatal."""
    out = AdjudicationLoad()
    root = folder(run_uri)
    if not fs.is_dir(root, endpoint_override):
        return out
    run_id = run_id_of(run_uri, endpoint_override)
    for uri in sorted(fs.list_files(root, suffix=".json", endpoint_override=endpoint_override)):
        if fs.is_hidden(fs.relative(uri, root), "run"):
            continue
        try:
            decision = Adjudication.model_validate_json(fs.read_bytes(uri, endpoint_override))
        except (ValidationError, ValueError, OSError) as exc:
            out.problems.append(f"{uri}: not a readable decision ({first_line(exc)}); ignored")
            continue
        why = foreign(uri, decision, run_id)
        if why is not None:
            out.problems.append(why)
        else:
            out.decisions.append(decision)
    return out


# --------------------------------------------------------------------------------------------
# Applying the decisions in force to a run's current gradings (the reduction calls this)
# --------------------------------------------------------------------------------------------


class Rescored(BaseModel):
    """One submission whose scores an adjudication changed (or confirmed): before and after."""

    model_config = ConfigDict(extra="forbid")

    submission_id: str
    system: str
    task_id: str
    decisions: int = Field(description="Decisions in force on this submission's items.")
    task_score_before: float | None
    task_score_after: float | None
    hc_score_before: float | None
    hc_score_after: float | None
    needs_audit: bool = Field(
        default=False, description="A decision lifted an unaudited score above zero: the audit never ran on it."
    )


class Effect(BaseModel):
    """What the decisions in force did to a run: items per system, and every rescored submission."""

    model_config = ConfigDict(extra="forbid")

    decisions_in_force: int = 0
    by_system: dict[str, int] = Field(default_factory=dict)
    rescored: list[Rescored] = Field(default_factory=list)
    unmatched: list[str] = Field(default_factory=list, description="Decisions naming no item of the run.")


_SCORE_COLUMNS = (
    "task_score", "all_pass_judges", "criterion_pass_rate", "near_pass_1", "near_pass_2",
    "material_flags", "minor_flags", "gated", "hc_score",
)


@dataclass(frozen=True)
class GradingInputs:
    """What the scoring rules read of one grading: its panel's verdicts, its flags' outcomes and
    claims, and whether it was audited.

    Why its own value: the reduction rescores each adjudicated submission once, but the review's
    impact ordering asks hundreds of what-ifs of the same submission; reading its rows once and
    rescoring them in memory (`rescore`) keeps both on the same rules without a query per what-if.
    """

    panel: dict[str, list[tuple[str, scoring.Verdict, str | None]]]
    flags: dict[int, scoring.FlagOutcome]
    claims: dict[int, str] | None
    """Each flag's `claim_hash`; None when the rows carried no spans (a decision's claim is then not checked)."""
    audited: bool


def grading_inputs(
    verdict_rows: Iterable[tuple[object, object, object]], flag_rows: Iterable[tuple[object, ...]], audited: bool,
    *, spans: bool = True,
) -> GradingInputs:
    """One grading's `GradingInputs` from its verdict rows (judge, criterion_id, verdict) and flag
    rows (flag_index, status, materiality, span), in the order the panel lists them."""
    panel: dict[str, list[tuple[str, scoring.Verdict, str | None]]] = {}
    for judge, cid, verdict in verdict_rows:
        panel.setdefault(str(judge), []).append((str(cid), verdict, None))  # type: ignore[arg-type]
    flags: dict[int, scoring.FlagOutcome] = {}
    claims: dict[int, str] = {}
    for index, fstatus, materiality, span in flag_rows:
        flags[int(index)] = scoring.FlagOutcome(str(fstatus), materiality)  # type: ignore[call-overload, arg-type]
        claims[int(index)] = claim_hash(str(span or ""))  # type: ignore[call-overload]
    return GradingInputs(panel=panel, flags=flags, claims=claims if spans else None, audited=audited)


def on_grading(decisions: Sequence[Adjudication], grading_id: str, sid: str) -> tuple[list[Adjudication], list[str]]:
    """The decisions made on `grading_id` (or on no named grading), and why each other one is set aside."""
    kept: list[Adjudication] = []
    aside: list[str] = []
    for d in decisions:
        if d.grading_id is not None and d.grading_id != grading_id:
            aside.append(f"{d.kind} {'/'.join(d.item[1:])}: set aside: made on grading {d.grading_id}, "
                         f"which a later sweep replaced (the current grading of {sid} is {grading_id}); "
                         "decide it again on the current grading")
        else:
            kept.append(d)
    return kept, aside


@dataclass(frozen=True)
class Rescoring:
    """One submission rescored under decisions (`rescore`)."""

    scores: scoring.SubmissionScores
    unmatched: list[str]
    """Decisions naming no verdict, criterion or flag of the grading, or a flag that is now another claim."""
    needs_audit: bool
    """A decision lifted an unaudited score above zero: the audit never ran on it."""


def rescore(inputs: GradingInputs, decisions: Sequence[Adjudication], sid: str) -> Rescoring:
    """The submission's scores with `decisions` (all on its current grading) applied by the rules in
    `scoring`: flags by `adjudicated_flag`, verdicts by `adjudicated_panel`, then `adjudicated_scores`."""
    unmatched: list[str] = []
    panel = inputs.panel
    verdict_decisions = {(str(d.judge), str(d.criterion_id)): d.decision for d in decisions if d.kind == "verdict"}
    criterion_decisions = {str(d.criterion_id): d.decision for d in decisions if d.kind == "criterion"}
    known = {(j, cid) for j, rows in panel.items() for cid, _, _ in rows}
    criteria = {cid for _, cid in known}
    for d in decisions:
        if d.kind == "verdict" and (str(d.judge), str(d.criterion_id)) not in known:
            unmatched.append(f"verdict {'/'.join(d.item[1:])}: no such verdict in {sid}")
        if d.kind == "criterion" and str(d.criterion_id) not in criteria:
            unmatched.append(f"criterion {'/'.join(d.item[1:])}: no such criterion in {sid}")
    sub_flags = dict(inputs.flags)
    for d in decisions:
        if d.kind != "flag":
            continue
        index = int(d.flag_index or 0)
        if index not in sub_flags:
            unmatched.append(f"flag {'/'.join(d.item[1:])}: no such flag in {sid}")
            continue
        if d.claim_hash is not None and inputs.claims is not None and inputs.claims.get(index) != d.claim_hash:
            unmatched.append(f"flag {'/'.join(d.item[1:])}: set aside: flag {index} of {sid} is now "
                             "another claim than the one decided")
            continue
        sub_flags[index] = scoring.adjudicated_flag(
            sub_flags[index], d.decision, d.materiality  # type: ignore[arg-type]
        )
    new_panel = scoring.adjudicated_panel(panel, verdict_decisions, criterion_decisions)  # type: ignore[arg-type]
    scores = scoring.adjudicated_scores(new_panel, list(sub_flags.values()), inputs.audited)
    needs_audit = (not inputs.audited and bool(scores.task_score)
                   and bool(scoring.is_passing(float(scores.task_score or 0))))
    return Rescoring(scores=scores, unmatched=unmatched, needs_audit=needs_audit)


def apply(con: duckdb.DuckDBPyConnection, current: pa.Table, latest: dict[tuple[str, ...], Adjudication]) -> tuple[pa.Table, Effect]:
    """The current gradings with every adjudicated submission rescored by the rules in `scoring`.

    `con` holds the run's raw tables as views ``verdicts_in`` and ``flags_in``; they are read only
    for the adjudicated submissions' current gradings. Decisions for submissions that are not
    complete are listed as unmatched (an incomplete grading is regraded, not adjudicated).
    """
    effect = Effect(decisions_in_force=len(latest))
    if not latest:
        return current, effect
    by_sub: dict[str, list[Adjudication]] = {}
    for d in latest.values():
        by_sub.setdefault(d.submission_id, []).append(d)
        effect.by_system[d.system] = effect.by_system.get(d.system, 0) + 1
    ids = current.column("submission_id").to_pylist()
    status = current.column("status").to_pylist()
    grading = current.column("grading_id").to_pylist()
    row_of = {sid: k for k, sid in enumerate(ids)}
    targets = {sid: row_of[sid] for sid in by_sub if sid in row_of and status[row_of[sid]] == "complete"}
    for sid, decisions in by_sub.items():
        if sid not in targets:
            effect.unmatched.extend(f"{d.kind} {'/'.join(d.item[1:])}: no complete grading of {sid}" for d in decisions)
    for sid, k in list(targets.items()):
        kept, aside = on_grading(by_sub[sid], str(grading[k]), sid)
        effect.unmatched.extend(aside)
        by_sub[sid] = kept
        if not kept:
            del targets[sid]
    if not targets:
        return current, effect
    gids = [grading[k] for k in targets.values()]
    con.register("_adj_gradings", pa.table({"grading_id": gids}))
    verdict_rows = con.sql(
        "SELECT grading_id, judge, criterion_id, verdict FROM verdicts_in "
        "WHERE grading_id IN (SELECT grading_id FROM _adj_gradings)"
    ).fetchall()
    span = "span" if "span" in con.sql("SELECT * FROM flags_in LIMIT 0").columns else "NULL"  # a view without spans
    flag_rows = con.sql(
        f"SELECT grading_id, flag_index, status, materiality, {span} FROM flags_in "
        "WHERE grading_id IN (SELECT grading_id FROM _adj_gradings)"
    ).fetchall()
    con.unregister("_adj_gradings")
    verdicts_of: dict[str, list[tuple[object, object, object]]] = {}
    for gid, judge, cid, verdict in verdict_rows:
        verdicts_of.setdefault(str(gid), []).append((judge, cid, verdict))
    flags_of: dict[str, list[tuple[object, ...]]] = {}
    for gid, index, fstatus, materiality, claim in flag_rows:
        flags_of.setdefault(str(gid), []).append((index, fstatus, materiality, claim))
    columns = {name: current.column(name).to_pylist() for name in _SCORE_COLUMNS if name in current.column_names}
    audited = current.column("audited").to_pylist()
    for sid, k in targets.items():
        gid = str(grading[k])
        decisions = by_sub[sid]
        inputs = grading_inputs(verdicts_of.get(gid, []), flags_of.get(gid, []), bool(audited[k]),
                                spans=span != "NULL")
        result = rescore(inputs, decisions, sid)
        effect.unmatched.extend(result.unmatched)
        scores = result.scores
        before_task, before_hc = columns["task_score"][k], columns["hc_score"][k]
        if scores.complete:
            for name, value in (
                ("task_score", scores.task_score), ("all_pass_judges", scores.all_pass_judges),
                ("criterion_pass_rate", scores.criterion_pass_rate), ("near_pass_1", scores.near_pass_1),
                ("near_pass_2", scores.near_pass_2), ("material_flags", scores.material),
                ("minor_flags", scores.minor), ("gated", scores.gated), ("hc_score", scores.hc_score),
            ):
                if name in columns:  # the reduction reads only some of the score columns
                    columns[name][k] = value
        effect.rescored.append(Rescored(
            submission_id=sid, system=decisions[0].system, task_id=decisions[0].task_id, decisions=len(decisions),
            task_score_before=before_task, task_score_after=columns["task_score"][k],
            hc_score_before=before_hc, hc_score_after=columns["hc_score"][k], needs_audit=result.needs_audit,
        ))
    out = current
    for name, values in columns.items():
        idx = out.schema.get_field_index(name)
        out = out.set_column(idx, out.schema.field(idx), pa.array(values, type=out.schema.field(idx).type))
    effect.rescored.sort(key=lambda r: r.submission_id)
    return out, effect
