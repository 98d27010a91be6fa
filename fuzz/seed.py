#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into fuzz/corpus/ from fixtures/.

A decoder target's input is one byte naming a file of its fixture root (in the order the
conformance kit walks it: sorted by path components) followed by that file's new bytes, so each
fixture file becomes the seed that replaces it by itself.
"""
import json
import pathlib

FUZZ = pathlib.Path(__file__).resolve().parent
FIXTURES = FUZZ.parent / "fixtures"
ROOTS = {
    "decode_claude": FIXTURES / "claude" / "projects",
    "decode_codex": FIXTURES / "codex" / "sessions",
    "decode_pi": FIXTURES / "pi" / "sessions",
    "decode_omp": FIXTURES / "omp" / "sessions",
    "decode_gemini": FIXTURES / "gemini" / "home",
    "decode_copilot": FIXTURES / "copilot" / "home",
}


def files(root):
    found = [p for p in root.rglob("*") if p.is_file() and not p.is_symlink()]
    return sorted(found, key=lambda p: p.relative_to(root).parts)


def write(target, name, data):
    out = FUZZ / "corpus" / target
    out.mkdir(parents=True, exist_ok=True)
    (out / name).write_bytes(data)


lines = []
for target, root in ROOTS.items():
    for index, path in enumerate(files(root)):
        data = path.read_bytes()
        write(target, f"fixture-{index:03}", bytes([index % 256]) + data)
        lines.extend(l for l in data.split(b"\n") if l.strip())

# The scan and the filter start from the fixtures' lines; a query is a word of the line.
for i, line in enumerate(lines):
    write("json_scan", f"line-{i:05}", line)
    try:
        value = json.loads(line)
    except ValueError:
        continue
    words = [w for w in json.dumps(value, ensure_ascii=False).split() if w.isalpha()]
    query = (words[len(words) // 2] if words else "deploy").encode()
    write("raw_filter", f"line-{i:05}", query + b"\n" + line)

for i, text in enumerate([
    "*", "pi:*", "claude:4f2*", "*:abc*", "codex:019c", "dsh:x", "4f2a",
    "2026-01-22T17:51:04.982Z", "2026-01-22T17:51:04+01:00", "2026-02-29", "2024-02-29",
    "7d", "3h", "90s", "30m", "2w", "1999-12-31T23:59:60Z",
]):
    write("parsers", f"seed-{i:02}", text.encode())
