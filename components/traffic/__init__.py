"""The traffic phase: the serving gateway, the endpoint picker, and a model stack's route on a platform's shared gateway."""
