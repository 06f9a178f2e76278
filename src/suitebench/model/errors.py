"""The one error every on-disk format raises: which file, which field, what was expected."""

from __future__ import annotations

import re
from pathlib import Path

# Ids of problems, instances, mutants and arms: they become file and directory names.
ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


class FormatError(ValueError):
    """A malformed file a user wrote: names the file, the field and what was expected."""

    def __init__(self, file: Path | str, field: str, expected: str) -> None:
        self.file = str(file)
        self.field = field
        self.expected = expected
        super().__init__(f"{self.file}: field {field!r}: {expected}")
