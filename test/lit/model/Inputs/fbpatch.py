"""Patches fields of a fusec model file in place, for loader error tests.

    fbpatch.py IN OUT PATH=VALUE...

PATH walks the schema (frontend/schema/model.fbs) from the root table:
`graphs.0.nodes.1.attrs.0.value_type`. VALUE is an integer for a scalar
field or element, `str:TEXT` to overwrite a string's bytes (same length), or
`@PATH` to point an offset at the object another path reaches (sharing).
The file keeps its size, so its recorded file_size stays right; its
checksum, if it has one, no longer matches, so patch a file written before
checksums (Inputs/before-checksums/) to reach the loader's checks behind it.
"""
import struct
import sys

# Field order per table, as declared in model.fbs (a union takes two slots).
SCHEMA = {
    "Model": [("schema_version", "I"), ("file_size", "Q"), ("producer", "string"),
              ("graphs", "[Graph]"), ("constants", "[Constant]"), ("external_data_size", "Q"),
              ("checksum", "Checksum"), ("external_data_checksum", "Checksum")],
    "Graph": [("name", "string"), ("inputs", "[Tensor]"), ("nodes", "[Node]"),
              ("outputs", "[string]")],
    "Node": [("op", "string"), ("inputs", "[string]"), ("outputs", "[Tensor]"),
             ("attrs", "[Attr]")],
    "Attr": [("name", "string"), ("value_type", "B"), ("value", "table")],
    "Tensor": [("name", "string"), ("dtype", "B"), ("shape", "[Dim]"), ("layout", "B")],
    "Dim": [("size", "q"), ("symbol", "string")],
    "Constant": [("dtype", "B"), ("shape", "[q]"), ("data", "[B]"), ("external", "ExternalData"),
                 ("splat", "B")],
    "ExternalData": None,  # struct {offset: ulong; length: ulong}
    "Checksum": None,  # struct {blake3: ulong}
    # Union members: a path names the member after the union field,
    # `attrs.0.value.DenseAttr.constant`.
    "IntAttr": [("value", "q")],
    "FloatAttr": [("value", "d")],
    "StringAttr": [("value", "string")],
    "BoolAttr": [("value", "B")],
    "IntsAttr": [("values", "[q]")],
    "DTypeAttr": [("value", "B")],
    "ShapeAttr": [("dims", "[Dim]")],
    "DenseAttr": [("constant", "I")],
}
SCALARS = "BIQqd"
# Struct fields: the offset of each member, all of them ulong.
STRUCTS = {"ExternalData": {"offset": 0, "length": 8}, "Checksum": {"blake3": 0}}


def u32(buf, pos):
    return struct.unpack_from("<I", buf, pos)[0]


def deref(buf, loc):
    return loc + u32(buf, loc)


def field(buf, table, typename, name):
    """(location, type) of a table field; the field must be present."""
    names = [f for f, _ in SCHEMA[typename]]
    index = names.index(name)
    vtable = table - struct.unpack_from("<i", buf, table)[0]
    if 4 + 2 * index >= struct.unpack_from("<H", buf, vtable)[0]:
        sys.exit(f"fbpatch: field {name} is absent")
    offset = struct.unpack_from("<H", buf, vtable + 4 + 2 * index)[0]
    if offset == 0:
        sys.exit(f"fbpatch: field {name} is absent")
    return table + offset, SCHEMA[typename][index][1]


def locate(buf, path):
    """(location, type) of the slot that PATH names."""
    loc, kind = 0, "Model"  # the root offset
    obj = deref(buf, 0)
    for step in path.split("."):
        if kind == "table":
            kind = step
            continue
        if kind in STRUCTS:
            loc, kind = obj + STRUCTS[kind][step], "Q"
        elif kind.startswith("["):
            elem = kind[1:-1]
            size = struct.calcsize("<" + elem) if elem in SCALARS else 4
            loc, kind = obj + 4 + size * int(step), elem
        else:
            loc, kind = field(buf, obj, kind, step)
        if kind not in SCALARS and kind not in STRUCTS:
            obj = deref(buf, loc)
        else:
            obj = loc
    return loc, kind


def main():
    src, dst, *edits = sys.argv[1:]
    buf = bytearray(open(src, "rb").read())
    for edit in edits:
        path, value = edit.split("=", 1)
        loc, kind = locate(buf, path)
        if value.startswith("@"):
            target, _ = locate(buf, value[1:])
            struct.pack_into("<I", buf, loc, deref(buf, target) - loc)
        elif value.startswith("str:"):
            text = value[4:].encode()
            start = deref(buf, loc)
            if u32(buf, start) != len(text):
                sys.exit(f"fbpatch: {path} is not {len(text)} bytes long")
            buf[start + 4:start + 4 + len(text)] = text
        else:
            struct.pack_into("<" + kind, buf, loc, int(value))
    open(dst, "wb").write(buf)


main()
