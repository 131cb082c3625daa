"""Checks that the kernel builders emit instructions in an order C++ fixes.

C++ leaves the evaluation order of a call's arguments unspecified, so a call
with two arguments that each emit instructions emits them in an order that
depends on the compiler, and a kernel would come out differently from GCC and
Clang (docs/codegen.md, "Emit each instruction in its own statement"). This
finds every call with two or more arguments that emit:
- in codegen/templates, calls of a function returning a kir value
  (kir::Builder's, or a template's own; a const accessor such as `in(i)` only
  reads one, and a new constant is emitted where it is made);
- in codegen/llvm, IRBuilder Create calls and functions of ours that emit
  LLVM instructions (they take an IRBuilder, or are Renderer members; LLVM
  constants are uniqued, not emitted).
Braced lists are sequenced left to right and lambdas run later: neither
counts."""
import pathlib
import re
import sys

RETURNS_VALUE = re.compile(r"\bValueId\s+(?:\w+::)?(\w+)\s*\(([^()]*)\)\s*(const)?")
RETURNS_LLVM = re.compile(r"\bllvm::\w+\s*\*\s*(Renderer::)?(\w+)\s*\(([^()]*)\)\s*(const)?")
CALL = re.compile(r"\b(\w+)\s*\(")


def sources(root, folder):
    return [p for p in sorted((root / folder).rglob("*")) if p.suffix in (".h", ".cpp")]


def kir_builders(root):
    names = set()
    for path in [root / "codegen/kir/Kir.h", *sources(root, "codegen/templates")]:
        names |= {m[0] for m in RETURNS_VALUE.findall(path.read_text()) if not m[2]}
    return names


def llvm_builders(root):
    names = set()
    for path in sources(root, "codegen/llvm"):
        text = path.read_text()
        for m in RETURNS_LLVM.finditer(text):
            member = m.group(1) or text[: m.start()].endswith("\n  ")
            if not m.group(4) and (member or "IRBuilder" in m.group(3)):
                names.add(m.group(2))
    return names


def strip(text):
    """Comments and string literals blanked, lengths kept (offsets stay lines)."""
    pattern = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\])*"', re.S)
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def arguments(text, open_paren):
    """The top-level arguments of the call whose '(' is at open_paren."""
    depth, start, args = 0, open_paren + 1, []
    for i in range(open_paren, len(text)):
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append(text[start:i])
                return args
        elif c == "," and depth == 1:
            args.append(text[start:i])
            start = i + 1
    return args


def emits(arg, names, creates):
    arg = arg.strip()
    if arg.startswith(("{", "[&", "[=")):
        return False
    return any(m.group(1) in names or (creates and m.group(1).startswith("Create"))
               for m in CALL.finditer(arg))


def main():
    root = pathlib.Path(sys.argv[1])
    folders = [("codegen/templates", kir_builders(root), False),
               ("codegen/llvm", llvm_builders(root), True)]
    found, files = 0, 0
    for folder, names, creates in folders:
        for path in sources(root, folder):
            if path.suffix != ".cpp":
                continue
            files += 1
            text = strip(path.read_text())
            for m in CALL.finditer(text):
                if m.group(1) in ("if", "for", "while", "switch", "return", "sizeof"):
                    continue
                args = arguments(text, m.end() - 1)
                if sum(emits(a, names, creates) for a in args) >= 2:
                    line = text.count("\n", 0, m.start()) + 1
                    print(f"{path.relative_to(root)}:{line}: '{m.group(1)}' emits two of its arguments")
                    found += 1
    print(f"checked {files} files: {found} calls whose arguments emit in an unspecified order")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
