"""The review queue of a run: which items an expert should look at, in which order, and their rows.

Order (docs/REVIEW.md):

1. **material flags** — confirmed hallucinations that count as material (`counted_materiality`)
   in complete current gradings: one of them zeroes a task, so they move scores;
2. **split criteria** — a criterion of a submission on which the judges disagree (some pass, some
   fail): the panel's own uncertainty, where an expert's call is worth most;
3. **a calibration sample** — K of the other items: up to half of them flags Stage 2 rejected or
   found minor (the auditor's calls), the rest single judges' verdicts on criteria where the panel
   agreed (the judges' calls). Within each kind, the items whose md5 of the seed and their identity
   is smallest: the same seed gives the same sample on every machine, and a sweep-sized verdict
   table is sampled in one streaming top-K query.
4. **whole submissions** (`--full K`, none by default) — the first K complete submissions of the
   seeded random order (`evalcore.results.corrected.sample_order`), one submission at a time:
   every criterion (for the whole panel) and every flag (merged ones aside) of it. Labelled whole,
   they are the uniform random sample `tribunal reduce --corrected` corrects the judges' rates with.
   This section is never reordered by impact: the order is what makes the sample uniform.

Only complete current gradings (`current_gradings`) are reviewed: an incomplete grading is
regraded, not adjudicated. Rows of one grading are read from its shard (every table of a shard
is written under the same name by `write_shard`), so an item page reads one file per table
instead of scanning a sweep-sized table; the whole table is scanned only when that fails.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads

from evalcore.errors import StorageError
from evalcore.grading.scoring import counted_materiality
from evalcore.results.adjudications import Adjudication, ItemKind, claim_hash
from evalcore.results.corrected import sample_order
from evalcore.results.reduce import TableSource, current_gradings
from evalcore.storage import fs
from evalcore.storage.run import open_run
from evalcore.storage.store import RunRecord, arrow_schema

Section = Literal["material", "split", "sample", "full"]
SECTION_LABELS: dict[str, str] = {
    "material": "material flag (moves the score)",
    "split": "judges split on this criterion",
    "sample": "calibration sample",
    "full": "whole-submission sample (decide every item)",
}

VERDICT_COLUMNS = ["grading_id", "criterion_id", "judge", "judge_family", "judge_model", "verdict", "reasoning",
                   "abstain_reason"]
FLAG_COLUMNS = ["grading_id", "flag_index", "deliverable", "span", "location", "category", "evidence_document",
                "evidence_passage", "evidence_page", "explanation", "origin", "status", "merged_into", "materiality",
                "rationale", "auditor", "auditor_model"]

_PROBE_DECISION: dict[str, Any] = {"flag": "upheld", "verdict": "pass", "criterion": "pass"}


def item_key(
    kind: ItemKind, system: str, task_id: str, flag_index: int | None = None, criterion_id: str | None = None,
    judge: str | None = None,
) -> tuple[str, ...]:
    """The identity decisions on this item share (`Adjudication.item`, asked of the model itself)."""
    return Adjudication(
        run_id="-", kind=kind, system=system, task_id=task_id, flag_index=flag_index, criterion_id=criterion_id,
        judge=judge, decision=_PROBE_DECISION[kind], reviewer="-", reason="-",
    ).item


@dataclass(frozen=True)
class QueueItem:
    """One item to review: a flag, one judge's verdict on a criterion, or a criterion of the panel."""

    n: int
    """Position in the queue (the item's page is /item/<n>)."""
    section: Section
    kind: ItemKind
    system: str
    task_id: str
    area: str
    grading_id: str
    key: tuple[str, ...]
    flag_index: int | None = None
    criterion_id: str | None = None
    judge: str | None = None
    category: str | None = None
    """Flags: the hallucination category (the category filter applies to flags only)."""
    score_change: float = 0.0
    """The most one decision on it can move its submission's hc score (`impact.rank_by_impact`);
    for a material flag, what overturning the submission's material flags would lift the gate by."""
    task_change: float = 0.0
    """The same for the task score (a decision on a gated submission can move it without moving hc)."""

    @property
    def moves_score(self) -> bool:
        """A decision on it can change a task score or the gate."""
        return self.score_change > 0 or self.task_change > 0

    @property
    def label(self) -> str:
        """How the item is named on a page: ``flag 2``, ``C-003``, ``C-003 / openai``."""
        if self.kind == "flag":
            return f"flag {self.flag_index}"
        if self.kind == "verdict":
            return f"{self.criterion_id} / {self.judge}"
        return str(self.criterion_id)

    def matches(self, system: str | None = None, task: str | None = None, category: str | None = None) -> bool:
        """True when the item passes the filters (an empty filter passes everything)."""
        return (
            (not system or self.system == system)
            and (not task or self.task_id == task)
            and (not category or self.category == category)
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "n": self.n, "section": self.section, "kind": self.kind, "system": self.system, "task_id": self.task_id,
            "area": self.area, "flag_index": self.flag_index, "criterion_id": self.criterion_id, "judge": self.judge,
            "category": self.category, "key": list(self.key), "score_change": self.score_change,
            "task_change": self.task_change,
        }


