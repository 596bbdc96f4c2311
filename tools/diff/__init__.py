"""Preview diffs for review (make diff): each stack against a git ref, a move to a platform stack, and what a diff recreates or renames."""
