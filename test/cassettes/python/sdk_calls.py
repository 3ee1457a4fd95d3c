"""The official `openai` Python SDK against a gateway with a cassette (test/cassettes/python-sdk.test.ts).

Reads OPENAI_BASE_URL and OPENAI_API_KEY like any app. With no argument it makes a fixed set of calls
(chat, a chat stream with usage, legacy completions and their stream, embeddings) and prints one JSON
object with every answer as the SDK parsed it, so a recording run and a replay run can be compared.
With `miss` it makes one call that was never recorded, with the SDK's default retries, and prints what
the SDK raised.
"""

from __future__ import annotations

import json
import sys

import openai

client = openai.OpenAI(timeout=20)
CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hello from python"}], "max_tokens": 16}


def calls() -> dict:
    out: dict = {}
    raw = client.chat.completions.with_raw_response.create(**CHAT, user="py-run")
    out["chat"] = raw.parse().model_dump()
    out["chat_headers"] = {"replayed": raw.headers.get("x-gateway-replayed"), "cost": raw.headers.get("x-gateway-cost-usd")}
    out["chat_stream"] = [c.model_dump() for c in client.chat.completions.create(**CHAT, stream=True, stream_options={"include_usage": True})]
    out["completion"] = client.completions.create(model="gpt-3.5-turbo-instruct", prompt="python prompt", max_tokens=5).model_dump()
    out["completion_stream"] = [c.model_dump() for c in client.completions.create(model="gpt-3.5-turbo-instruct", prompt="python stream", max_tokens=5, stream=True)]
    out["embedding"] = client.embeddings.create(model="text-embedding-3-small", input=["py"]).model_dump()
    return out


def miss() -> dict:
    try:
        client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "never recorded in python"}])
    except openai.APIStatusError as e:
        body = e.body if isinstance(e.body, dict) else {}
        return {"class": type(e).__name__, "status": e.status_code, "code": body.get("code"), "message": e.message, "should_retry": e.response.headers.get("x-should-retry")}
    return {"class": None}


if __name__ == "__main__":
    result = miss() if len(sys.argv) > 1 and sys.argv[1] == "miss" else calls()
    print(json.dumps(result, sort_keys=True))
