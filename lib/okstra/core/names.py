"""The names of okstra's files and folders in a project, as plain strings (DESIGN §2, §8).

`model.layout` builds every path from these; `core.git` and `core.paths` need the
project's `.okstra` folder below the model floor; the write-guard's hot path
(DESIGN §13) reads them without importing `pathlib`. So this module imports nothing.
"""

OKSTRA_DIR = ".okstra"
RUNS_DIR = "runs"
REPORTS_DIR = "reports"
RESPONSES_DIR = "user-responses"  # inside REPORTS_DIR: the sidecars, the user's decisions

# A report is a pair beside each other: `<stem>.md` (what people read) and
# `<stem>.data.json` (what okstra validates and renders from).
MARKDOWN_SUFFIX = ".md"
DATA_SUFFIX = ".data.json"
REPORT_PREFIX = "final-report-"
SIDECAR_PREFIX = "user-response-"


def report_stem(task_type: str, report_number: int) -> str:
    """Every file derived from a report uses the **report** number, never the run number."""
    return f"{REPORT_PREFIX}{task_type}-{report_number:03d}"


def sidecar_name(stem: str) -> str:
    """`user-response-<type>-<NNN>.md`, the sidecar of report `final-report-<type>-<NNN>`."""
    return f"{SIDECAR_PREFIX}{stem.removeprefix(REPORT_PREFIX)}{MARKDOWN_SUFFIX}"
