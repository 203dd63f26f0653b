"""The ``evloop`` subcommands, one module each.

Every command module exposes ``register(subparsers)``, which adds its parser and sets ``run`` as
the parser's default, and ``run(args) -> int``, the exit code. ``agent.doors.cli.app`` only assembles them.
Helpers the commands share (index folder, group lists, hit formatting) live in ``common``.
"""
