"""``evloop keys add|list|remove`` (or ``revoke``): manage the API keys of ``evloop serve``, a KEYS.json.

The file holds each key's sha256, never the key: ``add`` prints the new key once, and it cannot
be shown again (remove the name and add it anew to rotate a key).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from evidence_loop.agent.access.keys import SCOPES, ApiKey, Keyring, Scope, hash_key, keys_file_json, new_key
from evidence_loop.agent.doors.cli.common import Subparsers, add_command, parse_groups
from evidence_loop.tools.errors import InputError

DESCRIPTION = """\
Create, list and remove API keys for `evloop serve --keys KEYS.json`. A key has a name, the
groups its requests read with (a request may narrow them, never widen them) and scopes:
ask (POST /v1/ask and its own traces), ingest (add, list and delete the documents whose every
ACL group the key holds), publish (with ingest: also public documents, those without an ACL),
audit (read, verify and replay other keys' traces, within the key's groups, and the /audit console),
review (post verdicts on runs within the key's groups: POST /v1/runs/{run_id}/feedback). The file
stores only the sha256 of each key; `add` prints the key itself once.

A running `evloop serve` (every worker) and `evloop mcp --http` read the file again within a
second or two of a change: an added key works and a removed one is refused without a restart. A
file they cannot read (a typo, half-written) changes nothing there: they keep the keys they had
and log why."""

EPILOG = """\
examples:
  evloop keys add chatbot --scopes ask --file keys.json
  evloop keys add support-staff --groups staff --scopes ask,audit --file keys.json
  evloop keys add reviewer --groups staff --scopes audit,review --file keys.json
  evloop keys add importer --groups staff --scopes ingest --file keys.json
  evloop keys add help-centre --scopes ingest,publish --file keys.json
  evloop keys list --file keys.json
  evloop keys remove chatbot --file keys.json        # or: evloop keys revoke chatbot"""


def register(subparsers: Subparsers) -> None:
    """Add the ``keys`` command and its three actions."""
    parser = add_command(
        subparsers, "keys", summary="manage the HTTP API's keys", description=DESCRIPTION, epilog=EPILOG
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", dest="action", required=True)
    add = actions.add_parser("add", help="create a key and print it once")
    add.add_argument("name", metavar="NAME", help="the key's name, as traces record it")
    add.add_argument("--groups", type=parse_groups, default=(), metavar="G1,G2", help="groups it reads with")
    add.add_argument(
        "--scopes",
        type=_parse_scopes,
        default=("ask",),
        metavar="S1,S2",
        help="ask, ingest, audit, publish, review (default: ask)",
    )
    listing = actions.add_parser("list", help="the keys' names, groups and scopes")
    remove = actions.add_parser("remove", aliases=["revoke"], help="revoke a key by name (or: revoke)")
    remove.add_argument("name", metavar="NAME")
    for action in (add, listing, remove):
        action.add_argument("--file", type=Path, required=True, metavar="KEYS.json", help="the keys file")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Do the chosen action on the keys file."""
    path: Path = args.file
    keys = list(Keyring.load(path).keys) if args.action != "add" or path.exists() else []
    if args.action == "list":
        for key in keys:
            groups = ",".join(sorted(key.groups)) or "-"
            print(f"{key.name}  groups={groups}  scopes={','.join(sorted(key.scopes))}")
        return 0
    if args.action in ("remove", "revoke"):
        if not any(k.name == args.name for k in keys):
            raise InputError(f"{path}: no key named {args.name!r}")
        _write(path, [k for k in keys if k.name != args.name])
        print(f"removed key {args.name!r} from {path}")
        return 0
    if any(k.name == args.name for k in keys):
        raise InputError(f"{path}: a key named {args.name!r} exists; remove it first to replace it")
    secret = new_key()
    added = ApiKey(args.name, hash_key(secret), frozenset(args.groups), frozenset(args.scopes))
    _write(path, [*keys, added])
    # Validate what was written exactly as the server will read it.
    Keyring.load(path)
    print(secret)
    print(f"added key {args.name!r} to {path}; the key above is shown only this once", file=sys.stderr)
    return 0


def _parse_scopes(value: str) -> tuple[Scope, ...]:
    scopes = parse_groups(value)
    unknown = [s for s in scopes if s not in SCOPES]
    if unknown or not scopes:
        raise argparse.ArgumentTypeError(f"scopes are {', '.join(SCOPES)}; got {value!r}")
    if "publish" in scopes and "ingest" not in scopes:
        raise argparse.ArgumentTypeError("publish adds public documents to ingest: give ingest,publish")
    return tuple(s for s in SCOPES if s in scopes)


def _write(path: Path, keys: list[ApiKey]) -> None:
    """Replace the file in one rename, readable by its owner only (it guards the keys' hashes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".keys-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(keys_file_json(keys))
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
