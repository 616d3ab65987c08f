"""`python -m sourcerer.cli ...`, the same as the `sourcerer` command."""

import sys

from sourcerer.cli.main import main

sys.exit(main())
