"""The commands experts use before a leaderboard is published: `review` (a local web app) and `adjudicate`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.text import Text

from evalcore.errors import InputError, TribunalError
from jobs.cli.common import EXIT_BAD_INPUT, S3_HELP, print_error

if TYPE_CHECKING:
    from evalcore.results.adjudications import Adjudication

RUN_HELP = "Run folder written by `sweep`: a local path or s3://bucket/prefix/<run_id>."


def review(
    run: Annotated[str, typer.Argument(help=RUN_HELP)],
    port: Annotated[int, typer.Option("--port", help="Port to listen on (0: a free one, printed).")] = 0,
    host: Annotated[str, typer.Option("--host", help="Address to listen on. The app has no login: keep it on "
                                                      "127.0.0.1 unless every machine that can reach it may decide.")] = "127.0.0.1",
    allowed_host: Annotated[list[str] | None, typer.Option(
        "--allowed-host", help="A host name the page may be reached by besides the loopback names and --host "
                               "(repeatable): every request with another Host, and every write from another "
                               "Origin, is refused (DNS rebinding).")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of the calibration sample and of the whole-submission order (default: the run's seed).")] = None,
    sample: Annotated[int, typer.Option("--sample", min=0, help="Other items sampled for calibration, after "
                                                                "the material flags and the split criteria.")] = 20,
    full: Annotated[int, typer.Option("--full", min=0, help="Whole submissions to label, after the other sections: "
                                                          "the first K of the seeded random order, every criterion "
                                                          "and flag of each (`tribunal reduce --corrected`).")] = 0,
    benchmark: Annotated[str | None, typer.Option("--benchmark", help="Read the tasks from here instead of the "
                                                                      "benchmark named in run.json.")] = None,
    submissions: Annotated[str | None, typer.Option("--submissions", "-s", help="Read the deliverables from here "
                                                    "instead of the submissions named in run.json.")] = None,
    endpoint_url: Annotated[str | None, typer.Option("--endpoint-url", help=S3_HELP)] = None,
) -> None:
    """Review a run in the browser: experts uphold or overturn flags and verdicts before publishing.

    Serves a local web page (no CDN, works offline) with a queue of material confirmed flags,
    criteria where the judges split and a seeded sample of other flags and verdicts for
    calibration, ordered by impact: the items a decision can change a score or the gate of first,
    largest change first. Each item shows the claim in its deliverable, the auditor's
    explanation and rationale, the cited evidence on its page, every judge's verdict and
    reasoning, and what each decision would change (task score and the system's headline rate).
    Keyboard-first: u uphold, o overturn, m materiality (flags), p pass, f fail (verdicts,
    criteria), then a reason and Enter; s skip, n/j next, k previous. Each decision is written as
    one new object under RUN/adjudications/ (several reviewers at once are safe); `tribunal reduce`
    and `tribunal report` then apply them.

    `--full K` adds, last and in the seeded random order, every criterion and flag of K whole
    submissions, one submission after the other: labelled whole, they are the uniform sample
    `tribunal reduce --corrected` corrects the judges' rates with.

    Example: `tribunal review runs/demo` then open the printed URL
    """
    from jobs.review.app import ReviewState, serve

    console = Console()
    try:
        state = ReviewState(run, endpoint_override=endpoint_url, seed=seed, sample=sample, benchmark=benchmark,
                            submissions=submissions, full=full)
    except TribunalError as exc:
        print_error(exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    counts = state.counts()

    def ready(url: str) -> None:
        console.print(Text.assemble(
            f"reviewing {state.data.run_id}: {len(state.queue)} items ({counts['material']} material flags, "
            f"{counts['split']} split criteria, {counts['sample']} sampled"
            + (f", {full} whole submissions ({counts['full']} items)" if full else "") + f", seed {state.seed}) at ",
            (url, "bold"), " — Ctrl-C to stop"), soft_wrap=True)

    try:
        serve(state, host, port, ready, allowed_hosts=allowed_host or ())
    except OSError as exc:
        print_error(f"{host}:{port}: cannot listen ({exc.strerror or exc})")
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    except KeyboardInterrupt:
        pass


def adjudicate(
    run: Annotated[str, typer.Argument(help=RUN_HELP)],
    file: Annotated[str | None, typer.Option("--file", "-f", help="Import decisions from a .csv (header row of "
                                                                  "field names) or .jsonl file.")] = None,
    kind: Annotated[str | None, typer.Option("--kind", help="flag | verdict (one judge on one criterion) | "
                                                            "criterion (the whole panel).")] = None,
    system: Annotated[str | None, typer.Option("--system", help="Evaluated system.")] = None,
    task: Annotated[str | None, typer.Option("--task", help="Task id.")] = None,
    flag_index: Annotated[int | None, typer.Option("--flag-index", help="Flags: the index in the Stage 1 list.")] = None,
    criterion: Annotated[str | None, typer.Option("--criterion", help="Verdicts and criteria: the criterion id.")] = None,
    judge: Annotated[str | None, typer.Option("--judge", help="Verdicts: the judge (vendor name).")] = None,
    decision: Annotated[str | None, typer.Option("--decision", help="flag: upheld | overturned | materiality; "
                                                                    "verdict, criterion: pass | fail.")] = None,
    materiality: Annotated[str | None, typer.Option("--materiality", help="material | minor (needed with "
                                                                          "--decision materiality).")] = None,
    reviewer: Annotated[str | None, typer.Option("--reviewer", help="Who decides (required).")] = None,
    reason: Annotated[str | None, typer.Option("--reason", help="Why (required).")] = None,
    endpoint_url: Annotated[str | None, typer.Option("--endpoint-url", help=S3_HELP)] = None,
) -> None:
    """Record experts' decisions on a run from the command line, or import a file of them.

    One decision: `--kind flag --system S --task T --flag-index 2 --decision overturned --reviewer
    NAME --reason TEXT`; a judge's verdict: `--kind verdict --criterion C-003 --judge openai
    --decision pass`; a criterion for the whole panel: `--kind criterion --criterion C-003
    --decision fail`. Or `--file decisions.csv` / `.jsonl` with the same fields per row (kind,
    system, task_id, flag_index, criterion_id, judge, decision, materiality, reviewer, reason,
    optionally decided_at, decision_id, grading_id); a CSV as a spreadsheet saves it (byte-order
    mark, CRLF, `;` or tab separators) is read as such. Every decision must name an item of the
    run's complete current gradings (and the grading, if it names one); if any row is wrong
    nothing is recorded and each problem is printed as `file: row N: reason`. Each decision is
    written as one new object under RUN/adjudications/; `tribunal reduce` applies the latest per
    item.

    Example: `tribunal adjudicate runs/demo --file decisions.csv`
    """
    from evalcore.results.decision_files import read_file
    from evalcore.storage.run import open_run
    from jobs.review.queue import RunData

    console = Console()
    single = {"--kind": kind, "--system": system, "--task": task, "--flag-index": flag_index,
              "--criterion": criterion, "--judge": judge, "--decision": decision, "--materiality": materiality,
              "--reviewer": reviewer, "--reason": reason}
    given = [name for name, value in single.items() if value is not None]
    if file is not None and given:
        raise typer.BadParameter(f"--file imports decisions; {', '.join(given)} cannot be given with it", param_hint="--file")
    if file is None and not given:
        raise typer.BadParameter("give one decision (--kind, --system, --task, ... --decision, --reviewer, --reason) "
                                 "or --file FILE", param_hint="--kind")
    try:
        data = RunData(run, endpoint_url)
        if file is not None:
            source = file
            decisions = read_file(file, run_id=data.run_id, endpoint_override=endpoint_url)
            labels = [f"row {k}" for k in range(1, len(decisions) + 1)]
        else:
            source = run
            row = {"kind": kind, "system": system, "task_id": task, "flag_index": flag_index, "criterion_id": criterion,
                   "judge": judge, "decision": decision, "materiality": materiality, "reviewer": reviewer,
                   "reason": reason}
            decisions = [_one(row, data.run_id)]
            labels = ["decision"]
        problems = [f"{label}: {why}" for label, why in zip(labels, data.check(decisions), strict=True) if why]
        if problems:
            raise InputError(source, "\n".join(problems) if file is not None else problems[0].removeprefix("decision: "))
        decisions = [data.identified(d) for d in decisions]  # all checked: only now is anything written
        recorded = list(zip(decisions, open_run(data.run_uri, endpoint_url).record_decisions(decisions), strict=True))
    except TribunalError as exc:
        print_error(exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    for d, uri in recorded:
        what = f"{d.kind} {'/'.join(d.item[1:])}"
        how = d.decision + (f" ({d.materiality})" if d.materiality else "")
        console.print(Text(f"recorded {what}: {how} by {d.reviewer} — {d.reason} -> {uri}"), soft_wrap=True)
    console.print(Text(f"{len(recorded)} decision(s) recorded in {data.run_id}; `tribunal reduce {run}` applies them"))


_OPTION_OF = {"kind": "--kind", "system": "--system", "task_id": "--task", "flag_index": "--flag-index",
              "criterion_id": "--criterion", "judge": "--judge", "decision": "--decision",
              "materiality": "--materiality", "reviewer": "--reviewer", "reason": "--reason"}


def _one(row: Mapping[str, object], run_id: str) -> Adjudication:
    """The decision given as options; a bad one is an error naming the option."""
    from evalcore.results.adjudications import Adjudication

    data = {k: v for k, v in row.items() if v not in ("", None)}
    try:
        return Adjudication.model_validate({**data, "run_id": run_id})
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = [str(p) for p in first["loc"]]
        where = ", ".join(_OPTION_OF.get(p, p) for p in loc) or "the decision"
        message = str(first["msg"]).removeprefix("Value error, ")
        raise InputError(where, message) from None
