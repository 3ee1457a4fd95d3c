"""Proves the official `openai` Python SDK works unchanged against the gateway.

Reads OPENAI_BASE_URL and OPENAI_API_KEY from the environment (as any user script would) and the
model names from SDK_CHECK_* variables (defaults match test/sdk/sdk-compat.test.ts). Prints one JSON
line of results on stdout and exits 0; on the first mismatch prints `MISMATCH: ...` on stderr and exits 1.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any, Callable, Dict, List

import openai
import pydantic
from openai.types.chat import ChatCompletion

CHAT_MODEL = os.environ.get("SDK_CHECK_CHAT_MODEL", "demo-chat")
TOOL_MODEL = os.environ.get("SDK_CHECK_TOOL_MODEL", "gpt-4o-mini")
SLASH_MODEL = os.environ.get("SDK_CHECK_SLASH_MODEL", "deepseek-ai/DeepSeek-V3")
EMBED_MODEL = os.environ.get("SDK_CHECK_EMBED_MODEL", "demo-embedding")
# Optional: a model whose provider stalls every stream after its first chunk, so the gateway ends the
# stream with an error event (an error after the 200).
BROKEN_MODEL = os.environ.get("SDK_CHECK_BROKEN_MODEL", "")
PROMPT = "hello from python"
EXPECTED_REPLY = os.environ.get("SDK_CHECK_EXPECTED_REPLY", f"Demo reply to: {PROMPT}")


class Mismatch(Exception):
    pass


def expect(cond: bool, what: str, got: Any = None) -> None:
    if not cond:
        raise Mismatch(f"{what} (got {got!r})")


def request_id_ok(rid: Any) -> bool:
    return isinstance(rid, str) and len(rid) > 0


client = openai.OpenAI(timeout=30.0)  # base URL and key come from the environment
results: Dict[str, Any] = {"sdk": "openai-python", "version": openai.__version__}


def chat_non_stream() -> Dict[str, Any]:
    r = client.chat.completions.create(model=CHAT_MODEL, messages=[{"role": "user", "content": PROMPT}])
    expect(r.object == "chat.completion", "object", r.object)
    choice = r.choices[0]
    expect(choice.message.role == "assistant", "message.role", choice.message.role)
    expect(choice.message.content == EXPECTED_REPLY, "message.content", choice.message.content)
    expect(choice.finish_reason == "stop", "finish_reason", choice.finish_reason)
    expect(r.usage is not None and r.usage.prompt_tokens > 0 and r.usage.completion_tokens > 0, "usage", r.usage)
    assert r.usage is not None
    expect(r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens, "usage.total_tokens", r.usage)
    expect(request_id_ok(r._request_id), "_request_id on a chat completion", r._request_id)
    cost = (r.usage.model_extra or {}).get("cost")
    expect(isinstance(cost, (int, float)) and cost > 0, "usage.cost (gateway extension kept as an extra field)", cost)
    return {"content": choice.message.content, "finish_reason": choice.finish_reason, "request_id": r._request_id, "cost": cost}


def collect_stream(include_usage: bool) -> Dict[str, Any]:
    kwargs: Dict[str, Any] = {"stream_options": {"include_usage": True}} if include_usage else {}
    stream = client.chat.completions.create(model=CHAT_MODEL, messages=[{"role": "user", "content": PROMPT}], stream=True, **kwargs)
    rid = stream.response.headers.get("x-request-id")
    expect(request_id_ok(rid), "x-request-id on a stream", rid)
    first_role = None
    text = ""
    finish = None
    usage_chunks: List[Any] = []
    chunk_ids = set()
    n = 0
    for chunk in stream:
        n += 1
        expect(chunk.object == "chat.completion.chunk", "chunk.object", chunk.object)
        chunk_ids.add(chunk.id)
        if chunk.usage is not None:
            expect(chunk.choices == [], "usage only on a choices:[] chunk", chunk.model_dump())
            usage_chunks.append(chunk.usage)
            continue
        expect(len(chunk.choices) == 1, "one choice per content chunk", chunk.model_dump())
        c = chunk.choices[0]
        if first_role is None:
            first_role = c.delta.role
            expect(first_role == "assistant", "role:assistant on the first delta", c.delta.model_dump())
        text += c.delta.content or ""
        if c.finish_reason is not None:
            expect(finish is None, "one finish_reason", c.finish_reason)
            finish = c.finish_reason
    expect(len(chunk_ids) == 1, "one chunk id across the stream", chunk_ids)
    expect(text == EXPECTED_REPLY, "streamed text", text)
    expect(finish == "stop", "stream finish_reason", finish)
    if include_usage:
        expect(len(usage_chunks) == 1, "exactly one usage chunk with include_usage", usage_chunks)
        u = usage_chunks[0]
        expect(u.prompt_tokens > 0 and u.completion_tokens > 0 and u.total_tokens == u.prompt_tokens + u.completion_tokens, "stream usage", u)
    else:
        expect(usage_chunks == [], "no usage chunk without include_usage", usage_chunks)
    out: Dict[str, Any] = {"chunks": n, "text": text, "finish_reason": finish, "request_id": rid}
    if include_usage:
        out["usage"] = usage_chunks[0].model_dump(include={"prompt_tokens", "completion_tokens", "total_tokens"})
        out["cost"] = (usage_chunks[0].model_extra or {}).get("cost")
    return out


class GetWeather(pydantic.BaseModel):
    """Current weather for a city."""

    city: str


def stream_helper_tool_call() -> Dict[str, Any]:
    tool = openai.pydantic_function_tool(GetWeather, name="get_weather")
    event_types: List[str] = []
    done_event: Dict[str, Any] = {}
    with client.chat.completions.stream(
        model=TOOL_MODEL,
        messages=[{"role": "user", "content": "What is the weather in Paris?"}],
        tools=[tool],
    ) as stream:
        for event in stream:
            if event.type not in event_types:
                event_types.append(event.type)
            if event.type == "tool_calls.function.arguments.done":
                done_event = {"name": event.name, "arguments": event.arguments, "parsed": event.parsed_arguments}
        final = stream.get_final_completion()
    choice = final.choices[0]
    expect(choice.finish_reason == "tool_calls", "helper finish_reason", choice.finish_reason)
    calls = choice.message.tool_calls or []
    expect(len(calls) == 1, "one tool call", calls)
    call = calls[0]
    # The helper concatenates repeated strings: an id/type/name sent twice would show up doubled here.
    expect(call.type == "function", "tool_call.type", call.type)
    expect(call.id.startswith("call_") and call.id.count("call_") == 1, "tool_call.id (sent once)", call.id)
    expect(call.function.name == "get_weather", "tool_call.function.name (sent once)", call.function.name)
    expect(json.loads(call.function.arguments) == {"city": "Paris"}, "tool_call.function.arguments", call.function.arguments)
    parsed = call.function.parsed_arguments
    expect(isinstance(parsed, GetWeather) and parsed.city == "Paris", "parsed_arguments", parsed)
    expect(done_event.get("name") == "get_weather", "tool_calls.function.arguments.done event", done_event)
    expect("tool_calls.function.arguments.delta" in event_types, "arguments.delta events", event_types)
    # The tool result goes back as a `tool` message; the fake upstream answers `Tool said: <result>`.
    follow = client.chat.completions.create(
        model=TOOL_MODEL,
        messages=[
            {"role": "user", "content": "What is the weather in Paris?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": call.id, "type": "function", "function": {"name": call.function.name, "arguments": call.function.arguments}}],
            },
            {"role": "tool", "tool_call_id": call.id, "content": "sunny"},
        ],
        tools=[tool],
    )
    expect(follow.choices[0].message.content == "Tool said: sunny", "reply to the tool result", follow.choices[0].message.content)
    return {"tool": call.function.name, "arguments": call.function.arguments, "finish_reason": choice.finish_reason, "events": event_types, "after_tool": follow.choices[0].message.content}


def models() -> Dict[str, Any]:
    page = client.models.list()
    ids = [m.id for m in page.data]
    for want in (CHAT_MODEL, EMBED_MODEL, TOOL_MODEL, SLASH_MODEL):
        expect(want in ids, f"models.list contains {want}", ids)
    expect(all(m.object == "model" and isinstance(m.created, int) and m.owned_by for m in page.data), "model objects", page.data)
    m = client.models.retrieve(SLASH_MODEL)  # the SDK sends deepseek-ai%2FDeepSeek-V3
    expect(m.id == SLASH_MODEL and m.object == "model", "models.retrieve with a / id", m)
    expect(request_id_ok(m._request_id), "_request_id on a model", m._request_id)
    try:
        client.models.retrieve("no-such/model")
        raise Mismatch("models.retrieve of an unknown id did not raise")
    except openai.NotFoundError as e:
        expect(e.code == "model_not_found", "unknown model retrieve code", e.code)
    return {"ids": ids, "retrieved": m.id, "owned_by": m.owned_by}


def embeddings() -> Dict[str, Any]:
    raw = client.embeddings.with_raw_response.create(model=EMBED_MODEL, input=["alpha beta", "gamma"])
    wire = raw.http_response.json()
    expect(isinstance(wire["data"][0]["embedding"], str), "default request asks for base64 and gets a string", type(wire["data"][0]["embedding"]).__name__)
    default = raw.parse()  # the SDK decodes base64 into floats
    expect(len(default.data) == 2 and [d.index for d in default.data] == [0, 1], "two embeddings in order", default.data)
    vec_default = default.data[0].embedding
    expect(isinstance(vec_default, list) and len(vec_default) > 0 and all(isinstance(v, float) for v in vec_default), "decoded base64 vector", vec_default[:4])
    expect(default.usage.total_tokens > 0, "embeddings usage", default.usage)
    flt = client.embeddings.create(model=EMBED_MODEL, input=["alpha beta", "gamma"], encoding_format="float")
    vec_float = flt.data[0].embedding
    expect(len(vec_float) == len(vec_default), "float and base64 dimensions agree", (len(vec_float), len(vec_default)))
    expect(all(abs(a - b) < 1e-6 for a, b in zip(vec_float, vec_default)), "float and base64 vectors agree", (vec_float[:3], vec_default[:3]))
    dims = client.embeddings.create(model=EMBED_MODEL, input="alpha", dimensions=16)
    expect(len(dims.data[0].embedding) == 16, "dimensions=16", len(dims.data[0].embedding))
    return {"dims": len(vec_default), "base64_on_wire": True, "float_matches_base64": True, "request_id": flt._request_id}


def errors() -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    try:
        client.chat.completions.create(model="no-such-model-xyz", messages=[{"role": "user", "content": "hi"}])
        raise Mismatch("unknown model did not raise")
    except openai.NotFoundError as e:
        expect(e.status_code == 404 and e.code == "model_not_found", "404 model_not_found", (e.status_code, e.code))
        expect(e.type == "invalid_request_error", "404 type", e.type)
        expect(request_id_ok(e.request_id), "request_id on NotFoundError", e.request_id)
        out["not_found"] = {"status": e.status_code, "code": e.code, "type": e.type, "request_id": e.request_id}
    try:
        client.chat.completions.create(model="no-such-model-xyz", messages=[{"role": "user", "content": "hi"}], stream=True)
        raise Mismatch("unknown model (stream) did not raise")
    except openai.NotFoundError as e:
        expect(e.code == "model_not_found", "404 on a stream request", e.code)
        out["not_found_stream"] = {"status": e.status_code, "code": e.code}
    bad_key = openai.OpenAI(api_key="sk-gw-" + "0" * 40, timeout=30.0)
    try:
        bad_key.models.list()
        raise Mismatch("a wrong key did not raise")
    except openai.AuthenticationError as e:
        expect(e.status_code == 401 and e.code == "invalid_api_key", "401 invalid_api_key", (e.status_code, e.code))
        expect(request_id_ok(e.request_id), "request_id on AuthenticationError", e.request_id)
        out["auth"] = {"status": e.status_code, "code": e.code, "type": e.type}
    try:
        # `messages` is required by create(); the SDK's own low-level post sends a body without it.
        client.post("/chat/completions", body={"model": CHAT_MODEL}, cast_to=ChatCompletion)
        raise Mismatch("a request without messages did not raise")
    except openai.BadRequestError as e:
        expect(e.status_code == 400 and e.param == "messages", "400 param=messages", (e.status_code, e.param))
        expect(e.type == "invalid_request_error" and isinstance(e.code, str), "400 type/code", (e.type, e.code))
        expect(request_id_ok(e.request_id), "request_id on BadRequestError", e.request_id)
        out["bad_request"] = {"status": e.status_code, "param": e.param, "code": e.code, "type": e.type}
    if BROKEN_MODEL:
        stream = client.chat.completions.create(model=BROKEN_MODEL, messages=[{"role": "user", "content": "one two three four five six"}], stream=True)
        got = ""
        chunks = 0
        try:
            for chunk in stream:
                chunks += 1
                if chunk.choices:
                    got += chunk.choices[0].delta.content or ""
            raise Mismatch(f"a stream broken by its provider ended without an error (text {got!r})")
        except openai.APIStatusError as e:
            raise Mismatch(f"an error after the 200 should not be a status error: {e!r}")
        except openai.APIError as e:
            body = e.body if isinstance(e.body, dict) else {}
            expect(isinstance(body.get("message"), str) and body.get("type") == "api_error", "error event body", e.body)
            out["mid_stream"] = {"exception": type(e).__name__, "code": e.code, "type": e.type, "chunks_before": chunks}
    return out


CHECKS: List[tuple[str, Callable[[], Dict[str, Any]]]] = [
    ("chat", chat_non_stream),
    ("stream", lambda: collect_stream(False)),
    ("stream_usage", lambda: collect_stream(True)),
    ("stream_helper_tools", stream_helper_tool_call),
    ("models", models),
    ("embeddings", embeddings),
    ("errors", errors),
]


def main() -> int:
    for name, fn in CHECKS:
        try:
            results[name] = fn()
        except Mismatch as m:
            print(f"MISMATCH in {name}: {m}", file=sys.stderr)
            return 1
        except Exception as e:  # an unexpected SDK exception is a failure too, with its trace
            print(f"FAILED in {name}: {type(e).__name__}: {e}", file=sys.stderr)
            traceback.print_exc()
            return 1
    print(json.dumps(results, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
