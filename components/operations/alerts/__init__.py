"""The alert policies a stack's signals allow, and the kubectl steps of their pages."""
