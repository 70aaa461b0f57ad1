"""voxlite protocol definitions."""
