"""What accounts tell the apps that build on them, without importing them."""

from django.dispatch import Signal

# Sent with `team` after a team's name changed: anything that shows the name (the leaderboard's cached
# ranking) must forget it.
team_renamed = Signal()
