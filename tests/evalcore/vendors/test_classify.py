"""Each adapter's `classify`: every SDK failure maps to one kind, with the server's retry-after.

The exceptions are the SDKs' own classes, built the way the SDKs build them (a real httpx2
response for the HTTP SDKs, a real `AioRpcError` for gRPC); the end-to-end behaviour of the
common cases is covered against the emulators in test_openai/anthropic/xai.py.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import grpc
import httpx2
import openai
import pytest
from pydantic import BaseModel, ValidationError

from evalcore.config.models import VendorConfig
from evalcore.errors import ErrorKind
from evalcore.vendors.adapters.common import BadOutput, NonModelBody
from evalcore.vendors.registry import create_vendor

R, T, X, B, F = (
    ErrorKind.RATE_LIMITED,
    ErrorKind.TRANSIENT,
    ErrorKind.TIMEOUT,
    ErrorKind.BAD_OUTPUT,
    ErrorKind.FATAL,
)


def vendor(adapter: str) -> Any:
    return create_vendor(VendorConfig(adapter=adapter, name=adapter, family=adapter, model="m"))  # type: ignore[arg-type]


def http_error(sdk: Any, status: int, headers: dict[str, str] | None = None, body: Any = None) -> Any:
    request = httpx2.Request("POST", "http://127.0.0.1:1/v1/x")
    response = httpx2.Response(status, headers=headers or {}, request=request, json=body or {})
    return sdk.APIStatusError(f"status {status}", response=response, body=body)


class M(BaseModel):
    x: int


def validation_error() -> ValidationError:
    try:
        M.model_validate({"x": "nope"})
    except ValidationError as exc:
        return exc
    raise AssertionError


COMMON = [
    (BadOutput("truncated"), B),
    (validation_error(), B),
    (TimeoutError(), X),
    (TimeoutError(), X),
    (json.JSONDecodeError("x", "<html>", 0), T),
    (NonModelBody("html page"), T),
    (ConnectionResetError(), T),
    (RuntimeError("Event loop is closed"), F),
]

HTTP_STATUS = [
    (400, F), (401, F), (402, F), (403, F), (404, F), (413, F), (422, F),
    (408, T), (409, T), (500, T), (502, T), (503, T), (504, T), (529, T),
    (429, R),
]  # fmt: skip


@pytest.mark.parametrize("adapter", ["openai", "anthropic", "xai", "offline"])
@pytest.mark.parametrize(("exc", "kind"), COMMON)
def test_vendor_neutral_failures_classify_the_same_everywhere(
    adapter: str, exc: BaseException, kind: ErrorKind
) -> None:
    assert vendor(adapter).classify(exc).kind is kind


@pytest.mark.parametrize("sdk", [openai, anthropic], ids=["openai", "anthropic"])
@pytest.mark.parametrize(("status", "kind"), HTTP_STATUS)
def test_http_status_codes_classify_by_meaning(sdk: Any, status: int, kind: ErrorKind) -> None:
    assert vendor(sdk.__name__).classify(http_error(sdk, status)).kind is kind


@pytest.mark.parametrize("sdk", [openai, anthropic], ids=["openai", "anthropic"])
@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after-ms": "250", "retry-after": "7"}, 0.25),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # a date in the past: no wait
        ({}, None),
    ],
)
def test_a_429_carries_the_servers_retry_after(
    sdk: Any, headers: dict[str, str], expected: float | None
) -> None:
    verdict = vendor(sdk.__name__).classify(http_error(sdk, 429, headers))
    assert verdict.kind is R and verdict.retry_after_s == expected and verdict.should_retry is None


@pytest.mark.parametrize("sdk", [openai, anthropic], ids=["openai", "anthropic"])
def test_timeouts_are_not_mistaken_for_connection_errors(sdk: Any) -> None:
    request = httpx2.Request("POST", "http://127.0.0.1:1/v1/x")
    v = vendor(sdk.__name__)
    assert v.classify(sdk.APITimeoutError(request=request)).kind is X
    assert v.classify(sdk.APIConnectionError(request=request)).kind is T


def test_openai_out_of_quota_429_is_fatal() -> None:
    exc = http_error(
        openai, 429, body={"message": "quota", "type": "insufficient_quota", "code": "insufficient_quota"}
    )
    assert vendor("openai").classify(exc).kind is F


def test_openai_length_and_content_filter_finishes_are_bad_output() -> None:
    from openai.types.chat import ChatCompletion

    completion = ChatCompletion.model_construct(usage=None)
    v = vendor("openai")
    assert v.classify(openai.LengthFinishReasonError(completion=completion)).kind is B
    assert v.classify(openai.ContentFilterFinishReasonError()).kind is B


def rpc_error(
    code: grpc.StatusCode, details: str = "", trailing: tuple[tuple[str, str], ...] = ()
) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(*trailing), details)


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        (grpc.StatusCode.RESOURCE_EXHAUSTED, R),
        (grpc.StatusCode.UNAVAILABLE, T),
        (grpc.StatusCode.INTERNAL, T),
        (grpc.StatusCode.UNKNOWN, T),
        (grpc.StatusCode.DEADLINE_EXCEEDED, X),
        (grpc.StatusCode.INVALID_ARGUMENT, F),
        (grpc.StatusCode.UNAUTHENTICATED, F),
        (grpc.StatusCode.PERMISSION_DENIED, F),
        (grpc.StatusCode.NOT_FOUND, F),
    ],
)
def test_grpc_status_codes_classify_by_meaning(code: grpc.StatusCode, kind: ErrorKind) -> None:
    assert vendor("xai").classify(rpc_error(code)).kind is kind


def test_grpc_message_too_large_is_fatal_not_a_rate_limit() -> None:
    exc = rpc_error(
        grpc.StatusCode.RESOURCE_EXHAUSTED, "Sent message larger than max (25000000 vs. 20971520)"
    )
    assert vendor("xai").classify(exc).kind is F


@pytest.mark.parametrize(
    ("trailing", "expected"),
    [((("retry-after", "1.5"),), 1.5), ((("grpc-retry-pushback-ms", "300"),), 0.3), ((), None)],
)
def test_grpc_trailing_metadata_gives_the_retry_after(
    trailing: tuple[tuple[str, str], ...], expected: float | None
) -> None:
    verdict = vendor("xai").classify(rpc_error(grpc.StatusCode.RESOURCE_EXHAUSTED, "slow down", trailing))
    assert verdict.kind is R and verdict.retry_after_s == expected
