"""``python -m pipeline.tasks build|validate``: see ``pipeline.tasks.common.main``."""
import sys

from pipeline.tasks.common import main
from pipeline.usage import run_cli

sys.exit(run_cli(main, prog="python -m pipeline.tasks"))
