"""``python -m dphawkes_cli``: the ``dphawkes`` command."""

import sys

from .main import main

sys.exit(main())
