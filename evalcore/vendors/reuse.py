"""Never pay twice: a vendor wrapper that serves stored calls and coalesces identical ones.

Wraps any `Vendor`. A request whose hash is in the stored calls (this run's `calls` table on
resume, or a run named with `--reuse`) is answered from the stored response at zero cost, marked
`reused_from`. Identical requests in flight at the same time share one real call; if that call
fails or its owner is cancelled, each waiter sends its own. Answers of new calls are added to the
store, so a repeat within the process is free too — except Stage 2 answers, which the audit still
validates (only their row in the calls table, with its validated outcome, may serve them later).

A served answer's times are this run's, not the original call's: `started_at` = `ended_at` = when it
was served (latency 0, attempts 0, `reused_from` naming the run that paid). Why not the original
times: the calls table is this run's timeline (its rate, its waits), and an answer served in no time
at all belongs in it when it was served; the original call, with its times, is the row of the same
`request_hash` in the `reused_from` run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, MutableMapping

from pydantic import BaseModel, ValidationError

from evalcore.errors import VendorError
from evalcore.vendors.protocol import JudgeReply, JudgeRequest, T, Usage, Vendor, complete_each


class ReusingVendor:
    """A `Vendor` that consults stored calls before paying for a new one."""

    def __init__(
        self,
        inner: Vendor,
        stored: MutableMapping[str, tuple[str, str]],
        run_id: str,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.inner = inner
        self._clock = clock
        """Unix seconds: when a stored answer is served (its `started_at` and `ended_at`)."""
        self.name = inner.name
        self.family = inner.family
        self.model = inner.model
        self.stored = stored
        self.run_id = run_id
        self.reused = 0
        self.stale = 0
        """Stored answers that no longer validated (each was paid again)."""
        self._inflight: dict[str, asyncio.Future[JudgeReply[BaseModel]]] = {}

    def _from_store(self, request: JudgeRequest, schema: type[T]) -> JudgeReply[T] | None:
        """The stored answer, or None when there is none or it no longer validates.

        A stored answer that does not fit today's output model (a model changed in a way its JSON
        schema does not show, e.g. a validator) is dropped and the call is paid again: resume and
        `--reuse` never crash on an old answer, and never serve one that is not valid now.
        """
        hit = self.stored.get(request.request_hash)
        if hit is None:
            return None
        run_id, response_json = hit
        try:
            output = schema.model_validate_json(response_json)
        except ValidationError:
            self.stored.pop(request.request_hash, None)
            self.stale += 1
            return None
        self.reused += 1
        served = self._clock()
        return JudgeReply[schema](  # type: ignore[valid-type]
            output=output,
            usage=Usage(),
            cost_usd=0.0,
            started_at=served,
            ended_at=served,
            attempts=0,
            vendor=self.name,
            model=self.model,
            reused_from=run_id,
        )

    async def complete(self, request: JudgeRequest, schema: type[T]) -> JudgeReply[T]:
        """Stored answer, or a share of an identical call in flight, or a new paid call."""
        stored = self._from_store(request, schema)
        if stored is not None:
            return stored
        pending = self._inflight.get(request.request_hash)
        if pending is not None:
            try:
                await asyncio.shield(pending)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise  # we are being cancelled ourselves
                # the owner was cancelled: send our own request below
            except Exception:
                pass  # the shared call failed (its cost is the owner's): send our own request below
            again = self._from_store(request, schema)
            if again is not None:
                return again
        fut: asyncio.Future[JudgeReply[BaseModel]] = asyncio.get_running_loop().create_future()
        self._inflight[request.request_hash] = fut
        try:
            reply = await self.inner.complete(request, schema)
        except BaseException as exc:
            fut.set_exception(exc)
            fut.exception()  # mark retrieved: waiters re-send on their own
            raise
        finally:
            self._inflight.pop(request.request_hash, None)
        if request.purpose != "verify":
            # Stage 2 answers are validated further by the audit (every flag decided once, merges
            # into confirmed flags); only the calls table, which records that outcome, may serve them.
            self.stored[request.request_hash] = (self.run_id, reply.output.model_dump_json())
        fut.set_result(reply)  # type: ignore[arg-type]
        return reply

    async def complete_many(self, requests: list[JudgeRequest], schema: type[T]) -> list[JudgeReply[T] | VendorError]:
        """`complete` for each request, decided for the batch at once; failures returned in place,
        never raised (the `Vendor` protocol).

        The same three outcomes as `complete`, in the same order of precedence: a stored answer; a
        share of an identical call in flight (an earlier caller's, or an earlier request of this
        batch), which goes through `complete`; otherwise this batch owns the call. The owned calls
        go to the inner vendor in one `complete_many`, not one `complete` each. Why: in a vendor
        actor every request of a coalesced batch comes through here, and a task and two coroutines
        per request cost ~10 us of CPU each (measured with the zero-work adapter; now ~2 us).
        """
        out: list[JudgeReply[T] | VendorError | None] = [None] * len(requests)
        owned: dict[str, asyncio.Future[JudgeReply[BaseModel]]] = {}
        fresh: list[int] = []
        shared: list[int] = []
        loop = asyncio.get_running_loop()
        for i, request in enumerate(requests):
            stored = self._from_store(request, schema)
            if stored is not None:
                out[i] = stored
            elif request.request_hash in self._inflight:
                shared.append(i)
            else:
                fut: asyncio.Future[JudgeReply[BaseModel]] = loop.create_future()
                self._inflight[request.request_hash] = owned[request.request_hash] = fut
                fresh.append(i)
        own = self._send_owned([requests[i] for i in fresh], schema, owned)
        if shared:
            sent, waited = await asyncio.gather(own, complete_each(self, [requests[i] for i in shared], schema))
            for i, reply in zip(shared, waited, strict=True):
                out[i] = reply
        else:
            sent = await own
        for i, reply in zip(fresh, sent, strict=True):
            out[i] = reply
        return [r for r in out if r is not None]

    async def _send_owned(
        self, requests: list[JudgeRequest], schema: type[T], owned: dict[str, asyncio.Future[JudgeReply[BaseModel]]]
    ) -> list[JudgeReply[T] | VendorError]:
        """The calls a batch owns (`owned`: their in-flight futures, registered), sent together;
        each settles its future as `complete` does, so identical requests waiting on it share it."""
        if not requests:
            return []
        try:
            replies = await self.inner.complete_many(requests, schema)
        except BaseException as exc:
            for request_hash, fut in owned.items():
                self._inflight.pop(request_hash, None)
                fut.set_exception(exc)
                fut.exception()  # mark retrieved: waiters re-send on their own
            raise
        for request, reply in zip(requests, replies, strict=True):
            fut = owned[request.request_hash]
            self._inflight.pop(request.request_hash, None)
            if isinstance(reply, VendorError):
                fut.set_exception(reply)
                fut.exception()
                continue
            if request.purpose != "verify":  # as in `complete`: only the calls table may serve Stage 2
                self.stored[request.request_hash] = (self.run_id, reply.output.model_dump_json())
            fut.set_result(reply)  # type: ignore[arg-type]
        return replies

    async def aclose(self) -> None:
        """Close the wrapped vendor."""
        await self.inner.aclose()
