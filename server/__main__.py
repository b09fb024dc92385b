"""``python -m server``: the same as ``kivgraph serve``."""

from server.cli import serve

serve(prog_name="kivgraph serve")
