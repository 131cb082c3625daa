"""Writes and reads .npy files for the `fusec run` tests, without numpy.

  npy.py write OUT.npy DTYPE SHAPE VALUES   write a format-1.0 file
  npy.py read IN.npy                        print "DTYPE SHAPE: v0 v1 ..."
  npy.py raw OUT.npy HEADER [DATA_BYTES]    write a file with a literal header
                                            (for malformed-file tests)

DTYPE is a fusec dtype (f32 f16 f64 i32 i64 i8 bool; bf16 is stored as
'<u2' raw bits and VALUES are then the bit patterns), SHAPE is comma-separated
dims ("" for a scalar), VALUES comma-separated Python expressions (nan, inf
and the math module may be used).
"""
import math
import struct
import sys

FORMATS = {  # fusec dtype: (descr, struct code)
    "f32": ("<f4", "f"), "f16": ("<f2", "e"), "f64": ("<f8", "d"),
    "i32": ("<i4", "i"), "i64": ("<i8", "q"), "i8": ("|i1", "b"),
    "bool": ("|b1", "?"), "bf16": ("<u2", "H"),
}


def header_bytes(header):
    # Pad so that the data starts at a multiple of 64, as numpy does.
    total = (10 + len(header) + 1 + 63) // 64 * 64
    header = header + " " * (total - 10 - len(header) - 1) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode()


def write(path, dtype, shape_text, values_text):
    descr, code = FORMATS[dtype]
    shape = tuple(int(d) for d in shape_text.split(",") if d)
    count = 1
    for d in shape:
        count *= d
    names = {"nan": float("nan"), "inf": float("inf"), "math": math}
    values = [eval(v, names)
              for v in values_text.split(",") if v.strip()]
    if len(values) != count:
        sys.exit(f"npy.py: shape {shape} needs {count} values, got {len(values)}")
    if code in "bqiH":
        values = [int(v) for v in values]
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape!r}, }}"
    with open(path, "wb") as f:
        f.write(header_bytes(header) + struct.pack("<" + code * count, *values))


def read(path):
    data = open(path, "rb").read()
    assert data[:6] == b"\x93NUMPY", "bad magic"
    (length,) = struct.unpack("<H", data[8:10])
    header = eval(data[10:10 + length].decode())
    dtype, code = next((k, c) for k, (d, c) in FORMATS.items() if d == header["descr"])
    count = 1
    for d in header["shape"]:
        count *= d
    values = struct.unpack("<" + code * count, data[10 + length:])
    shape = ",".join(str(d) for d in header["shape"])
    print(f"{dtype} [{shape}]: " + " ".join(repr(v) for v in values))


def raw(path, header, data_bytes="0"):
    with open(path, "wb") as f:
        f.write(header_bytes(header) + b"\0" * int(data_bytes))


if __name__ == "__main__":
    {"write": write, "read": read, "raw": raw}[sys.argv[1]](*sys.argv[2:])
