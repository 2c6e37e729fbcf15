#!/usr/bin/env python3
"""What a user would write instead: an asyncio NDJSON JSON-RPC server answering every request with
-32601, over stdio (`python-server.py --stdio`) or a Unix socket (`python-server.py --socket PATH`)."""
import asyncio
import json
import os
import sys


def answer(line: bytes) -> bytes:
    try:
        request = json.loads(line)
        reply = {"jsonrpc": "2.0", "id": request.get("id"),
                 "error": {"code": -32601, "message": "Method not found", "data": {"method": request.get("method")}}}
    except ValueError:
        reply = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    return json.dumps(reply, separators=(",", ":")).encode() + b"\n"


async def serve(reader: asyncio.StreamReader, writer) -> None:
    while True:
        line = await reader.readline()
        if not line:
            break
        if line.strip():
            writer.write(answer(line))
            if not reader._buffer:  # flush once the input is drained, like the C server
                await writer.drain()
    writer.close()


async def main() -> None:
    if len(sys.argv) >= 3 and sys.argv[1] == "--socket":
        if os.path.exists(sys.argv[2]):
            os.unlink(sys.argv[2])
        server = await asyncio.start_unix_server(serve, path=sys.argv[2])
        async with server:
            await server.serve_forever()
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=16 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout.buffer)
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    await serve(reader, writer)


if __name__ == "__main__":
    asyncio.run(main())
