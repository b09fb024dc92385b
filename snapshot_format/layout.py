"""Where things live: the state directory, generation naming and the CURRENT pointer.

With KIVGRAPH_HOME set, everything lives under it: ``$KIVGRAPH_HOME/kivgraph.toml``
and ``$KIVGRAPH_HOME/state/``. Otherwise the XDG defaults:
``~/.config/kivgraph/kivgraph.toml`` and ``~/.local/state/kivgraph/``.
Explicit ``--config`` and ``--state-dir`` override both.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from snapshot_format.versions import FORMAT_VERSION

CONFIG_FILENAME = "kivgraph.toml"
CURRENT_FILENAME = "CURRENT"
MANIFEST_FILENAME = "manifest"
HOLD_FILENAME = "hold.lock"
DATA_FILENAME = "data.mdb"
LAYERS_DIRNAME = "layers"  # feature 10: one sub-directory (an LMDB environment) per repository layer
_LAYER_DIR_RE = re.compile(r"^layers/[0-9a-f]{16,64}$")


def layer_directory(repository: str, digest: str) -> str:
    """The generation-relative directory of a repository layer, named by its repository and content digest."""
    h = hashlib.blake2b(digest_size=16)
    h.update(repository.encode("utf-8", "surrogatepass") + b"\x00" + digest.encode())
    return f"{LAYERS_DIRNAME}/{h.hexdigest()}"


def is_layer_directory(value: str) -> bool:
    """Whether a manifest's layer directory is one this format writes (never a path out of the generation)."""
    return bool(_LAYER_DIR_RE.match(value))


_GENERATION_RE = re.compile(r"^g(\d{6,})\.v(\d+)$")


@dataclass(frozen=True)
class StateLayout:
    """Resolved paths of one kivgraph installation."""

    config_path: Path
    state_dir: Path

    @property
    def generations_dir(self) -> Path:
        return self.state_dir / "generations"

    @property
    def current_pointer(self) -> Path:
        return self.state_dir / CURRENT_FILENAME

    @property
    def publish_lock(self) -> Path:
        return self.state_dir / "publish.lock"

    @property
    def fact_cache_dir(self) -> Path:
        return self.state_dir / "factcache"

    @property
    def scratch_dir(self) -> Path:
        """The indexer's temporary files (analyzer output), emptied by every run."""
        return self.state_dir / "scratch"

    @property
    def log_dir(self) -> Path:
        return self.state_dir / "logs"


def resolve_layout(
    config: str | os.PathLike[str] | None = None,
    state_dir: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> StateLayout:
    """Resolve config and state locations from flags, KIVGRAPH_HOME, then XDG."""
    env = os.environ if environ is None else environ
    home = env.get("KIVGRAPH_HOME", "").strip()
    if home:
        base = Path(home).expanduser().absolute()
        default_config = base / CONFIG_FILENAME
        default_state = base / "state"
    else:
        user = Path(env.get("HOME") or Path.home())
        xdg_config = Path(env.get("XDG_CONFIG_HOME") or user / ".config")
        xdg_state = Path(env.get("XDG_STATE_HOME") or user / ".local" / "state")
        default_config = xdg_config / "kivgraph" / CONFIG_FILENAME
        default_state = xdg_state / "kivgraph"
    cfg = Path(config).expanduser().absolute() if config else default_config
    st = Path(state_dir).expanduser().absolute() if state_dir else default_state
    return StateLayout(config_path=cfg, state_dir=st)


def generation_name(generation_id: int, format_version: int = FORMAT_VERSION) -> str:
    """Directory name of a generation, e.g. ``g000042.v1``."""
    if generation_id <= 0:
        raise ValueError(f"generation id must be positive, got {generation_id}")
    return f"g{generation_id:06d}.v{format_version}"


def temp_generation_name(generation_id: int) -> str:
    """Directory name of a generation under construction (never read by servers)."""
    return f".tmp-g{generation_id:06d}"


def parse_generation_name(name: str) -> tuple[int, int] | None:
    """(id, format version) of a generation directory name, or None."""
    match = _GENERATION_RE.match(name)
    if not match:
        return None
    return int(match.group(1)), int(match.group(2))


def list_generations(layout: StateLayout) -> list[tuple[int, int, Path]]:
    """Published generation directories as (id, format, path), oldest first."""
    try:
        entries = list(os.scandir(layout.generations_dir))
    except FileNotFoundError:
        return []
    found = []
    for entry in entries:
        parsed = parse_generation_name(entry.name)
        if parsed and entry.is_dir(follow_symlinks=False):
            found.append((parsed[0], parsed[1], Path(entry.path)))
    found.sort()
    return found


_MAX_POINTER_BYTES = 256


@dataclass(frozen=True)
class Pointer:
    """What CURRENT says: a generation name, or why there is none (``problem`` empty when it is just absent)."""

    name: str | None
    problem: str = ""


def read_pointer(layout: StateLayout) -> Pointer:
    """Read CURRENT defensively: a bounded read of a regular file that must name a generation.

    Anything else — not UTF-8, not a generation name, a directory or a FIFO in its place — is
    "no valid pointer" with the reason: readers fall back to the newest generation on disk and
    the next publication replaces the file.
    """
    path = layout.current_pointer
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        return Pointer(None)
    except OSError as exc:
        return Pointer(None, f"{path} cannot be read: {exc.strerror or exc}")
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return Pointer(None, f"{path} is not a regular file")
        raw = os.read(fd, _MAX_POINTER_BYTES + 1)
    except OSError as exc:
        return Pointer(None, f"{path} cannot be read: {exc.strerror or exc}")
    finally:
        os.close(fd)
    try:
        text = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        return Pointer(None, f"{path} is not UTF-8 text (damaged pointer)")
    if not text:
        return Pointer(None, f"{path} is empty")
    if len(raw) > _MAX_POINTER_BYTES or parse_generation_name(text) is None:
        return Pointer(None, f"{path} does not name a generation ({text[:40]!r})")
    return Pointer(text)


def read_current(layout: StateLayout) -> str | None:
    """The generation name CURRENT points at, or None when there is no valid pointer."""
    return read_pointer(layout).name
