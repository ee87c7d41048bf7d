"""What Codex 0.169 tells the model of an MCP tool call (issue 30), for the
suites that check parley's function_call_output against an item's result:
a header "Wall time: S seconds\\nOutput:" (S with 4 decimals), then the
result's structuredContent as JSON text, or else the content as Responses
content parts after a header part. Wall times differ by nature: normalised()
puts WALL_TIME in their place."""
import json
import re

WALL_TIME = "Wall time: S seconds\nOutput:"
_HEADER = re.compile(r"Wall time: \d+\.\d{4} seconds\nOutput:")


def has_header(output):
    """Whether an output starts with a well-formed wall-time header."""
    first = output if isinstance(output, str) else \
        (output[0].get("text", "") if output and isinstance(output[0], dict) else "")
    return _HEADER.match(first) is not None


def normalised(output):
    """An output with its wall time replaced by WALL_TIME."""
    if isinstance(output, str):
        return _HEADER.sub(WALL_TIME, output, count=1)
    out = [dict(p) for p in output]
    if out and out[0].get("type") == "input_text":
        out[0]["text"] = _HEADER.sub(WALL_TIME, out[0]["text"], count=1)
    return out


def _part(block):
    if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
        return {"type": "input_text", "text": block["text"]}
    if isinstance(block, dict) and block.get("type") == "image" and isinstance(block.get("data"), str):
        data = block["data"]
        if not data.startswith("data:"):
            data = "data:%s;base64,%s" % (block.get("mimeType") or "application/octet-stream", data)
        detail = ((block.get("_meta") or {}).get("codex/imageDetail"))
        return {"type": "input_image", "image_url": data,
                "detail": detail if detail in ("auto", "low", "high", "original") else "high"}
    return {"type": "input_text", "text": json.dumps(block, separators=(",", ":"), ensure_ascii=False)}


def expected(result):
    """What the model is sent for an item's result (McpToolCallResult),
    normalised."""
    structured = (result or {}).get("structuredContent")
    if structured is not None:
        return WALL_TIME + "\n" + json.dumps(structured, separators=(",", ":"), ensure_ascii=False)
    return [{"type": "input_text", "text": WALL_TIME}] + [_part(b) for b in (result or {}).get("content") or []]


def text_of(output):
    """An output's text: the string, or its text parts joined."""
    if isinstance(output, str):
        return output
    return "\n".join(p.get("text", "") for p in output or [] if p.get("type") == "input_text")
