from planlint.cli import entry

entry()
