"""The gRPC edge: servicer, proto conversion, status codes, calls, auth, health, reflection."""
