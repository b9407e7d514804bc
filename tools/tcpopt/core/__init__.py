"""What every part stands on: settings, errors, Debian packages, work dir."""
