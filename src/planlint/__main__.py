import sys

from planlint.cli import main

sys.exit(main())
