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
from jobs.review.accounts import USERS_ENV

if TYPE_CHECKING:
    from evalcore.results.adjudications import Adjudication

RUN_HELP = "Run folder written by `sweep`: a local path or s3://bucket/prefix/<run_id>."


def review(
    run: Annotated[str, typer.Argument(help=RUN_HELP)],
    port: Annotated[int, typer.Option("--port", help="Port to listen on (0: a free one, printed).")] = 0,
    host: Annotated[str, typer.Option("--host", help="Address to listen on. Another address than the loopback "
                                                      "needs --users and TLS (or --insecure).")] = "127.0.0.1",
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
    users: Annotated[str | None, typer.Option(
        "--users", help="The users file (`tribunal review-users`): a team's page, every route behind a sign-in. "
                        f"Default: ${USERS_ENV} when set; without either, the single-user page (127.0.0.1 only).")] = None,
    tls_cert: Annotated[str | None, typer.Option("--tls-cert", help="TLS certificate (PEM) to serve HTTPS with.")] = None,
    tls_key: Annotated[str | None, typer.Option("--tls-key", help="TLS private key (PEM) of --tls-cert.")] = None,
    insecure: Annotated[bool, typer.Option(
        "--insecure", help="Serve on a non-loopback address without TLS or accounts anyway (every page says so).")] = False,
    oidc_issuer: Annotated[str | None, typer.Option(
        "--oidc-issuer", help="OpenID Connect issuer URL (Entra ID, Okta, Google…): adds single sign-on.")] = None,
    oidc_client_id: Annotated[str | None, typer.Option("--oidc-client-id", help="This application's client id.")] = None,
    oidc_secret_env: Annotated[str, typer.Option(
        "--oidc-secret-env", help="The environment variable holding the client secret.")] = "TRIBUNAL_OIDC_SECRET",
    secret_env: Annotated[str, typer.Option(
        "--secret-env", help="The environment variable holding the key sessions are signed with (give every server "
                             "of one review the same; unset: a new key per start, so a restart signs everyone out).")]
        = "TRIBUNAL_REVIEW_SECRET",
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
    import os

    from jobs.review import accounts
    from jobs.review.app import serve
    from jobs.review.auth import Access, OidcSettings, Sessions, serving_problem
    from jobs.review.state import ReviewState

    console = Console()
    if (tls_cert is None) != (tls_key is None):
        raise typer.BadParameter("give both --tls-cert and --tls-key", param_hint="--tls-cert")
    users_file = accounts.users_path(users) if (users or os.environ.get(USERS_ENV)) else None
    tls = (tls_cert, tls_key) if tls_cert and tls_key else None
    problem = serving_problem(host, tls=tls is not None, accounts_on=users_file is not None, insecure=insecure)
    if problem is not None:
        print_error(problem)
        raise typer.Exit(EXIT_BAD_INPUT)
    access = Access()
    try:
        if users_file is not None:
            accounts.refuse_inside_run(users_file, run)
            if not accounts.load(users_file).accounts:
                raise InputError(str(users_file), "no account yet: add one with `tribunal review-users add NAME "
                                                  f"--role lead --users {users_file}`")
            if oidc_issuer and not oidc_client_id:
                raise typer.BadParameter("--oidc-issuer needs --oidc-client-id", param_hint="--oidc-client-id")
            oidc = OidcSettings(oidc_issuer, str(oidc_client_id), oidc_secret_env) if oidc_issuer else None
            if oidc is not None:
                oidc.secret()  # a missing secret is said now, not at the first sign-in
            access = Access(sessions=Sessions(users_file, os.environ.get(secret_env) or None, secure=tls is not None),
                            oidc=oidc)
        elif oidc_issuer:
            raise typer.BadParameter("single sign-on needs a users file (--users) saying who may sign in as what",
                                     param_hint="--oidc-issuer")
        if insecure and not serving_problem(host, tls=True, accounts_on=True, insecure=False):
            lacking = [w for w, ok in (("TLS", tls is not None), ("accounts", users_file is not None)) if not ok]
            if lacking and not _loopback(host):
                access.insecure = (f"served on {host} without {' and '.join(lacking)} (--insecure): anyone on the "
                                   "network can read this traffic and, without accounts, record decisions")
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
        serve(state, host, port, ready, allowed_hosts=allowed_host or (), access=access, tls=tls)
    except OSError as exc:
        print_error(f"{host}:{port}: cannot listen ({exc.strerror or exc})")
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    except KeyboardInterrupt:
        pass


def _loopback(host: str) -> bool:
    from jobs.review.auth import is_loopback

    return is_loopback(host)


users_app = typer.Typer(help="Manage the accounts of a team's review page (`tribunal review --users FILE`).",
                        no_args_is_help=True)
USERS_HELP = ("The users file (default: $TRIBUNAL_REVIEW_USERS, else ~/.config/tribunal/review-users.json); kept "
              "out of any run folder, mode 0600.")


@users_app.command("add")
def users_add(
    name: Annotated[str, typer.Argument(help="The account name (letters, digits, ._@+-; an e-mail address fits).")],
    role: Annotated[str, typer.Option("--role", help="reviewer | lead | admin.")] = "reviewer",
    email: Annotated[str | None, typer.Option("--email", help="Sign-in by OpenID Connect with this e-mail "
                                                              "(no password needed then).")] = None,
    no_password: Annotated[bool, typer.Option("--no-password", help="OpenID Connect only (needs --email).")] = False,
    users: Annotated[str | None, typer.Option("--users", help=USERS_HELP)] = None,
) -> None:
    """Add an account: the password is asked twice (or read from TRIBUNAL_REVIEW_PASSWORD) and stored as an Argon2id hash.

    Example: `tribunal review-users add alice --role lead`
    """
    import os

    from jobs.review import accounts

    if role not in accounts.ROLES:
        raise typer.BadParameter(f"{role}: one of {', '.join(accounts.ROLES)}", param_hint="--role")
    password: str | None = None
    if not no_password:
        password = os.environ.get("TRIBUNAL_REVIEW_PASSWORD") or typer.prompt(
            f"password for {name}", hide_input=True, confirmation_prompt=True)
    path = accounts.users_path(users)
    try:
        account = accounts.add(path, name, role, password, email)
    except TribunalError as exc:
        print_error(exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    Console().print(Text(f"added {account.name} ({account.role}) to {path}"))


@users_app.command("list")
def users_list(users: Annotated[str | None, typer.Option("--users", help=USERS_HELP)] = None) -> None:
    """List the accounts: name, role, how they sign in, enabled or not."""
    from rich.table import Table

    from jobs.review import accounts

    path = accounts.users_path(users)
    try:
        found = accounts.load(path)
    except TribunalError as exc:
        print_error(exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    table = Table("account", "role", "sign-in", "state", "created (UTC)", title=str(path))
    for a in found.accounts:
        how = ", ".join([w for w, ok in (("password", a.password_hash), (f"OpenID {a.email}", a.email)) if ok])
        table.add_row(a.name, a.role, how, "disabled" if a.disabled else "enabled", a.created_at.strftime("%Y-%m-%d %H:%M"))
    Console().print(table)


@users_app.command("disable")
def users_disable(
    name: Annotated[str, typer.Argument(help="The account to disable.")],
    users: Annotated[str | None, typer.Option("--users", help=USERS_HELP)] = None,
) -> None:
    """Disable an account: it cannot sign in, and its open sessions end at their next request."""
    from jobs.review import accounts

    path = accounts.users_path(users)
    try:
        accounts.disable(path, name)
    except TribunalError as exc:
        print_error(exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    Console().print(Text(f"disabled {name} in {path}"))


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
    export: Annotated[str | None, typer.Option(
        "--export", help="Write the review's audit trail (sign-ins, campaigns, assignments, reservations, decisions, "
                         "resolutions) to this .csv or .jsonl file (- : CSV to the terminal), and record nothing.")] = None,
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
    if export is not None:
        _export(run, export, endpoint_url, console)
        return
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


def _export(run: str, target: str, endpoint_url: str | None, console: Console) -> None:
    """`tribunal adjudicate RUN --export FILE`: the trail and every decision, as CSV or JSONL."""
    from pathlib import Path

    from evalcore.results import review_trail
    from evalcore.storage.run import open_run

    try:
        rows = review_trail.export_rows(review_trail.read(run, endpoint_url), open_run(run, endpoint_url).read_decisions().decisions)
    except TribunalError as exc:
        print_error(exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    if target == "-":
        typer.echo(review_trail.to_csv(rows), nl=False)
        return
    if not target.endswith((".csv", ".jsonl")):
        raise typer.BadParameter(f"{target}: name a .csv or .jsonl file", param_hint="--export")
    text = review_trail.to_jsonl(rows) if target.endswith(".jsonl") else review_trail.to_csv(rows)
    try:
        Path(target).write_text(text, encoding="utf-8")
    except OSError as exc:
        print_error(f"{target}: cannot write ({exc.strerror or exc})")
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    console.print(Text(f"{len(rows)} event(s) of {run} written to {target}"))


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
