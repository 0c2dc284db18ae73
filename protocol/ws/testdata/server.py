"""The WebSocket server of perflab's tests, on Python's websockets (17.4):
listens on 127.0.0.1 at a free port, prints "PORT n", stops after its
seconds (argv[1], default 120).

/echo answers each message {"id": ID, ...} with {"id": ID, "echo": the
message}, after its "delay_ms"; a message {"op": "close"} makes the server
close the connection (1011) without answering; {"op": "noise"} is answered
by an unrelated message first. The answer also says the subprotocol
chosen (of perflab.v1 and chat) and the request's x-user header. /feed subscribes the connection to a
broadcast of {"seq": N} to every subscriber, "rate" a second (the query's
rate, default 10). GET /counts is what the server counted, as JSON:
connections opened, messages received and sent."""
import asyncio, collections, json, sys, time
from http import HTTPStatus
from urllib.parse import urlparse, parse_qs

from websockets.asyncio.server import serve, broadcast

counts = collections.Counter()
subscribers = set()


async def echo(ws):
    async for raw in ws:
        counts["received"] += 1
        try:
            msg = json.loads(raw)
        except ValueError:
            msg = {"text": raw}
        if msg.get("op") == "close":
            await ws.close(1011, "bye")
            return
        if msg.get("op") == "noise":
            await ws.send(json.dumps({"id": "someone else"}))
            counts["sent"] += 1
        if msg.get("delay_ms"):
            await asyncio.sleep(msg["delay_ms"] / 1000)
        await ws.send(json.dumps({"id": msg.get("id"), "echo": msg, "subprotocol": ws.subprotocol, "user": ws.request.headers.get("x-user")}))
        counts["sent"] += 1


async def feed(ws):
    subscribers.add(ws)
    try:
        async for raw in ws:
            counts["received"] += 1
    finally:
        subscribers.discard(ws)


async def broadcaster(rate):
    seq = 0
    while True:
        await asyncio.sleep(1 / rate)
        if subscribers:
            seq += 1
            broadcast(subscribers, json.dumps({"seq": seq}))
            counts["sent"] += len(subscribers)


async def handler(ws):
    counts["connections"] += 1
    path = urlparse(ws.request.path).path
    if path == "/echo":
        await echo(ws)
    elif path == "/feed":
        await feed(ws)


def select_subprotocol(connection, subprotocols):
    for p in subprotocols:
        if p in ("perflab.v1", "chat"):
            return p
    return None  # none offered, or none known: no subprotocol


def process_request(connection, request):
    if urlparse(request.path).path == "/counts":
        return connection.respond(HTTPStatus.OK, json.dumps(counts) + "\n")
    return None


async def main():
    rate = 10
    async with serve(handler, "127.0.0.1", 0, process_request=process_request, select_subprotocol=select_subprotocol) as server:
        port = server.sockets[0].getsockname()[1]
        print("PORT", port, flush=True)
        asyncio.get_running_loop().create_task(broadcaster(float(sys.argv[2]) if len(sys.argv) > 2 else rate))
        await asyncio.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 120)


asyncio.run(main())
