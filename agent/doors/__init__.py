"""The front doors over the service: the command line, the HTTP API and the MCP tools."""
