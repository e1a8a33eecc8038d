"""A call that finally fails can still have been paid for: its billed attempts reach the call row."""

from __future__ import annotations

import pickle

from evalcore.errors import ErrorKind, VendorError
from evalcore.grading.calls import GradingContext, call_row
from tests.evalcore.vendors._vendor_testkit import FakeTime, Verdict, bad, request, scripted


async def test_bad_outputs_until_giving_up_are_billed_on_the_error_and_the_call_row() -> None:
    t = FakeTime()
    vendor = scripted([bad(), bad(), bad(), bad()], t, price={"input": 10.0, "output": 100.0},
                      retry={"bad_output_retries": 2})
    [err] = await vendor.complete_many([request()], Verdict)
    assert isinstance(err, VendorError) and err.kind is ErrorKind.BAD_OUTPUT
    assert err.attempts == 3 and err.billed_tokens[0] == 300 and err.billed_tokens[2] == 15
    assert err.cost_usd > 0
    again = pickle.loads(pickle.dumps(err))  # crosses Ray actor boundaries intact
    assert (again.billed_tokens, again.cost_usd, again.attempts) == (err.billed_tokens, err.cost_usd, 3)
    ctx = GradingContext("r", "g", "s::t", "s", "t", "a")
    row = call_row(ctx, vendor.cfg, request(), err)
    assert row.outcome == "bad_output" and row.cost_usd == err.cost_usd and row.input_tokens == 300
