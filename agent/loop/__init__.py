"""One question's trip: the controller, its steps, conversation, trace and replay."""
