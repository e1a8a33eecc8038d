"""The release commands: `tribunal release create|list|diff|latest` and `tribunal publish`."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from evalcore.errors import TribunalError
from jobs.cli.common import EXIT_BAD_INPUT, S3_HELP, FormatOpt, output_format, print_error, use_endpoint
from jobs.display.tables import TableFormat

release_app = typer.Typer(
    help="Immutable, dated releases built from one or more runs (`release create`), listed, compared; "
    "`tribunal publish RELEASE` writes the public site of one.",
    no_args_is_help=True,
)

ReleasesOpt = Annotated[str, typer.Option(
    "--releases", help="The releases folder (local or s3://): one folder per release, and the `latest` pointer.")]
EndpointOpt = Annotated[str | None, typer.Option("--endpoint-url", help=S3_HELP)]


def _named(values: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for v in values:
        system, sep, run = v.partition("=")
        if not sep or not system or not run:
            raise typer.BadParameter(f"{v!r}: give --system SYSTEM=RUN_ID (the run the system is ranked from)")
        out[system] = run
    return out


@release_app.command("create")
def create_cmd(
    name: Annotated[str, typer.Argument(help="The release's name (its folder), e.g. 2026-12 or v3.")],
    run: Annotated[list[str], typer.Option("--run", help="A run folder to build it from (repeat for several).")],
    releases: ReleasesOpt = "releases",
    allow: Annotated[list[str] | None, typer.Option(
        "--allow", help="Accept a difference between the runs on this key (recorded in the release); keys: "
        "benchmark.name, benchmark.version, benchmark.content_hash, benchmark.tasks, judges, auditor, "
        "prompt_hashes, protocol_version, scoring, vendors.")] = None,
    system: Annotated[list[str] | None, typer.Option(
        "--system", help="SYSTEM=RUN_ID: rank a system graded in several runs from this one.")] = None,
    public_task: Annotated[list[str] | None, typer.Option(
        "--public-task", help="A task whose text, deliverables, reasoning and evidence the site may show "
        "(repeat; by default none: the site carries aggregates only).")] = None,
    show_reviewers: Annotated[bool, typer.Option(
        "--show-reviewers", help="Name the reviewers on the site (by default: counted, never named).")] = False,
    latest: Annotated[bool, typer.Option("--latest/--no-latest", help="Move `latest` to this release (only forward).")] = True,
    endpoint_url: EndpointOpt = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print release.json (= --format json).")] = False,
    fmt: FormatOpt = TableFormat.TABLE,
) -> None:
    """Build an immutable release from one or more runs and print its leaderboard.

    The runs must agree on what makes them comparable (benchmark name, version, content and task set;
    judge and auditor models; prompt hashes; protocol version; the scoring configuration; vendor
    mode): a difference refuses the release, naming each, unless accepted with `--allow KEY` (the
    release records it). A system graded in two runs needs `--system SYSTEM=RUN_ID`. The expert
    decisions in force are frozen into it. It is written create-only (never overwritten) and
    `latest` moves to it, only forward.

    Example: `tribunal release create 2026-12 --run runs/run-a --run runs/run-b --releases releases`
    """
    from evalcore.release.model import PublishSettings
    from jobs.display.release import render_created
    from jobs.release.create import create_release

    use_endpoint(endpoint_url)
    fmt = output_format(fmt, json_out)
    console = Console()
    try:
        made = create_release(releases, name, run, allow=allow or [], named=_named(system or []),
                              settings=PublishSettings(public_tasks=public_task or [], show_reviewers=show_reviewers),
                              make_latest=latest, endpoint_override=endpoint_url)
    except TribunalError as exc:
        print_error(exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    if fmt is TableFormat.JSON:
        console.print_json(made.release.model_dump_json())
        return
    render_created(made.release, made.uri, [d.describe() for d in made.compatibility.allowed], made.latest,
                   made.board, console, fmt)


@release_app.command("list")
def list_cmd(releases: ReleasesOpt = "releases", endpoint_url: EndpointOpt = None,
             json_out: Annotated[bool, typer.Option("--json", help="= --format json.")] = False,
             fmt: FormatOpt = TableFormat.TABLE) -> None:
    """Every release of a releases folder, oldest first: date, runs, systems, predecessor, which is `latest`."""
    from jobs.display.release import render_list
    from jobs.release.store import current_latest, list_releases

    use_endpoint(endpoint_url)
    fmt = output_format(fmt, json_out)
    console = Console()
    try:
        found, latest = list_releases(releases, endpoint_url), current_latest(releases, endpoint_url)
    except TribunalError as exc:
        print_error(exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    if fmt is TableFormat.JSON:
        console.print_json(data={"latest": latest.release if latest else None,
                                 "releases": [r.model_dump(mode="json") for r in found]})
        return
    render_list(found, latest, console, fmt)


@release_app.command("diff")
def diff_cmd(old: Annotated[str, typer.Argument(help="The earlier release.")],
             new: Annotated[str, typer.Argument(help="The later release.")],
             releases: ReleasesOpt = "releases", endpoint_url: EndpointOpt = None,
             json_out: Annotated[bool, typer.Option("--json", help="= --format json.")] = False,
             fmt: FormatOpt = TableFormat.TABLE) -> None:
    """What changed from OLD to NEW: systems added or removed, each system's rank (interval, tier) and
    headline rate with its interval, what the runs were graded with, expert decisions added or withdrawn."""
    from jobs.display.release import render_diff
    from jobs.release.diff import diff

    use_endpoint(endpoint_url)
    fmt = output_format(fmt, json_out)
    try:
        d = diff(releases, old, new, endpoint_url)
    except TribunalError as exc:
        print_error(exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    render_diff(d, Console(), fmt)


@release_app.command("latest")
def latest_cmd(name: Annotated[str, typer.Argument(help="The release `latest` should name.")],
               releases: ReleasesOpt = "releases", endpoint_url: EndpointOpt = None) -> None:
    """Move `latest` to a release made with `--no-latest` — only forward: never to a release older than
    the one it names."""
    from jobs.release.store import move_latest, read_release

    use_endpoint(endpoint_url)
    try:
        pointer = move_latest(releases, read_release(releases, name, endpoint_url), endpoint_url)
    except TribunalError as exc:
        print_error(exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    Console().print(f"latest → {pointer.release} (position {pointer.seq})", markup=False, highlight=False)


def publish(
    release: Annotated[str, typer.Argument(help="The release to publish (a name in --releases, or `latest`).")],
    out: Annotated[str, typer.Option("--out", help="Where to write the site (a local folder or s3://…); "
                                     "the release's own folder under it, written create-only.")],
    releases: ReleasesOpt = "releases",
    endpoint_url: EndpointOpt = None,
) -> None:
    """Write the release's static public site: leaderboard, practice areas, a page per system, the
    methodology, downloads (JSON with its JSON Schema, CSV, Parquet). Needs no server, loads nothing
    from elsewhere, and carries no task, source or deliverable text, judge reasoning, evidence or
    reviewer reason unless the release lists the task as public (`--public-task`).

    Example: `tribunal publish 2026-12 --releases releases --out site/`
    """
    from jobs.release.publish import publish_release

    use_endpoint(endpoint_url)
    try:
        index = publish_release(releases, release, out, endpoint_url)
    except TribunalError as exc:
        print_error(exc)
        raise typer.Exit(EXIT_BAD_INPUT) from exc
    Console().print(f"site written: {index}", markup=False, highlight=False)
