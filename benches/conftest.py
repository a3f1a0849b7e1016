"""Benches share the transcript loader with the tests (tests/transcripts.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
