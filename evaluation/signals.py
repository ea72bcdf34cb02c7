"""What the benchmark store tells the apps that build on it, without importing them."""

from django.dispatch import Signal

# Sent once a version is published, with `version` and `carry_submissions` (whether staff asked for the
# submissions of the version it derives from to be carried over and scored on it).
version_published = Signal()

# Sent inside the transaction that rebuilt a version's derived data with the current scorer
# (evaluation/rebuilding.py), with `version`: its submissions were scored on what it replaced.
version_rebuilt = Signal()
