"""Checks that the kernel builders emit instructions in an order C++ fixes.

C++ leaves the evaluation order of a call's arguments unspecified, so a call
with two arguments that each build kir instructions (constants included: a
new one is emitted where it is made) emits them in an order that depends on
the compiler, and a kernel would come out differently from GCC and Clang
(docs/codegen.md, "Emit each instruction in its own statement"). This finds,
in codegen/templates, every call with two or more arguments that call a
function returning a kir value (kir::Builder's, or a template's own; const
accessors such as `in(i)` only read a parameter). Braced
lists are sequenced left to right and lambdas run later: neither counts."""
import pathlib
import re
import sys

RETURNS_VALUE = re.compile(r"\bValueId\s+(?:\w+::)?(\w+)\s*\(([^()]*)\)\s*(const)?")
CALL = re.compile(r"\b(\w+)\s*\(")


def value_functions(root):
    names = set()
    for path in [root / "codegen/kir/Kir.h", *sorted((root / "codegen/templates").rglob("*"))]:
        if path.suffix in (".h", ".cpp"):
            # a const member function reads a value the builder already made
            names |= {m[0] for m in RETURNS_VALUE.findall(path.read_text()) if not m[2]}
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


def builds(arg, names):
    arg = arg.strip()
    if arg.startswith("{") or arg.startswith("[&") or arg.startswith("[="):
        return False
    return any(m.group(1) in names for m in CALL.finditer(arg))


def main():
    root = pathlib.Path(sys.argv[1])
    names = value_functions(root)
    found = 0
    files = sorted((root / "codegen/templates").rglob("*.cpp"))
    for path in files:
        text = strip(path.read_text())
        for m in CALL.finditer(text):
            if m.group(1) in ("if", "for", "while", "switch", "return", "sizeof"):
                continue
            args = arguments(text, m.end() - 1)
            if sum(builds(a, names) for a in args) >= 2:
                line = text.count("\n", 0, m.start()) + 1
                print(f"{path.relative_to(root)}:{line}: '{m.group(1)}' builds two of its arguments")
                found += 1
    print(f"checked {len(files)} files: {found} calls whose arguments build in an unspecified order")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
