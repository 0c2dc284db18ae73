"""The gRPC server of perflab's tests, on Python's grpcio (1.85.1), with
server reflection (v1alpha, all grpcio-reflection serves): it compiles
shop.proto with grpcio-tools at start, listens on 127.0.0.1 at a free port,
prints "PORT n", counts the calls it answers, and stops after its seconds
(argv[1], default 120).

GetItem answers id "missing" with NOT_FOUND and "boom" with INTERNAL,
after delay_ms; id "stall" holds every GetItem back for its delay_ms (a
server that freezes); ListItems streams count items, delay_ms apart; AddToCart
sums its lines; Chat answers each note with "re: " and its text."""
import collections, os, sys, tempfile, threading, time
from concurrent import futures

import grpc
from grpc_tools import protoc
from grpc_reflection.v1alpha import reflection

here = os.path.dirname(os.path.abspath(__file__))
out = tempfile.mkdtemp()
include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
if protoc.main(["protoc", "-I" + here, "-I" + include, "--python_out=" + out, "--grpc_python_out=" + out, "shop.proto"]) != 0:
    sys.exit("protoc failed")
sys.path.insert(0, out)
import shop_pb2, shop_pb2_grpc  # noqa: E402

calls = collections.Counter()
lock = threading.Lock()
frozen = threading.Lock()  # held while the server stalls


def count(name):
    with lock:
        calls[name] += 1


class Shop(shop_pb2_grpc.ShopServicer):
    def GetItem(self, req, ctx):
        if req.id == "stall":
            with frozen:
                time.sleep(req.delay_ms / 1000)
        else:
            with frozen:
                pass
            if req.delay_ms:
                time.sleep(req.delay_ms / 1000)
        count("GetItem")
        if req.id == "missing":
            ctx.abort(grpc.StatusCode.NOT_FOUND, "no item " + req.id)
        if req.id == "boom":
            ctx.abort(grpc.StatusCode.INTERNAL, "boom")
        ctx.set_trailing_metadata((("x-item", req.id),))
        return shop_pb2.Item(id=req.id, name="item " + req.id, price=9.5, kind=shop_pb2.BOOK, tags=["a", "b"])

    def ListItems(self, req, ctx):
        count("ListItems")
        for i in range(req.count):
            if req.delay_ms:
                time.sleep(req.delay_ms / 1000)
            yield shop_pb2.Item(id=str(i), name="item %d" % i)

    def AddToCart(self, lines, ctx):
        n = qty = 0
        for line in lines:
            n += 1
            qty += line.qty
        count("AddToCart")
        return shop_pb2.Cart(lines=n, total_qty=qty)

    def Chat(self, notes, ctx):
        count("Chat")
        for note in notes:
            yield shop_pb2.Note(text="re: " + note.text)

    def Counts(self, req, ctx):
        with lock:
            return shop_pb2.CountsReply(calls=dict(calls))


server = grpc.server(futures.ThreadPoolExecutor(max_workers=32))
shop_pb2_grpc.add_ShopServicer_to_server(Shop(), server)
reflection.enable_server_reflection((shop_pb2.DESCRIPTOR.services_by_name["Shop"].full_name, reflection.SERVICE_NAME), server)
port = server.add_insecure_port("127.0.0.1:0")
server.start()
print("PORT", port, flush=True)
server.wait_for_termination(timeout=float(sys.argv[1]) if len(sys.argv) > 1 else 120)
