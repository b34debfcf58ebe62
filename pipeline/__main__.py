"""`python -m pipeline` is `python -m pipeline.generate`."""
import sys

from pipeline.generate import main
from pipeline.usage import run_cli

sys.exit(run_cli(main, prog="python -m pipeline"))
