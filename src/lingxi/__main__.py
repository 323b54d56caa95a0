"""``python -m lingxi`` runs the command line."""

from lingxi.cli import main

main()
