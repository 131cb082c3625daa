"""Checks that each folder includes only the folders below it (STYLE.md)."""
import pathlib
import re
import sys

ALLOWED = {
    "ir": {"ir"},
    "frontend": {"ir", "frontend"},
    "passes": {"ir", "passes"},
    "codegen": {"ir", "codegen"},
    "runtime": {"ir", "frontend", "codegen", "passes", "runtime", "include"},
}
OURS = {"ir", "frontend", "passes", "codegen", "runtime", "tools", "test", "include"}
# Single files a folder may include besides its folders: the public API's
# dependency-free value types.
ALLOWED_FILES = {"codegen": {"include/fusec/backend.h"}}
INCLUDE = re.compile(r'^\s*#\s*include\s+"(([a-z_-]+)/[^"]*)"')

root = pathlib.Path(sys.argv[1])
bad = []
for folder, allowed in ALLOWED.items():
    for path in sorted((root / folder).rglob("*")):
        if path.suffix not in (".h", ".cpp", ".def", ".cuh"):
            continue
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if not m or m.group(2) not in OURS or m.group(2) in allowed:
                continue
            if m.group(1) in ALLOWED_FILES.get(folder, set()):
                continue
            bad.append(f"{path.relative_to(root)}:{lineno}: {folder}/ may not include {m.group(2)}/")
for b in bad:
    print(b)
print(f"checked {len(ALLOWED)} folders: {len(bad)} layering violations")
sys.exit(1 if bad else 0)
