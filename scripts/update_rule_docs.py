"""Regenerate docs/rules/: one page per rule (PLxxx.md) and the index (README.md), from the rules' docstrings.

    python scripts/update_rule_docs.py

tests/test_rule_pages.py fails when a page is stale, missing or left over.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from planlint.formats.rule_docs import pages  # noqa: E402
from planlint.rules import RULES  # noqa: E402

target = ROOT / "docs" / "rules"
target.mkdir(parents=True, exist_ok=True)
wanted = pages(RULES.values())
for stale in sorted(set(p.name for p in target.glob("*.md")) - set(wanted)):
    (target / stale).unlink()
    print(f"removed docs/rules/{stale}")
for name, text in wanted.items():
    path = target / name
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote docs/rules/{name}")
print(f"docs/rules/: {len(wanted) - 1} rule pages and the index are up to date")
