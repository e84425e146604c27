"""Regenerate the README's rule table and the packaged schema copy.

    python scripts/update_readme.py
"""

import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from planlint.cli import rules_text  # noqa: E402

readme = ROOT / "README.md"
text = readme.read_text(encoding="utf-8")
text = re.sub(r"(<!-- rules:start -->\n).*?(<!-- rules:end -->)", lambda m: m.group(1) + rules_text("markdown") + m.group(2), text, flags=re.S)
readme.write_text(text, encoding="utf-8")
shutil.copyfile(ROOT / "schemas" / "plan.schema.json", ROOT / "src" / "planlint" / "data" / "plan.schema.json")
print("README rule table and packaged schema updated")
