"""Which tests run on which mutant: coverage, statements, weak mutation, import-time impact, edits
since a revision."""
