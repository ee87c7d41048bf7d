#!/usr/bin/env python3
"""A stdio MCP server whose tools answer big: for the suites that check what
the model is told of a long output or a big image (Codex 0.169 truncates the
one and resizes the other before the model sees them).

  long_text      {bytes, char?, parts?}  `parts` text blocks (1 unless told),
                 each "HEAD-<i>|" + `char` repeated to about `bytes` bytes +
                 "|TAIL-<i>" (char: any string, e.g. a multi-byte one; "offsets": each 8 bytes
                 name their offset)
  long_structured {bytes}  the same text as structuredContent {"text": ...}
  image          {width, height, format?, detail?}  a PNG (or a GIF) of that
                 size: the left half red, the right half blue
  bomb           a PNG whose header says 100000 x 100000 and whose data is a
                 few bytes (a decoder that trusts it allocates 40 GB)
  junk_image     an image block whose bytes are no image at all

The images are made here, with zlib alone (no imaging library needed).

Usage: mcp_budget_server.py
"""
import base64
import functools
import json
import struct
import sys
import zlib
from mcp_stdio_server import send, send_initialized

TOOLS = [{"name": n, "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}
         for n in ("long_text", "long_structured", "image", "bomb", "junk_image")]


def long_text(i, size, char):
    head, tail = "HEAD-%d|" % i, "|TAIL-%d" % i
    room = max(0, size - len(head) - len(tail))
    if char == "offsets":  # "0000008," ...: each 8 bytes say where they start
        body = "".join("%07d," % (len(head) + k) for k in range(0, room, 8))[:room]
    else:
        body = char * (room // len(char.encode()))
    return head + body + tail


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


@functools.lru_cache(maxsize=8)
def png(width, height):
    """An RGB PNG: the left half red, the right half blue."""
    left = width // 2
    row = b"\x00" + b"\xff\x00\x00" * left + b"\x00\x00\xff" * (width - left)
    compressor = zlib.compressobj(6)
    idat = b"".join(compressor.compress(row) for _ in range(height)) + compressor.flush()
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", idat) + chunk(b"IEND", b""))


def bomb():
    idat = zlib.compress(b"\x00" * 64)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 100000, 100000, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", idat) + chunk(b"IEND", b""))


def gif(width, height):
    """A GIF of one colour (red), its pixels one LZW code stream of clears."""
    header = b"GIF89a" + struct.pack("<HHBBB", width, height, 0x80, 0, 0) + b"\xff\x00\x00\x00\x00\x00"
    image = b"\x2c" + struct.pack("<HHHHB", 0, 0, width, height, 0)
    # Minimum code size 2: codes 0..3 colours, 4 clear, 5 end. Each pixel
    # is sent as clear + 0 (3-bit codes), which keeps the coder trivial.
    bits, nbits, out = 0, 0, bytearray()
    for code in [4, 0] * (width * height) + [5]:
        bits |= code << nbits
        nbits += 3
        while nbits >= 8:
            out.append(bits & 0xff)
            bits >>= 8
            nbits -= 8
    if nbits:
        out.append(bits & 0xff)
    blocks = b"".join(bytes([len(out[i:i + 255])]) + bytes(out[i:i + 255]) for i in range(0, len(out), 255))
    return header + image + b"\x02" + blocks + b"\x00" + b"\x3b"


def image_block(data, mime, detail=None):
    block = {"type": "image", "data": base64.b64encode(data).decode(), "mimeType": mime}
    if detail:
        block["_meta"] = {"codex/imageDetail": detail}
    return block


def result_of(name, args):
    if name == "long_text":
        parts = int(args.get("parts", 1))
        return {"content": [{"type": "text", "text": long_text(i, int(args["bytes"]), args.get("char", "x"))}
                            for i in range(parts)]}
    if name == "long_structured":
        text = long_text(0, int(args["bytes"]), args.get("char", "x"))
        return {"content": [{"type": "text", "text": "see structuredContent"}],
                "structuredContent": {"text": text}}
    if name == "image":
        w, h = int(args["width"]), int(args["height"])
        if args.get("format") == "gif":
            return {"content": [image_block(gif(w, h), "image/gif", args.get("detail"))]}
        return {"content": [{"type": "text", "text": "an image %dx%d" % (w, h)},
                            image_block(png(w, h), "image/png", args.get("detail"))]}
    if name == "bomb":
        return {"content": [image_block(bomb(), "image/png")]}
    if name == "junk_image":
        return {"content": [image_block(b"\x89PNG\r\n\x1a\nnot really a png at all", "image/png")]}
    return {"content": [{"type": "text", "text": "no such tool"}], "isError": True}


def main():
    for line in sys.stdin:
        m = json.loads(line)
        if "id" not in m or "method" not in m:
            continue
        i, method, params = m["id"], m["method"], m.get("params") or {}
        if method == "initialize":
            send_initialized(i, params, "budget")
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": i, "result": {"tools": TOOLS}})
        elif method == "tools/call":
            send({"jsonrpc": "2.0", "id": i,
                  "result": result_of(params.get("name"), params.get("arguments") or {})})
        else:
            send({"jsonrpc": "2.0", "id": i, "error": {"code": -32601, "message": "no"}})


if __name__ == "__main__":
    main()
