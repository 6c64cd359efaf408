"""``python -m evalcli``: the same command line as the ``evalcli`` script."""

from evalcli.cli import main

main()
