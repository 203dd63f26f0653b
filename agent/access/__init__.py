"""Who may call (the HTTP API's keys) and who may write which documents."""
