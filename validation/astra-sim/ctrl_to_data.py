"""Rewrites Chakra execution traces in place so that ASTRA-sim's 2024 feeder sees every
dependency: that feeder (astra-sim/chakra 214f2c55, src/feeder/et_feeder.cpp) resolves
`data_deps` only, while `clustersim run --export-chakra` writes a stream's order as `ctrl_deps`
(docs/chakra.md). Each Node's field 4 (ctrl_deps) becomes field 5 (data_deps) at the protobuf
wire level (a repeated field may come in several runs), so no protobuf module is needed. The
first record of a file (GlobalMetadata) is copied as it is.

Usage: python3 validation/astra-sim/ctrl_to_data.py DIR/step.*.et
"""
import pathlib
import sys

CTRL_DEPS = 4
DATA_DEPS = 5


def read_varint(buf, i):
    shift = value = 0
    while True:
        byte = buf[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, i


def varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def skip_value(msg, i, wire):
    if wire == 0:
        return read_varint(msg, i)[1]
    if wire == 1:
        return i + 8
    if wire == 5:
        return i + 4
    if wire == 2:
        length, i = read_varint(msg, i)
        return i + length
    raise SystemExit(f"unsupported protobuf wire type {wire}")


def rewrite_node(msg):
    out = bytearray()
    i = 0
    while i < len(msg):
        tag, value_start = read_varint(msg, i)
        field, wire = tag >> 3, tag & 7
        end = skip_value(msg, value_start, wire)
        if field == CTRL_DEPS:
            out += varint((DATA_DEPS << 3) | wire) + msg[value_start:end]
        else:
            out += msg[i:end]
        i = end
    return bytes(out)


def rewrite_file(path):
    buf = path.read_bytes()
    out = bytearray()
    i = 0
    first = True
    while i < len(buf):
        length, start = read_varint(buf, i)
        record = buf[start:start + length]
        if not first:
            record = rewrite_node(record)
        first = False
        out += varint(len(record)) + record
        i = start + length
    path.write_bytes(bytes(out))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    for name in sys.argv[1:]:
        rewrite_file(pathlib.Path(name))
