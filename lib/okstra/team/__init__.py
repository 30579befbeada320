"""Run the team: backends, dispatch, worker runner, liveness, reclaim/teardown, status."""
