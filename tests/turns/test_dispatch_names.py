"""The services start tasks by name (analyst/dispatch.py): each name is a task the worker runs."""

from analyst import dispatch, tasks


def test_each_name_dispatch_sends_is_a_registered_task():
    assert dispatch.RUN_TURN == tasks.run_turn.name
    assert dispatch.PLACE_FILE == tasks.place_file.name
