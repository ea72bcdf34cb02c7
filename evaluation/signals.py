"""What the benchmark store tells the apps that build on it, without importing them."""

from django.dispatch import Signal

# Sent once a version is published, with `version` and `carry_submissions` (whether staff asked for the
# submissions of the version it derives from to be carried over and scored on it).
version_published = Signal()
