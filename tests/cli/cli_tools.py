"""Shared by the command-line tests: one call of ``dphawkes`` in process."""

from __future__ import annotations

from dphawkes_cli.main import main


def run(argv, capsys) -> tuple[int, str, str]:
    """``dphawkes argv…`` (each argument as text): its exit code, stdout and stderr."""
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err
