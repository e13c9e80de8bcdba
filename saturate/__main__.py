"""``python -m saturate`` runs the command line."""

from saturate.cli import main

main()
