"""The day's files: journals of frames, manifest, index, the run chain's links."""
