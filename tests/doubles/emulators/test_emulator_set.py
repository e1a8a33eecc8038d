"""All three emulators together: in the caller's loop, in a background thread, and `serve_forever`."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import anthropic
import openai
import pytest
import xai_sdk
from xai_sdk.chat import user

from doubles.emulators import (
    EmulatorConfig,
    EmulatorSet,
    LognormalLatency,
    OpenAIEmulator,
    RateLimited,
    ServerLimits,
    StaticResponder,
    start_in_thread,
)
from doubles.emulators.serve import KEY_ENV, emulator_config_from, serve_forever
from evalcore.config.load import load_config
from evalcore.emulation import DEFAULT_TOKENS_PER_MINUTE, EmulationOptions
from evalcore.errors import ConfigError
from evalcore.prompts import render_preflight, render_rubric
from evalcore.schema import Criterion, Deliverable, PreflightAnswer, RubricAnswer

ANSWER = {"ok": True}


async def test_emulator_set_serves_all_three_vendors_at_their_sdk_endpoints() -> None:
    async with EmulatorSet(responder=StaticResponder(ANSWER)) as emus:
        ep = emus.endpoints()
        assert ep["openai"].startswith("http://127.0.0.1:") and ep["openai"].endswith("/v1")
        assert ep["anthropic"].startswith("http://127.0.0.1:") and not ep["anthropic"].endswith("/v1")
        assert ep["xai"].startswith("127.0.0.1:") and "://" not in ep["xai"]
        async with openai.AsyncOpenAI(api_key="k", base_url=ep["openai"], max_retries=0) as oc:
            assert (
                await oc.responses.parse(model="m", input="hi", text_format=PreflightAnswer)
            ).output_parsed
        async with anthropic.AsyncAnthropic(api_key="k", base_url=ep["anthropic"], max_retries=0) as ac:
            msg = await ac.messages.parse(
                model="m",
                max_tokens=64,
                messages=[{"role": "user", "content": "hi"}],
                output_format=PreflightAnswer,
            )
            assert msg.parsed_output == PreflightAnswer(ok=True)
        xc = xai_sdk.AsyncClient(
            api_key="k",
            api_host=ep["xai"],
            use_insecure_channel=True,
            channel_options=[("grpc.enable_retries", 0)],
        )
        _, obj = await xc.chat.create(model="m", messages=[user("hi")]).parse(PreflightAnswer)
        await xc.close()
        assert obj.ok
    assert {k: s.ok for k, s in emus.stats().items()} == {"openai": 1, "anthropic": 1, "xai": 1}


def test_start_in_thread_serves_a_synchronous_caller_and_can_be_scripted_from_it() -> None:
    with start_in_thread(EmulatorConfig(), responder=StaticResponder(ANSWER)) as emus:
        sync_client = openai.OpenAI(api_key="k", base_url=emus.endpoints["openai"], max_retries=0)
        assert sync_client.responses.parse(model="m", input="hi", text_format=PreflightAnswer).output_parsed
        emus.push("openai", RateLimited(retry_after=0.05))
        with pytest.raises(openai.RateLimitError):
            sync_client.responses.create(model="m", input="hi")
        sync_client.close()
        xc = xai_sdk.Client(
            api_key="k",
            api_host=emus.endpoints["xai"],
            use_insecure_channel=True,
            channel_options=[("grpc.enable_retries", 0)],
        )
        assert xc.chat.create(model="m", messages=[user("hi")]).sample().content == '{"ok": true}'
        xc.close()
        stats = emus.stats()
        assert (stats["openai"].ok, stats["openai"].rate_limited, stats["xai"].ok) == (1, 1, 1)
        assert [r.user for r in emus.requests("openai")] == ["hi", "hi"]


def test_start_in_thread_takes_one_config_per_vendor_and_rejects_unknown_vendors() -> None:
    with pytest.raises(ValueError, match="unknown emulator vendor"):
        start_in_thread({"openia": EmulatorConfig()})
    limited = EmulatorConfig(limits=ServerLimits(requests_per_minute=1))
    with start_in_thread({"openai": limited}, responder=StaticResponder(ANSWER)) as emus:
        c = openai.OpenAI(api_key="k", base_url=emus.endpoints["openai"], max_retries=0)
        c.responses.create(model="m", input="hi")
        with pytest.raises(openai.RateLimitError):
            c.responses.create(model="m", input="hi")
        c.close()
        assert emus.emulators.anthropic.config.limits.requests_per_minute is None


async def test_serve_forever_prints_endpoints_and_writes_a_config_that_points_a_sweep_at_them(
    tmp_path: Path,
) -> None:
    out, stop, path = io.StringIO(), asyncio.Event(), tmp_path / "emulated.yaml"
    cfg = EmulatorConfig(limits=ServerLimits(requests_per_minute=300))
    task = asyncio.create_task(serve_forever(cfg, config_out=path, out=out, stop=stop))
    loop = asyncio.get_running_loop()
    end = loop.time() + 10
    while "Ctrl+C" not in out.getvalue() and not task.done() and loop.time() < end:
        await asyncio.sleep(0.01)  # polling for the server to come up, with a deadline
    text = out.getvalue()
    loaded = load_config(path)
    stop.set()
    await asyncio.wait_for(task, 5)
    endpoints = {v.adapter: v.endpoint for v in loaded.vendors()}
    assert set(endpoints) == {"openai", "anthropic", "xai"}
    assert endpoints["xai"] is not None and endpoints["xai"].startswith("http://127.0.0.1:")  # plaintext gRPC
    for endpoint in endpoints.values():
        assert endpoint is not None and endpoint.removeprefix("http://") in text
    assert {v.api_key_env for v in loaded.vendors()} == {KEY_ENV[a] for a in endpoints}
    assert all(v.limits.requests_per_minute == 300 for v in loaded.vendors())
    assert "export TRIBUNAL_EMULATED_OPENAI_KEY=" in text and str(path) in text


async def test_default_offline_responder_answers_rendered_prompts_with_valid_schemas() -> None:
    rubric = render_rubric(
        task_id="t1",
        instructions="Draft a memo on the lease.",
        criterion=Criterion(
            id="C-001", title="Rent", match_criteria="PASS if the memo states the rent of $4,500."
        ),
        deliverables=[Deliverable(name="memo", text="The monthly rent is $4,500 under clause 3.")],
        boundary="b0undary1234abcd",
    )
    pre = render_preflight()
    async with OpenAIEmulator() as emu:
        async with openai.AsyncOpenAI(api_key="k", base_url=emu.base_url, max_retries=0) as c:
            r = await c.responses.parse(
                model="m",
                instructions=rubric.system,
                input=rubric.prefix + rubric.suffix,
                text_format=RubricAnswer,
            )
            p = await c.responses.parse(
                model="m", instructions=pre.system, input=pre.prefix + pre.suffix, text_format=PreflightAnswer
            )
    assert isinstance(r.output_parsed, RubricAnswer)
    assert p.output_parsed == PreflightAnswer(ok=True)
    assert emu.requests[0].schema_name == "RubricAnswer"


def test_emulate_options_become_one_emulator_config_per_vendor_and_a_bad_file_is_named(tmp_path: Path) -> None:
    configs = emulator_config_from(
        EmulationOptions(requests_per_minute=600, latency_s=0.5, fault_rate=0.2, seed=3), api_key="SENTINEL-KEY-42"
    )
    assert set(configs) == {"openai", "anthropic", "xai"}
    cfg = configs["openai"]
    assert cfg.limits.requests_per_minute == 600 and cfg.limits.tokens_per_minute == DEFAULT_TOKENS_PER_MINUTE
    assert isinstance(cfg.latency, LognormalLatency) and cfg.latency.median == 0.5
    f = cfg.faults
    assert (f.rate_limit, f.server_error, f.malformed, f.truncated, f.hang) == (0.05, 0.05, 0.05, 0.05, 0.0)
    assert cfg.api_key is not None and "SENTINEL-KEY-42" not in repr(cfg)
    # the same knobs everywhere but the bucket, which is each vendor's own
    assert configs["anthropic"] == cfg.model_copy(update={"limits": cfg.limits.model_copy(update={"burst_s": 60.0})})
    batched = emulator_config_from(EmulationOptions(batch_delay_s=120, batch_errors=0.1))["xai"].batch
    assert (batched.completion_s, batched.error_rate) == (120, 0.1)
    good = tmp_path / "emu.yaml"
    good.write_text(
        "script:\n  - {kind: rate_limited, retry_after: 0.5}\nlimits: {tokens_per_minute: 1000}\n"
    )
    from_file = emulator_config_from(EmulationOptions(file=str(good)))
    assert from_file["openai"].script == [RateLimited(retry_after=0.5)]
    assert {v: c.limits.burst_s for v, c in from_file.items()} == {"openai": 1.0, "anthropic": 60.0, "xai": 60.0}
    bad = tmp_path / "bad.yaml"
    bad.write_text("faults: {rate_limit: 2}\n")
    with pytest.raises(ConfigError, match="bad.yaml"):
        emulator_config_from(EmulationOptions(file=str(bad)))
    with pytest.raises(ConfigError, match="--faults"):
        EmulationOptions(fault_rate=1.5)