@dataclass(frozen=True)
class GradingRows:
    """The verdict and flag rows of one grading (the columns an item page and the rescoring read)."""

    verdicts: pa.Table
    flags: pa.Table


def _empty(table: str, columns: Sequence[str]) -> pa.Table:
    return arrow_schema(table).empty_table().select(list(columns))


class RunData:
    """A run opened for review: its record, its current gradings, and the rows of one grading on demand.

    Reads go through the run's API (`evalcore.storage.run`), so a local folder and an
    ``s3://`` run behave the same. Thread-safe: the web application serves pages from a thread pool.
    """

    def __init__(self, run_uri: str, endpoint_override: str | None = None, cache_size: int = 256) -> None:
        self.run_uri = run_uri.rstrip("/")
        self.endpoint = endpoint_override
        self.run = open_run(self.run_uri, endpoint_override)
        self.record: RunRecord = self.run.read_record()
        submissions = self.run.dataset("submissions")
        if submissions is None:
            raise StorageError(f"{self.run.table('submissions')}: no graded submissions in this run yet")
        self.verdicts: TableSource | None = self.run.dataset("verdicts")
        self.flags: TableSource | None = self.run.dataset("flags")
        columns = arrow_schema("submissions").names
        if isinstance(submissions, pads.Dataset):
            raw = submissions.to_table(columns=[*columns, "__filename"])
            shards = [fs.basename(p).removesuffix(".parquet") for p in raw.column("__filename").to_pylist()]
            raw = raw.drop_columns(["__filename"]).append_column("shard", pa.array(shards, pa.string()))
        else:
            raw = submissions.append_column("shard", pa.nulls(submissions.num_rows, pa.string()))
        self.current: pa.Table = current_gradings(raw).sort_by([("submission_id", "ascending")])
        gids = self.current.column("grading_id").to_pylist()
        self._row_of: dict[str, int] = {g: k for k, g in enumerate(gids)}
        self._sub_row: dict[tuple[str, str], int] = {
            (s, t): k for k, (s, t) in enumerate(zip(
                self.current.column("system").to_pylist(), self.current.column("task_id").to_pylist(), strict=True))
        }
        self._cache: OrderedDict[str, GradingRows] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    @property
    def run_id(self) -> str:
        return self.record.run_id

    def systems(self) -> list[str]:
        return sorted(set(self.current.column("system").to_pylist()))

    def tasks(self) -> list[str]:
        return sorted(set(self.current.column("task_id").to_pylist()))

    def complete(self) -> pa.Table:
        """The current gradings that are scored (status complete)."""
        return self.current.filter(pc.equal(self.current.column("status"), "complete"))

    def grading_of(self, system: str, task_id: str) -> str | None:
        """The current grading id of a submission, or None when the run has none."""
        k = self._sub_row.get((system, task_id))
        return None if k is None else str(self.current.column("grading_id")[k].as_py())

    def row(self, grading_id: str) -> dict[str, Any]:
        """The current submission row of a grading, as a dict."""
        rows: list[dict[str, Any]] = self.row_table(grading_id).to_pylist()
        return rows[0]

    def row_table(self, grading_id: str) -> pa.Table:
        """The current submission row of a grading, as a one-row table (what `adjudications.apply` takes)."""
        return self.current.slice(self._row_of[grading_id], 1)

    def grading_rows(self, grading_id: str) -> GradingRows:
        """Every verdict and flag row of one grading (cached: an item page and its rescoring share them)."""
        with self._lock:
            if grading_id in self._cache:
                self._cache.move_to_end(grading_id)
                return self._cache[grading_id]
        shard = self.row(grading_id).get("shard")
        verdicts = self._read_shard("verdicts", VERDICT_COLUMNS, grading_id, shard)
        in_shard = verdicts is not None and verdicts.num_rows > 0
        if not in_shard:
            verdicts = self._scan("verdicts", self.verdicts, VERDICT_COLUMNS, grading_id)
        flags = self._read_shard("flags", FLAG_COLUMNS, grading_id, shard) if in_shard else None
        if flags is None:
            # no flags file for the shard: when the verdicts were in the shard, the shard had no flags
            flags = _empty("flags", FLAG_COLUMNS) if in_shard else self._scan("flags", self.flags, FLAG_COLUMNS,
                                                                                grading_id)
        assert verdicts is not None
        rows = GradingRows(verdicts=verdicts.sort_by([("criterion_id", "ascending"), ("judge", "ascending")]),
                           flags=flags.sort_by([("flag_index", "ascending")]))
        with self._lock:
            self._cache[grading_id] = rows
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return rows

    def _read_shard(self, table: str, columns: list[str], grading_id: str, shard: str | None) -> pa.Table | None:
        """The grading's rows from the same-named shard of `table`; None when that file does not exist."""
        if not shard:
            return None
        uri = fs.join(self.run_uri, table, f"{shard}.parquet")
        if not fs.is_file(uri, self.endpoint):
            return None
        filesystem, path = fs.resolve(uri, self.endpoint)
        dataset = pads.dataset([path], schema=arrow_schema(table), format="parquet", filesystem=filesystem)
        return dataset.to_table(columns=columns, filter=pc.field("grading_id") == grading_id)

    @staticmethod
    def _scan(table: str, source: TableSource | None, columns: list[str], grading_id: str) -> pa.Table:
        if source is None:
            return _empty(table, columns)
        if isinstance(source, pads.Dataset):
            return source.to_table(columns=columns, filter=pc.field("grading_id") == grading_id)
        return source.filter(pc.equal(source.column("grading_id"), grading_id)).select(columns)

    def check(self, decisions: Iterable[Adjudication]) -> list[str | None]:
        """For each decision: None when it names an item of the run's complete current gradings, else why not."""
        out: list[str | None] = []
        for d in decisions:
            what = f"{d.kind} {'/'.join(d.item[1:])}"
            gid = self.grading_of(d.system, d.task_id)
            if gid is None:
                out.append(f"{what}: run {self.run_id} has no submission {d.system}::{d.task_id}")
                continue
            if d.grading_id is not None and d.grading_id != gid:
                out.append(f"{what}: made on grading {d.grading_id}, but the current grading of {d.system}::{d.task_id} "
                           f"is {gid} (a later sweep replaced it): decide it again on the current grading")
                continue
            status = self.row(gid)["status"]
            if status != "complete":
                out.append(f"{what}: the current grading of {d.system}::{d.task_id} is {status} "
                           "(an incomplete grading is regraded, not adjudicated)")
                continue
            rows = self.grading_rows(gid)
            if d.kind == "flag":
                indexes = sorted(set(rows.flags.column("flag_index").to_pylist()))
                if d.flag_index not in indexes:
                    listed = ", ".join(str(i) for i in indexes) or "none"
                    out.append(f"{what}: no such flag in the current grading (its flags: {listed})")
                    continue
                if d.claim_hash is not None:
                    spans = dict(zip(rows.flags.column("flag_index").to_pylist(), rows.flags.column("span").to_pylist(),
                                     strict=True))
                    if claim_hash(str(spans[d.flag_index] or "")) != d.claim_hash:
                        out.append(f"{what}: flag {d.flag_index} of the current grading is another claim than the "
                                   "one decided (claim_hash differs)")
                        continue
            else:
                pairs = set(zip(rows.verdicts.column("criterion_id").to_pylist(),
                                rows.verdicts.column("judge").to_pylist(), strict=True))
                criteria = sorted({c for c, _ in pairs})
                if d.criterion_id not in criteria:
                    out.append(f"{what}: no criterion {d.criterion_id!r} in the current grading "
                               f"(its criteria: {', '.join(criteria)})")
                    continue
                if d.kind == "verdict" and (d.criterion_id, d.judge) not in pairs:
                    judges = ", ".join(sorted({j for _, j in pairs}))
                    out.append(f"{what}: no verdict of judge {d.judge!r} (the judges: {judges})")
                    continue
            out.append(None)
        return out


    def identified(self, d: Adjudication) -> Adjudication:
        """The decision naming what it was made on: the current grading of its submission and, for a
        flag, its claim (`claim_hash`), so a later sweep that replaces either sets it aside. Call after
        `check` found the item."""
        gid = self.grading_of(d.system, d.task_id)
        update: dict[str, object] = {"grading_id": gid}
        if d.kind == "flag" and gid is not None:
            flags = self.grading_rows(gid).flags
            spans = dict(zip(flags.column("flag_index").to_pylist(), flags.column("span").to_pylist(), strict=True))
            if d.flag_index in spans:
                update["claim_hash"] = claim_hash(str(spans[d.flag_index] or ""))
        return d.model_copy(update=update)


