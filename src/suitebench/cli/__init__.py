"""The command line (typer): one module a command group, each a thin layer over the modes.

A command reads its options, opens the store and the executor, calls into ``suite``,
``audit``, ``construct``, ``generate``, ``agents`` or ``report``, and prints or writes what
came back; exit codes and the harness-error rule (exit 4 unless ``--keep-going``) live here.
"""
