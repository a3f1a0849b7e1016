"""tiktoken encodings built offline from the rank files the bpe-openai crate ships.

tiktoken downloads its rank files at run time; tests may not use the network. The ``bpe-openai``
crate that agentmsg's core embeds carries the same files (gzipped) in its source, which cargo
fetched to build the extension. This module finds them, checks each against the sha256 that
tiktoken itself expects, and builds ``tiktoken.Encoding`` with upstream's own pattern and
special tokens (tiktoken_ext.openai_public), so the oracle is tiktoken, only fed locally.

    >>> encoding("cl100k_base").encode_ordinary("hello world")
    [15339, 1917]
"""

from __future__ import annotations

import base64
import functools
import glob
import gzip
import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Dict, List, Optional
from unittest import mock

import tiktoken
import tiktoken_ext.openai_public as openai_public

REPO = Path(__file__).resolve().parent.parent
NAMES = ("o200k_base", "cl100k_base")


class RankDataMissing(RuntimeError):
    """The bpe-openai crate sources (with their data/ folder) are not on this machine."""


def _crate_dir_from_cargo() -> Optional[Path]:
    """The bpe-openai source folder cargo resolved for this workspace (offline, no fetch)."""
    try:
        result = subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--offline", "--locked"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if result.returncode != 0:
        return None
    for package in json.loads(result.stdout)["packages"]:
        if package["name"] == "bpe-openai":
            return Path(package["manifest_path"]).parent
    return None


def _crate_dirs_from_registry() -> List[Path]:
    cargo_home = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo"))
    pattern = str(cargo_home / "registry" / "src" / "*" / "bpe-openai-0.3.*")
    return [Path(p) for p in sorted(glob.glob(pattern), reverse=True)]


@functools.lru_cache(maxsize=None)
def data_dir() -> Path:
    """The crate's data/ folder, holding ``<name>.tiktoken.gz`` for each encoding."""
    candidates = []
    from_cargo = _crate_dir_from_cargo()
    if from_cargo is not None:
        candidates.append(from_cargo)
    candidates.extend(_crate_dirs_from_registry())
    for crate in candidates:
        data = crate / "data"
        if all((data / f"{name}.tiktoken.gz").is_file() for name in NAMES):
            return data
    raise RankDataMissing(
        "cannot find the bpe-openai crate's rank files (data/o200k_base.tiktoken.gz and "
        "data/cl100k_base.tiktoken.gz); build the extension first (e.g. `cargo build -p "
        "agentmsg-py`) so cargo fetches the crate, or set CARGO_HOME to where it lives. "
        f"Looked in: {[str(c) for c in candidates] or 'no candidates'}"
    )


def _local_ranks(url: str, expected_hash: Optional[str] = None) -> Dict[bytes, int]:
    """Stands in for tiktoken's ``load_tiktoken_bpe``: same result, read from the crate."""
    name = url.rsplit("/", 1)[-1]  # e.g. "o200k_base.tiktoken"
    contents = gzip.decompress((data_dir() / f"{name}.gz").read_bytes())
    digest = hashlib.sha256(contents).hexdigest()
    if expected_hash is not None and digest != expected_hash:
        raise RankDataMissing(
            f"{name} from the bpe-openai crate has sha256 {digest}, but tiktoken expects "
            f"{expected_hash}: the crate's data is not the file tiktoken uses"
        )
    ranks = {}
    for line in contents.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


@functools.lru_cache(maxsize=None)
def encoding(name: str) -> tiktoken.Encoding:
    """tiktoken's encoding ``name``, built from the local rank files (checked by sha256)."""
    constructor = getattr(openai_public, name)
    with mock.patch.object(openai_public, "load_tiktoken_bpe", _local_ranks):
        spec = constructor()
    return tiktoken.Encoding(**spec)


def count(text: str, name: str) -> int:
    """The oracle's count: ``len(encode_ordinary(text))``."""
    return len(encoding(name).encode_ordinary(text))
