"""The rule deferred background work follows (core/pacing.py): due once the foreground is quiet, never later than
the longest deferral after the first item waiting."""

from limbic.core.pacing import QuietWindow


def test_work_is_due_after_the_quiet_pause_or_the_longest_deferral_whichever_comes_first():
    window = QuietWindow(quiet=0.1, longest=1.0)
    window.add(10.0, waiting=False)
    assert window.due() == 10.1  # alone: after the quiet pause
    for now in (10.05, 10.5, 10.95):  # calls keep coming: each pushes the quiet pause on
        window.add(now, waiting=True)
    assert window.due() == 11.0  # but not past the longest deferral after the first
    window.add(20.0, waiting=False)  # the earlier work was written: a new first
    assert window.due() == 20.1
