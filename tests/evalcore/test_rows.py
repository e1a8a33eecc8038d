"""Rows are typed where they are built: a misspelled column is an error there, not a lost value."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from evalcore.grading.calls import GradingContext
from evalcore.schema import CallRow, GradingRow, RowIdentity, SubmissionRow, VerdictRow
from evalcore.storage.store import arrow_schema, rows_to_table

CTX = GradingContext("run", "g1", "sys::a/t", "sys", "a/t", "a")


def test_a_misspelled_row_field_is_an_error_where_the_row_is_built() -> None:
    with pytest.raises(ValidationError, match="material_flag"):
        SubmissionRow(**CTX.ids(), content_hash="c", status="complete", n_criteria=1, material_flag=2)  # type: ignore[call-arg]


def test_a_misspelled_key_in_a_mapping_row_is_refused_by_the_shard_writer() -> None:
    row = {**CTX.ids(), "content_hash": "c", "status": "complete", "n_criteria": 1, "material_flag": 2}
    with pytest.raises(ValidationError, match="material_flag"):
        rows_to_table("submissions", [row])


def test_the_shard_writer_refuses_a_row_model_of_another_table() -> None:
    verdict = VerdictRow(**CTX.ids(), criterion_id="C1", judge="j", judge_family="f", judge_model="m",
                         verdict="pass", request_hash="h")
    with pytest.raises(TypeError, match="VerdictRow cannot be written to the submissions table"):
        rows_to_table("submissions", [verdict])


def test_call_rows_share_the_identity_columns_of_grading_rows_without_the_area() -> None:
    identity = list(RowIdentity.model_fields)
    assert list(CallRow.model_fields)[: len(identity)] == identity
    assert list(GradingRow.model_fields) == [*identity, "area"]
    assert arrow_schema("calls").names[: len(identity)] == identity
    assert set(CTX.call_ids()) == set(identity) and set(CTX.ids()) == {*identity, "area"}
