"""The app's saved session file, read defensively: a file that cannot be read as a session (garbage, cut short,
UTF-16, nested too deep, a folder, a state the rules refuse) is kept aside under a new name, never deleted nor
overwritten, and the app starts fresh and says so. Pure (no Kivy)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable

from companion import inputs
from companion.errors import PirateTableError

MAX_SESSION_BYTES = 32 * 1024 * 1024

# What reading a hostile state can raise besides our own errors: the state's loader indexes dicts and lists and
# calls constructors on whatever the file holds. Each is reported and the file kept aside; none is swallowed.
_BAD_STATE = (PirateTableError, ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError)


def keep_aside(path: str | os.PathLike) -> Path:
    """Rename ``path`` to ``<name>.bad-<UTC time>[-n]`` beside it (never replacing a file); return the new path."""
    p = Path(path)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    n = 1
    while True:
        target = p.with_name(f"{p.name}.bad-{stamp}" + (f"-{n}" if n > 1 else ""))
        if not target.exists() and not target.is_symlink():
            try:
                if p.is_dir():
                    os.rename(p, target)
                else:
                    os.link(p, target, follow_symlinks=False)  # fails if target appeared meanwhile
                    os.unlink(p)
                return target
            except FileExistsError:
                pass
            except OSError:
                if target.exists():
                    raise
                os.rename(p, target)  # a file system without hard links
                return target
        n += 1


def load_saved(path: str | os.PathLike, from_dict: Callable[[dict[str, Any]], Any],
               check: Callable[[Any], Any] | None = None) -> tuple[Any, str | None]:
    """(session, note). No file: (None, None). A good file: (session, None). A bad one: it is kept aside and
    the note (for the screen) says why and where it went: (None, note). ``check(session)``: what the caller will
    read from the session, read once here, so that a state that loads but would fail later is set aside too."""
    p = Path(path)
    if not p.exists() and not p.is_symlink():
        return None, None
    try:
        if p.is_dir():
            raise PirateTableError("it is a folder, not a file")
        data = inputs.read_json_file(p, p.name, max_bytes=MAX_SESSION_BYTES)
        if not isinstance(data, dict):
            raise PirateTableError(f"a session state is a JSON object, not {type(data).__name__}")
        session = from_dict(data)
        if check is not None:
            check(session)
        return session, None
    except (*_BAD_STATE, OSError) as exc:
        reason = str(exc) if isinstance(exc, PirateTableError) else f"{type(exc).__name__}: {exc}"
        reason = reason[:200]
    try:
        kept = keep_aside(p)
    except OSError as exc:
        return None, (f"The saved session cannot be read ({reason}) and could not be moved aside "
                      f"({exc.strerror or exc}); it is left as it is. Starting fresh.")
    return None, f"The saved session could not be read ({reason}); it was kept as {kept.name}. Starting fresh."
