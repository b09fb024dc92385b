"""Pure query functions over a published generation: plain data in, plain data out, no MCP types."""