def _md5(seed: int, *parts: object) -> str:
    """The sample's order: the same string DuckDB's md5() gives for the verdicts."""
    return hashlib.md5("|".join([str(seed), *(str(p) for p in parts)]).encode()).hexdigest()


def build_queue(data: RunData, *, seed: int, sample: int, full: int = 0) -> list[QueueItem]:
    """The run's review queue (module docstring): material flags, split criteria, the sample, then the
    first `full` submissions of the seeded order, whole."""
    if sample < 0 or full < 0:
        raise ValueError("the sample sizes cannot be negative")
    con = duckdb.connect()
    try:
        con.execute("SET threads = 2")
        cur = data.complete().select(["grading_id", "system", "task_id", "area"])
        con.register("cur", cur)
        con.register("flags_in", data.flags if data.flags is not None else _empty("flags", FLAG_COLUMNS))
        con.register("verdicts_in", data.verdicts if data.verdicts is not None else _empty("verdicts", VERDICT_COLUMNS))
        flags = con.sql(
            "SELECT c.system, c.task_id, c.area, c.grading_id, f.flag_index, f.category, f.status, f.materiality "
            "FROM flags_in f JOIN cur c USING (grading_id) WHERE f.status <> 'merged' "
            "ORDER BY c.system, c.task_id, f.flag_index"
        ).fetchall()
        con.execute(
            "CREATE TEMP TABLE split AS SELECT v.grading_id, v.criterion_id FROM verdicts_in v "
            "JOIN cur c USING (grading_id) WHERE v.verdict IN ('pass', 'fail') "
            "GROUP BY ALL HAVING count(DISTINCT v.verdict) = 2"
        )
        split = con.sql(
            "SELECT c.system, c.task_id, c.area, c.grading_id, s.criterion_id FROM split s JOIN cur c USING (grading_id) "
            "ORDER BY c.system, c.task_id, s.criterion_id"
        ).fetchall()
        sampled_verdicts = con.sql(
            "SELECT c.system, c.task_id, c.area, c.grading_id, v.criterion_id, v.judge, "
            "md5(concat(?, '|verdict|', c.system, '|', c.task_id, '|', v.criterion_id, '|', v.judge)) AS h "
            "FROM verdicts_in v JOIN cur c USING (grading_id) "
            "ANTI JOIN split s ON s.grading_id = v.grading_id AND s.criterion_id = v.criterion_id "
            "WHERE v.verdict IN ('pass', 'fail') ORDER BY h LIMIT ?",
            params=[str(seed), sample],
        ).fetchall()
        criteria = con.sql(
            "SELECT DISTINCT v.grading_id, v.criterion_id FROM verdicts_in v JOIN cur c USING (grading_id) ORDER BY ALL"
        ).fetchall() if full else []
    finally:
        con.close()

    items: list[QueueItem] = []

    def add(section: Section, kind: ItemKind, system: str, task_id: str, area: str, gid: str, **extra: Any) -> None:
        key = item_key(kind, system, task_id, extra.get("flag_index"), extra.get("criterion_id"), extra.get("judge"))
        items.append(QueueItem(n=len(items), section=section, kind=kind, system=system, task_id=task_id, area=area,
                               grading_id=gid, key=key, **extra))

    other_flags: list[tuple[str, tuple[Any, ...]]] = []
    for system, task_id, area, gid, index, category, status, materiality in flags:
        if counted_materiality(status, materiality) == "material":
            add("material", "flag", system, task_id, area, gid, flag_index=int(index), category=category)
        else:
            other_flags.append((_md5(seed, "flag", system, task_id, index),
                                ("flag", system, task_id, area, gid, index, category)))
    for system, task_id, area, gid, cid in split:
        add("split", "criterion", system, task_id, area, gid, criterion_id=cid)
    verdicts = [(str(h), ("verdict", system, task_id, area, gid, cid, judge))
                for system, task_id, area, gid, cid, judge, h in sampled_verdicts]
    # up to half the sample from the flags (verdicts outnumber them a hundredfold), the rest verdicts
    n_flags = min(len(other_flags), (sample + 1) // 2)
    chosen = sorted(other_flags)[:n_flags] + verdicts[: sample - n_flags]
    for _, row in sorted(chosen):
        if row[0] == "flag":
            _, system, task_id, area, gid, index, category = row
            add("sample", "flag", system, task_id, area, gid, flag_index=int(index), category=category)
        else:
            _, system, task_id, area, gid, cid, judge = row
            add("sample", "verdict", system, task_id, area, gid, criterion_id=cid, judge=judge)
    if full:
        complete = data.complete()
        where = {(s, t): (a, g) for s, t, a, g in zip(*(complete.column(c).to_pylist() for c in
                                                          ("system", "task_id", "area", "grading_id")), strict=True)}
        crits: dict[str, list[str]] = {}
        for gid, cid in criteria:
            crits.setdefault(str(gid), []).append(str(cid))
        raised: dict[str, list[tuple[int, str]]] = {}
        for _, _, _, gid, index, category, _, _ in flags:
            raised.setdefault(str(gid), []).append((int(index), category))
        for system, task_id in sample_order(seed, where)[:full]:
            area, gid = where[(system, task_id)]
            for cid in crits.get(gid, []):
                add("full", "criterion", system, task_id, area, gid, criterion_id=cid)
            for index, category in raised.get(gid, []):
                add("full", "flag", system, task_id, area, gid, flag_index=index, category=category)
    return items
