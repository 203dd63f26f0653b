"""``evloop config show``: every setting in force, where its value came from, and the policy's hash."""

from __future__ import annotations

import argparse
import json

from evidence_loop.agent import settings
from evidence_loop.agent.doors.cli.common import (
    Subparsers,
    add_command,
    add_index_option,
    resolve_location,
    shown,
)
from evidence_loop.agent.doors.commands.session import add_policy_option, policy_from_args, policy_line

DESCRIPTION = """\
Show the settings in force and where each came from: a flag, the environment, the configuration
file (EVLOOP_CONFIG=FILE, TOML, the settings' names as keys) or the default. Flags win over the
environment, the environment over the file, the file over the defaults. API keys are shown as ****.
The last line is the hash of the policy in force, as each run's trace pins it."""

EPILOG = """\
examples:
  evloop config show
  EVLOOP_CONFIG=evloop.toml evloop config show --policy-file policy.json
  evloop config show --json"""


def register(subparsers: Subparsers) -> None:
    """Add the ``config`` command and its ``show`` action."""
    parser = add_command(
        subparsers, "config", summary="show the settings in force", description=DESCRIPTION, epilog=EPILOG
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", dest="action", required=True)
    show = actions.add_parser("show", help="each setting, its value and where it came from")
    add_index_option(show)
    add_policy_option(show)
    show.add_argument("--json", action="store_true", help="one JSON object: name -> value, source, variable")
    show.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print each setting as name, value, source and variable; then the store and the policy."""
    resolved = settings.current()
    location = shown(resolve_location(args))
    policy = policy_from_args(args)
    if args.json:
        record = {
            name: {"value": value, "source": source, "variable": env}
            for name, env, value, source in resolved.shown()
        }
        extra = {"config_file": resolved.config_file, "location": location, "policy": policy.digest()}
        print(json.dumps({"settings": record, **extra}, ensure_ascii=False))
        return 0
    width = max(len(name) for name, *_ in resolved.shown())
    for name, env, value, source in resolved.shown():
        print(f"{name.ljust(width)}  {(value or '-')!s:<40}  {source:<11}  ${env}")
    print(f"config file: {resolved.config_file or '- (set EVLOOP_CONFIG to read one)'}")
    print(f"knowledge base: {location}")
    print(policy_line(policy))
    return 0
