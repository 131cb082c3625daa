"""Checks that each folder includes only the folders below it (STYLE.md).

The same arrows as the build's include views (Note [Layering by include
paths] in CMakeLists.txt), checked from the sources so that a violation reads
as file:line. A file belongs to the longest folder of ALLOWED that holds it;
an include is allowed when it lies in one of that folder's allowed paths."""
import pathlib
import re
import sys

KERNEL = {"ir", "codegen/kir", "codegen/GeneratedKernel.h", "include/fusec/backend.h"}
ALLOWED = {
    "ir": {"ir"},
    "frontend": {"ir", "frontend"},
    "passes": {"ir", "passes"},
    "codegen": {"ir", "codegen", "include/fusec/backend.h"},
    "codegen/kir": KERNEL,
    "codegen/templates": KERNEL | {"codegen/templates"},
    "codegen/cuda": KERNEL | {"codegen/cuda"},
    "codegen/llvm": KERNEL | {"codegen/llvm"},
    "runtime": {"ir", "frontend", "codegen", "passes", "runtime", "include"},
    "runtime/reference": {"ir", "runtime/reference"},
    "runtime/gpu": {"ir", "codegen", "runtime/reference", "runtime/gpu", "include"},
}
OURS = {"ir", "frontend", "passes", "codegen", "runtime", "tools", "test", "include"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"(([a-z_-]+)/[^"]*)"')


def folder_of(rel):
    owners = [f for f in ALLOWED if rel == f or rel.startswith(f + "/")]
    return max(owners, key=len)


def allowed(path, paths):
    return any(path == p or path.startswith(p + "/") for p in paths)


root = pathlib.Path(sys.argv[1])
bad = []
for top in ("ir", "frontend", "passes", "codegen", "runtime"):
    for path in sorted((root / top).rglob("*")):
        if path.suffix not in (".h", ".cpp", ".def", ".cuh", ".in"):
            continue
        rel = path.relative_to(root).as_posix()
        folder = folder_of(rel)
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if not m or m.group(2) not in OURS or allowed(m.group(1), ALLOWED[folder]):
                continue
            bad.append(f"{rel}:{lineno}: {folder}/ may not include {m.group(1)}")
for b in bad:
    print(b)
print(f"checked {len(ALLOWED)} folders: {len(bad)} layering violations")
sys.exit(1 if bad else 0)
