"""`hooks-install`: argument handling; the work is okstra.harness.settings_merge.apply."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from okstra.core import cli

PROG = "hooks-install"


def main(argv: Sequence[str] | None = None, doc: str | None = None) -> int:
    parser = cli.parser(PROG, doc)
    parser.add_argument("--project", metavar="DIR", required=True)
    parser.add_argument("--uninstall", action="store_true")
    parser.add_argument("--prefix", metavar="PREFIX")
    parser.add_argument("--json", action="store_true")

    def body() -> int:
        args = parser.parse_args(argv)
        from okstra.harness import settings_merge

        prefix = Path(args.prefix).expanduser() if args.prefix else cli.BIN_DIR.parent
        outcome = settings_merge.apply(Path(args.project).expanduser(), prefix, uninstall=args.uninstall)
        if args.json:
            cli.emit_json(outcome.to_dict())
        elif outcome.action == "install":
            state = "installed" if outcome.changed else "already installed (unchanged)"
            print(
                f"{outcome.settings_path}: okstra hooks {state}: "
                + ", ".join(f"{h['event']}[{h['matcher']}]" for h in outcome.hooks)
            )
        else:
            state = (
                "removed the file okstra created"
                if outcome.removed_file
                else ("removed" if outcome.changed else "none found (unchanged)")
            )
            print(f"{outcome.settings_path}: okstra hooks {state}")
        return cli.EXIT_OK

    return cli.run(PROG, body)
