"""The ``dphawkes`` command line (:mod:`.main`): argument parsing over the core and the experiments.

Every command runs its linear algebra on one BLAS thread (:mod:`dphawkes_core.threads`); the thread variables are set
here, when the command line is imported and before numpy is, so that OpenBLAS never starts the threads it would not
use (``tests/cli/test_startup.py``).
"""

from dphawkes_core.threads import start_blas_on_one_thread

start_blas_on_one_thread()
