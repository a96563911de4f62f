"""`jarvis pruner serve`: the built-in pruner over swe-pruner's HTTP contract, for any client that speaks it.

    GET  /health -> {"status": "healthy", "model_loaded": true, "pruner": "bm25"}
    POST /prune  {"query": str, "code": str, ...} -> {"pruned_code", "score", "kept_frags", "origin_token_cnt",
                                                     "left_token_cnt", "model_input_token_cnt", "error_msg"}

`kept_frags` are the kept lines, 1-based; token counts are whitespace-separated words (there is no model tokenizer).
Fields of swe-pruner's request this pruner has no use for (`threshold`, `always_keep_first_frags`, ...) are accepted
and ignored. A malformed request is HTTP 422 with what is wrong.
"""

from __future__ import annotations

import json
from typing import Any

import anyio.to_thread
from pydantic import BaseModel, ConfigDict, ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from jarvis.pruning.builtin import render, select_lines


class PruneRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    query: str
    code: str


def prune_payload(query: str, code: str) -> dict[str, Any]:
    lines = code.splitlines()
    kept = select_lines(lines, query)
    pruned = render(lines, kept)
    origin, left = len(code.split()), len(pruned.split())
    return {
        "pruned_code": pruned,
        "score": round(len(kept) / len(lines), 4) if lines else 0.0,
        "kept_frags": [i + 1 for i in kept],
        "origin_token_cnt": origin,
        "left_token_cnt": left,
        "model_input_token_cnt": origin + len(query.split()),
        "error_msg": None,
    }


async def health(_request: Request) -> JSONResponse:
    return JSONResponse({"status": "healthy", "model_loaded": True, "pruner": "bm25"})


async def prune(request: Request) -> JSONResponse:
    try:
        body = PruneRequest.model_validate(json.loads(await request.body()))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return JSONResponse({"detail": f"body is not JSON: {exc}"}, status_code=422)
    except ValidationError as exc:
        problems = [f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in exc.errors()]
        return JSONResponse({"detail": problems}, status_code=422)
    payload = await anyio.to_thread.run_sync(prune_payload, body.query, body.code)
    return JSONResponse(payload)


def create_app() -> Starlette:
    return Starlette(routes=[Route("/health", health, methods=["GET"]), Route("/prune", prune, methods=["POST"])])


def serve(host: str, port: int) -> None:
    import uvicorn

    uvicorn.run(create_app(), host=host, port=port, log_level="info")
