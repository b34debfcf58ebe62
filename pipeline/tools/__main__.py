"""``python -m pipeline.tools``: one tool call per process (``pipeline.tools.cli``), or ``serve``: the same
tools over MCP (``pipeline.tools.serve``). The server is imported only to serve: an agent's call per
process must not pay for what the server needs besides (the dataset readers, pyarrow)."""
import sys

from pipeline.tools.cli import main, serve_arguments

serve_argv = serve_arguments(sys.argv[1:])
if serve_argv is None:
    sys.exit(main())

from pipeline.tools.serve import main as serve  # only to serve (see above)

sys.exit(serve(serve_argv))
