"""What every component builds with: names and the zones they are checked against, validation, settings, resource options, pod specs, zone spread and the namespace quota's arithmetic."""
