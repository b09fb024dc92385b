"""What a Rust repository's bundle carries for linking besides its facts (indexer/bundle.py reads it)."""

from __future__ import annotations

from pathlib import Path


def linking_inputs(root: Path, max_file_bytes: int) -> list[str]:
    """Every Cargo.toml and Cargo.lock: the crate names that name packages and providers."""
    from indexer.bundle import named_files

    return named_files(root, lambda name: name in ("Cargo.toml", "Cargo.lock"))
