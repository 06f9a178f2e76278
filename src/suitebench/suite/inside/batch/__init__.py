"""The batched engine inside the sandbox: one pytest start-up, one collection, a child forked per
program."""
