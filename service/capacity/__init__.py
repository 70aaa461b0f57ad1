"""What the server takes on and when its work runs: admission and the scheduler."""
