"""What the reference's coverage run records inside the sandbox: per-test coverage, infection,
impact, fingerprints."""
