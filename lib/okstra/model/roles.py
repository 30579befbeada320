"""The one role table (DESIGN §3): every role, its round, what it may write, its prompt.

Everything that asks "which roles are there, which round dispatches a role,
what may a role's worker write, which prompt template does it get, and how is
it pinned to a provider" reads `TABLE`. It imports nothing (not even
dataclasses): the write-guard hook reads it on every tool call (DESIGN §13).
"""

# What a role's worker may write (DESIGN §10).
SCOPE_LEAD = "lead"  # the lead's own session: everything but the user's sidecars and okstra state
SCOPE_STAGE = "stage"  # the approved stage's planned paths, plus its own result and evidence
SCOPE_RESULT = "result"  # its own result and evidence only

# How `--role-model ROLE=PROVIDER/MODEL` pins a role (DESIGN §3).
PIN_PER_PROVIDER = "per-provider"  # pins (or adds) that provider's holder of the role
PIN_SINGLE = "single"  # the role has one holder: the pin moves it to that provider


class Role:
    """One row of the table; read-only by convention (a plain class keeps the hook light)."""

    __slots__ = ("name", "round", "title", "write_scope", "pin", "own_template", "later_round")

    def __init__(
        self, name: str, round: str, title: str, write_scope: str, pin: str, own_template: bool, later_round: bool
    ) -> None:
        self.name = name
        self.round = round  # the round that dispatches it (team-dispatch --round)
        self.title = title  # the prompt's title
        self.write_scope = write_scope
        self.pin = pin
        self.own_template = own_template  # templates/prompts/<role>.md.j2; else the task type's template
        self.later_round = later_round  # round-prepare may add it after the first round

    def __repr__(self) -> str:
        return f"Role({self.name!r})"


TABLE = (
    Role("leader", "lead", "Lead", SCOPE_LEAD, PIN_SINGLE, False, False),
    Role("analyst", "analysis", "Analysis", SCOPE_RESULT, PIN_PER_PROVIDER, False, False),
    Role("planner", "planning", "Implementation Plan", SCOPE_RESULT, PIN_PER_PROVIDER, False, False),
    Role("implementer", "implementation", "Implementation", SCOPE_STAGE, PIN_SINGLE, False, False),
    Role("verifier", "verification", "Verification", SCOPE_RESULT, PIN_PER_PROVIDER, False, True),
    Role("critic", "critique", "Critique", SCOPE_RESULT, PIN_PER_PROVIDER, False, True),
    Role("report-writer", "report", "Report", SCOPE_RESULT, PIN_SINGLE, True, True),
    Role("translator", "translation", "Translation", SCOPE_RESULT, PIN_SINGLE, True, True),
)
BY_NAME = {r.name: r for r in TABLE}

ROLES = tuple(r.name for r in TABLE)  # also the order roles are listed in a manifest
LEADER = "leader"
LEADER_ID = "leader"  # the lead's worker id in manifests and reports
REPORT_WRITER = "report-writer"
TRANSLATOR = "translator"
IMPLEMENTER = "implementer"
LATER_ROLES = tuple(r.name for r in TABLE if r.later_round)

# The roles each task type places on its roster workers (DESIGN §3).
TASK_ROLES = {
    "analysis": ("analyst",),
    "implementation-planning": ("planner",),
    "implementation": ("implementer", "verifier"),
    "verification": ("verifier",),
    "release-handoff": ("critic",),
}


def round_of(role: str) -> str:
    return BY_NAME[role].round


def write_scope(role: str) -> str:
    """What a worker whose OKSTRA_WORKER_ROLE is `role` may write; no role at all is the lead."""
    if not role:
        return SCOPE_LEAD
    found = BY_NAME.get(role)
    return found.write_scope if found is not None else SCOPE_RESULT
