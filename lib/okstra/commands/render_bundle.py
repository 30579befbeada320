"""`render-bundle`: prepare a run (DESIGN §3)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from okstra.core import cli, fsio, git_exclude, paths
from okstra.core.errors import InputError, ProblemsFound, RefusedError
from okstra.core.names import OKSTRA_DIR
from okstra.model.layout import TaskKey
from okstra.run import bundle

PROG = "render-bundle"


def _workers(text: str) -> list[str]:
    return [w.strip() for w in text.split(",")]


def budget_of(root, flag: str | None):
    """The new run's budget: --budget-usd, else `budget-usd` in config, else none."""
    from okstra.model.spend import Budget
    from okstra.run import config

    if flag is not None:
        return Budget(float(config.check_value("budget-usd", flag, source="--budget-usd")), "render-bundle --budget-usd")
    value = config.effective("budget-usd", root)
    return Budget(float(value.value), f"budget-usd in {value.source}") if value is not None else None


def _brief(args: argparse.Namespace, root) -> str | None:
    """--brief TEXT, or --brief-file PATH (`-`: stdin), read as UTF-8 text."""
    if args.brief is not None and args.brief_file is not None:
        raise InputError("--brief and --brief-file both given", hint="pass one of them")
    if args.brief_file is None:
        return args.brief
    if args.brief_file == "-":
        raw = sys.stdin.buffer.read(bundle.MAX_BRIEF + 1)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError("--brief-file -: stdin is not UTF-8 text", hint="pass the brief as UTF-8") from None
    return fsio.read_text(paths.argument(root, args.brief_file, source="--brief-file"), what="brief file")


def planned_request(root: Path, request: bundle.BundleRequest) -> bundle.BundleRequest:
    """For `--stage N --plan PLAN` the report domain reads the approved stage and its plan
    text first; the run domain renders with it (DESIGN §7)."""
    bundle.check_stage_request(request)
    if request.stage is None:
        return request
    from okstra.report import stage_queue

    key = TaskKey.parse(request.task_key)
    return replace(request, planned=stage_queue.approved_stage(root, key, request.plan or "", request.stage))


def _run(args: argparse.Namespace) -> int:
    root = paths.find_project_root(explicit=args.project_root)
    request = bundle.BundleRequest(
        task_key=args.task_key,
        task_type=args.task_type,
        workers=_workers(args.workers) if args.workers is not None else None,
        executor=args.executor,
        role_models=tuple(args.role_model),
        report_language=args.report_language,
        backend=args.backend,
        stage=cli.positive_int(args.stage, "--stage") if args.stage is not None else None,
        plan=args.plan,
        lead_pane=args.lead_pane,
        budget=budget_of(root, args.budget_usd),
        brief=_brief(args, root),
        allow_dirty=args.allow_dirty,
    )
    # Every check before anything is written (DESIGN §3): the request, the backend
    # here, the concurrent-run gate; only then is the active run ended (--replace-active).
    prepared = bundle.prepare(root, planned_request(root, request))
    from okstra.model.layout import open_run
    from okstra.team import lifecycle
    from okstra.team.backends import registry

    why = registry.unusable(prepared.manifest.terminal_backend, root, prepared.manifest.lead_pane_id)
    if why is not None:
        raise RefusedError(
            f"--backend {prepared.manifest.terminal_backend} cannot work here: {why}",
            hint="use --backend cli-wrapper (background processes), or run the lead inside tmux",
        )
    blocking = bundle.blocking_run(root)
    if blocking is not None:
        if not args.replace_active:
            raise ProblemsFound(blocking.problems())
        old = open_run(blocking.run.run_manifest_path, project_root=root)
        ended = lifecycle.teardown(old)
        cli.say(PROG, f"ended run {ended.run_id} (--replace-active): written off {', '.join(ended.written_off) or 'none'}")
    result = bundle.write(prepared)
    if args.isolate is not None:
        from okstra.model import layout
        from okstra.team import worktrees

        worktrees.enable(layout.for_project(root).run(result.run_id))
    ignore_file = git_exclude.ensure_excluded(root, OKSTRA_DIR + "/", gitignore=args.gitignore)
    if ignore_file is not None:
        cli.say(PROG, f"added .okstra/ to {ignore_file}: git leaves okstra's run files alone")
    doc = result.to_dict()
    if args.json:
        cli.emit_json(doc)
        return cli.EXIT_OK
    for name in ("runId", "runDir", "runManifestPath", "teamStatePath", "activeRunPath", "reportNumber"):
        sys.stdout.write(f"{name}: {doc[name]}\n")
    for worker, prompt in doc["prompts"].items():
        sys.stdout.write(f"prompt {worker}: {prompt}\n")
    return cli.EXIT_OK


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    parser.add_argument("--task-key", required=True)
    parser.add_argument("--task-type", required=True)
    parser.add_argument("--workers")
    parser.add_argument("--executor")
    parser.add_argument("--role-model", action="append", default=[])
    parser.add_argument("--report-language")
    parser.add_argument("--backend")
    parser.add_argument("--stage")
    parser.add_argument("--plan")
    parser.add_argument("--lead-pane")
    parser.add_argument("--project-root")
    parser.add_argument("--gitignore", action="store_true")
    parser.add_argument("--isolate", choices=("worktree",))
    parser.add_argument("--budget-usd", metavar="N")
    parser.add_argument("--brief")
    parser.add_argument("--brief-file")
    parser.add_argument("--allow-dirty", action="store_true")
    parser.add_argument("--replace-active", action="store_true")
    parser.add_argument("--json", action="store_true")
    return cli.run(PROG, lambda: _run(parser.parse_args(argv)))
