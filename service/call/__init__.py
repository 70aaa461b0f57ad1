"""One synthesis call: session, segmenter, pacing, outbox, output, events, watchdog."""
