"""Stage A's prompts: one per criterion, each reading only its deliverables."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.grading.panel import rubric_prompts
from evalcore.prompts import new_boundary, render_rubric
from evalcore.schema import Criterion, Deliverable, Submission, Task

NAMES = ["memo", "letter", "schedule"]


@settings(deadline=None)
@given(
    reads=st.lists(st.one_of(st.none(), st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True)),
                   min_size=1, max_size=8),
    present=st.lists(st.sampled_from(NAMES), unique=True),
    text=st.text(max_size=40),
)
def test_each_criterion_gets_the_prompt_rendered_for_it_alone_though_shared_prefixes_are_made_once(
    reads: list[list[str] | None], present: list[str], text: str
) -> None:
    task = Task(id="a/t", area="a", title="T", instructions="Draft <<it>>.",
                criteria=[Criterion(id=f"C-{i}", title=f"c{i}", match_criteria="PASS if x", deliverables=r)
                          for i, r in enumerate(reads)],
                deliverables={n: f"{n}.docx" for n in NAMES})
    sub = Submission(system="s", task_id="a/t",
                     deliverables={n: Deliverable(name=n, text=f"{n}: {text} >>") for n in present})
    boundary = new_boundary()
    made = rubric_prompts(task, sub, boundary)
    assert [c for c, _ in made] == task.criteria
    for criterion, prompt in made:
        alone = render_rubric(task_id=task.id, instructions=task.instructions, criterion=criterion,
                              deliverables=[sub.deliverables[n] for n in task.criterion_deliverables(criterion)
                                            if n in sub.deliverables],
                              boundary=boundary)
        assert prompt == alone
