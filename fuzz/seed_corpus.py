#!/usr/bin/env python3
"""Writes the seed corpora (fuzz/corpus/<target>/seed-*) from the workspace's test fixtures.

Run from the repository root: python3 fuzz/seed_corpus.py. Seeds are small and committed;
the fuzzers' own finds are merged in with `cargo fuzz cmin` (see the README).
"""
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"
FIXTURES = ROOT / "live-code-editor" / "tests" / "fixtures"
GOLDEN = ROOT / "tool-protocol" / "tests" / "golden"


def write(target, name, data):
    directory = CORPUS / target
    directory.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    elif not isinstance(data, bytes):
        data = json.dumps(data, ensure_ascii=False).encode()
    (directory / f"seed-{name}").write_bytes(data)


def fixture_sites():
    """Each fixture folder (and the studio's seed site) as (name, [(path, bytes)])."""
    roots = [p for p in sorted(FIXTURES.iterdir()) if p.is_dir()]
    roots.append(ROOT / "examples" / "seed")
    for root in roots:
        files = sorted(p for p in root.rglob("*") if p.is_file())
        yield root.name, [(str(p.relative_to(root)), p.read_bytes()) for p in files]


def golden_tools():
    tools = json.loads((GOLDEN / "mcp.json").read_text())
    return tools[:3]


def protocol_seeds():
    tools = golden_tools()
    write("tools_list", "golden-page", {"tools": tools, "nextCursor": "page-2"})
    write("tools_list", "empty-page", {"tools": []})
    write("tools_list", "request", {"method": "tools/list"})
    write("tools_list", "request-cursor", {"method": "tools/list", "params": {"cursor": "c1"}})
    write("tools_list", "annotated", {"tools": [{"name": "t", "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object"}, "title": "T", "description": "d",
        "annotations": {"title": "T", "readOnlyHint": True, "destructiveHint": False}}]})
    arguments = {"path": "index.html", "source": "<p>hi</p>", "expectedRevision": 3}
    write("tools_call", "request", {"method": "tools/call", "id": "call-1",
        "params": {"name": tools[0]["name"], "arguments": arguments}})
    write("tools_call", "request-number-id", {"method": "tools/call", "id": 7, "params": {"name": "math.add",
        "arguments": {"a": 1, "b": 2}}})
    write("tools_call", "result-text", {"toolCallId": "call-1", "content": [{"type": "text", "text": "ok"}]})
    write("tools_call", "result-json", {"content": [{"type": "json", "json": {"a": [1, 2.5, None]}}],
        "structuredContent": {"a": 1}})
    write("tools_call", "result-error", {"toolCallId": 3, "isError": True, "content": [{"type": "text", "text": "no"}],
        "error": {"code": "TOOL_EXECUTION_FAILED", "message": "boom", "retryable": False, "details": {"n": 1}}})
    write("approval_snapshot", "snapshot", {"id": "approval-1", "method": "tools/call", "toolCallId": "call-1",
        "sessionId": "s1", "name": "workspace.writeFile", "description": "Write a file", "source": "model",
        "mode": "agent", "argumentKeys": ["path", "source"], "safeArgumentPreview": "path: index.html",
        "createdAt": 1700000000000})
    write("approval_snapshot", "minimal", {"id": "a", "method": "tools/call", "name": "t", "description": "",
        "source": "mcp", "argumentKeys": [], "createdAt": 0})
    write("approval_snapshot", "request", {"method": "tools/call", "id": "c", "params": {"name": "t",
        "arguments": {"path": "a.js", "n": 1, "ok": True, "nested": {"x": 1}}}})
    base = {"schemaVersion": "context-action-tool-execution-provenance.v1", "phase": "started",
        "ownerId": "studio:42", "state": "pending", "usedOutputBytes": 0, "elapsedMs": 0}
    write("provenance", "started", base)
    write("provenance", "finished", {**base, "phase": "started", "state": "completed", "timeoutMs": 20000,
        "maxOutputBytes": 65536, "usedOutputBytes": 120, "elapsedMs": 15})


def path_seeds():
    names = sorted({path for _, files in fixture_sites() for path, _ in files})
    for index, name in enumerate(names):
        write("workspace_path", f"fixture-{index}", name)
    for index, name in enumerate(["src\\./main.js", "a/../b", "/etc/passwd", "C:/x", " ./a/ ", "a\t/",
            "\\\\server\\share", "evil\u202esj.txt", "./c:/x", "a//b/./c"]):
        write("workspace_path", f"edge-{index}", name)


def import_script(files):
    """One offer step per fixture file: step byte 1 (offer), size class 1 (a small file)."""
    steps = [b"\x00\x00" + b""]  # scan the root once
    for path, _ in files:
        steps.append(b"\x01\x01" + path.encode())
    return b"\n".join(steps)


def site_input(files):
    """Option byte 0, then the entry, then NUL-separated `path\\ncontent` files."""
    entry = next((data for path, data in files if path == "index.html"), b"")
    rest = [path.encode() + b"\n" + data for path, data in files if path != "index.html"]
    return b"\x00" + b"\x00".join([entry] + rest)


def site_seeds():
    for name, files in fixture_sites():
        write("folder_import", name, import_script(files))
        write("preview_compile", name, site_input(files))
    write("folder_import", "limits", b"\n".join([b"\x00\xff.", b"\x01\x04big.js", b"\x01\x06big.png",
        b"\x01\x03a.js", b"\x01\x01a.js/b.js", b"\x03\x01bin.txt", b"\x01\x01tool.exe", b"\x01\x09c.css"]))


def decoder_seeds():
    call = lambda id, name="math.add": {"id": id, "type": "function",
        "function": {"name": name, "arguments": "{\"a\":1,\"b\":2}"}}
    message = lambda calls: {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": calls}}]}
    write("openrouter_decode", "tool-calls", b"\x00" + json.dumps(message([call("c1"), call("c2")])).encode())
    write("openrouter_decode", "duplicate-ids", b"\x00" + json.dumps(message([call("c1"), call(" c1 ")])).encode())
    write("openrouter_decode", "text", b"\x00" + json.dumps({"choices": [{"message": {"role": "assistant",
        "content": "Done."}}]}).encode())
    write("openrouter_decode", "in-body-error", b"\x00" + json.dumps({"error": {"code": 429,
        "message": "Rate limited"}}).encode())
    write("openrouter_decode", "status-503", b"\x0f" + json.dumps({"error": {"message": "Upstream overloaded"}}).encode())
    write("openrouter_decode", "html-500", b"\x0d<html><body>Bad   gateway</body></html>")
    write("openrouter_decode", "truncated", b"\x10{\"choices\":[{\"message\":{\"role\":\"assistant\",\"tool_calls\":[")


if __name__ == "__main__":
    protocol_seeds()
    path_seeds()
    site_seeds()
    decoder_seeds()
