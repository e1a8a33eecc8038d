"""Tools around a sweep: local vendor emulators and synthetic benchmarks."""

from __future__ import annotations

import os
from typing import Annotated

import typer
from rich.console import Console

from evalcore.errors import TribunalError
from jobs.cli.common import (
    EMULATION_DEFAULTS,
    BatchDelayOpt,
    BatchErrorsOpt,
    ConfigOpt,
    EmulatorConfigOpt,
    EmulatorSeedOpt,
    FaultsOpt,
    LatencyOpt,
    PersonasOpt,
    RpmOpt,
    TpmOpt,
    emulation_options,
    print_error,
)


def emulate(
    openai_port: Annotated[int, typer.Option(help="Port of the OpenAI emulator (0 = any free port).")] = 0,
    anthropic_port: Annotated[int, typer.Option(help="Port of the Anthropic emulator (0 = any free port).")] = 0,
    xai_port: Annotated[int, typer.Option(help="Port of the xAI gRPC emulator (0 = any free port).")] = 0,
    rpm: RpmOpt = EMULATION_DEFAULTS.requests_per_minute,
    tpm: TpmOpt = EMULATION_DEFAULTS.tokens_per_minute,
    latency: LatencyOpt = EMULATION_DEFAULTS.latency_s,
    faults: FaultsOpt = EMULATION_DEFAULTS.fault_rate,
    seed: EmulatorSeedOpt = EMULATION_DEFAULTS.seed,
    batch_delay: BatchDelayOpt = EMULATION_DEFAULTS.batch_delay_s,
    batch_errors: BatchErrorsOpt = EMULATION_DEFAULTS.batch_errors,
    emulator_config: EmulatorConfigOpt = None,
    personas: PersonasOpt = None,
    benchmark: Annotated[
        str | None,
        typer.Option("--benchmark", help="With --personas and --submissions: the submissions' benchmark."),
    ] = None,
    submissions: Annotated[
        str | None,
        typer.Option(
            "--submissions", "-s",
            help="With --personas: the submissions the emulators will grade, so a persona's self_bias "
            "recognises its own family's work (as `tribunal sweep` does).",
        ),
    ] = None,
    config: ConfigOpt = None,
    api_key_env: Annotated[
        str | None, typer.Option(help="Require the key held in this environment variable (401 otherwise).")
    ] = None,
    write_config: Annotated[
        str | None, typer.Option("--write-config", help="Write the sweep YAML pointing at the emulators to this file.")
    ] = None,
) -> None:
    """Serve local emulators of the OpenAI, Anthropic and xAI APIs on 127.0.0.1 until Ctrl+C.

    The real SDKs work against them unchanged. They answer with the offline heuristics (bent by
    `--personas`), enforce each vendor's limits as the vendor does (OpenAI in one-second slices of
    the per-minute limit, Anthropic and xAI over the whole minute), inject faults at the rate you
    give, and print the endpoints, the environment variables and the YAML (for
    `tribunal sweep --config`) that point a sweep at them: a run made with it records
    `vendors: emulated`. The options are `tribunal sweep --vendors emulated`'s, which builds the
    same emulators for itself.

    Example:

        tribunal emulate --rpm 600 --latency 0.5 --faults 0.02 --personas demo --write-config emulated.yaml

    They also serve the three batch APIs (`--batch-delay`, `--batch-errors`) for `tribunal sweep --batch`.
    """
    import asyncio
    from pathlib import Path

    from doubles.emulators.serve import emulator_config_from, serve_forever
    from evalcore.config.load import load_config
    from jobs.sweep.prepare import accepted_models, emulated_responder, load_personas

    console = Console(stderr=True)
    try:
        if (benchmark is None) != (submissions is None):
            raise typer.BadParameter("--benchmark and --submissions go together (the submissions are read with their benchmark)")
        if submissions is not None and personas is None:
            raise typer.BadParameter("--submissions is read only for --personas")
        key = os.environ.get(api_key_env) if api_key_env else None
        if api_key_env and not key:
            raise TribunalError(f"--api-key-env {api_key_env}: that environment variable is not set")
        options = emulation_options(rpm=rpm, tpm=tpm, latency=latency, faults=faults, seed=seed,
                                    batch_delay=batch_delay, batch_errors=batch_errors,
                                    emulator_config=emulator_config)
        base = load_config(config)
        configs = emulator_config_from(options, api_key=key, accept_models=accepted_models(base))
        panel = load_personas(personas, base, benchmark, submissions) if personas else None
        ports = {"openai": openai_port, "anthropic": anthropic_port, "xai": xai_port}
        asyncio.run(serve_forever(configs, ports=ports, responder=emulated_responder(panel), base=base,
                                  config_out=Path(write_config) if write_config else None))
    except TribunalError as exc:
        print_error(exc, console)
        raise typer.Exit(1) from exc
    except OSError as exc:  # e.g. a port already in use
        print_error(f"cannot start the emulators: {exc}", console)
        raise typer.Exit(1) from exc
    except KeyboardInterrupt:
        console.print("emulators stopped")


