"""``python -m suitebench``: the command line, as the ``suitebench`` script runs it."""

from suitebench.cli.main import main

main()
