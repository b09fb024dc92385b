# Calls through `import x as y`, `from x import y as z` and a dotted module path.
# --- path: util/__init__.py ---
# --- path: util/text.py ---
def shout(s: str) -> str:
    return s.upper()


def whisper(s: str) -> str:
    return s.lower()

# --- path: app/main.py ---
import util.text as t
#      ^ imports: util.text
from util.text import whisper as quiet
#                     ^ imports: util.text.whisper
import util.text


def run():
    t.shout("a")
#   ^ calls: util.text.shout from app.main.run
    quiet("b")
#   ^ calls: util.text.whisper
    util.text.shout("c")
#   ^ calls: util.text.shout


result = t.whisper("module level")
#        ^ calls: util.text.whisper from app.main