def synth_cmd(
    out: Annotated[str, typer.Argument(help="Output folder: results/, manifest.jsonl and ground_truth.json go here.")],
    n: Annotated[int, typer.Option("--n", "-n", min=1, help="Number of synthetic submissions.")] = 2000,
    sample: Annotated[str, typer.Option(help="Sample benchmark with submissions/ and ground_truth.json.")] = "examples/sample",
    seed: Annotated[int, typer.Option(help="Random seed; the same seed gives identical files.")] = 0,
    profile: Annotated[
        str, typer.Option(help="sample: N submissions derived from the sample; lab: a realistic-size benchmark.")
    ] = "sample",
    tasks: Annotated[int, typer.Option(min=1, help="lab profile: number of tasks (4 systems each).")] = 8,
    task_copies: Annotated[
        int, typer.Option(min=1, help="sample profile: each sample task this many times (OUT/benchmark), for fewer systems of more tasks.")
    ] = 1,
) -> None:
    """Generate N synthetic submissions with known ground truth from the sample, for scale tests.

    Each one copies a sample submission under a new system name (`synth-0001`, ...), spread evenly
    over the sample's tasks, and clones it, alters a grounded date/amount/party/quote, appends a
    fabricated sentence, or empties it, recording every planted hallucination and verdict.

    Example: `tribunal synth runs/synth -n 2000` then
    `tribunal sweep examples/sample -s runs/synth/manifest.jsonl ...`

    N submissions over the sample's 8 tasks are N / 8 systems. `--task-copies K` first writes the
    sample with each task K times under new ids to OUT/benchmark (identical files and ground
    truth) and spreads the N submissions over its 8 K tasks: `tribunal synth runs/synth -n 20000
    --task-copies 25` is 100 systems of 200 tasks; sweep it with
    `tribunal sweep runs/synth/benchmark -s runs/synth/manifest.jsonl ...`

    `--profile lab` instead writes a whole benchmark at the published protocol's size (44-90
    criteria, 5-15 docx/pdf/xlsx/eml sources of 20k-150k tokens, 1-5k-word memos) with its
    submissions and ground truth: `tribunal synth runs/lab --profile lab --tasks 8` then
    `tribunal sweep runs/lab -s runs/lab/submissions ...`
    """
    if profile not in ("sample", "lab"):
        Console(stderr=True).print(f"[red]error:[/] --profile: {profile!r} is not one of sample, lab")
        raise typer.Exit(2)
    if profile == "lab":
        from doubles.synth.lab import generate_lab, lab_summary

        lab = generate_lab(out, tasks=tasks, seed=seed)
        Console().print(f"wrote {out}/tasks, {out}/submissions and {out}/ground_truth.json\n{lab_summary(lab)}")
        return
    from doubles.synth.scale import summary, synthesize
    from doubles.synth.widen import widen

    try:
        if task_copies > 1:
            wide = os.path.join(out, "benchmark")
            widen(sample, task_copies, wide)
            sample = wide
        gt = synthesize(sample, None, n, out, seed=seed)
    except TribunalError as exc:
        print_error(exc)
        raise typer.Exit(1) from exc
    wrote = f"{out}/benchmark ({task_copies} copies of each task), " if task_copies > 1 else ""
    Console().print(f"wrote {wrote}{out}/manifest.jsonl and {out}/ground_truth.json\n{summary(gt)}", markup=False)
