"""httpbin (the psf's HTTP test service, 0.10.4) for perflab's tests of
digest authentication against an implementation its authors did not write:
served by Werkzeug on 127.0.0.1 at a free port, it prints "PORT n" and
stops after its seconds (argv[1], default 120). Every request is counted
by method, path and status; GET /__counts is the counts, as JSON
{"GET /digest-auth/... 401": n}, and is not counted itself."""
import collections, json, logging, sys, threading, time

from httpbin import app
from werkzeug.serving import make_server

counts = collections.Counter()
lock = threading.Lock()


def counting(environ, start_response):
    path = environ.get("PATH_INFO", "")
    if path == "/__counts":
        with lock:
            body = json.dumps(counts).encode()
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
        return [body]
    key = environ["REQUEST_METHOD"] + " " + path

    def start(status, headers, exc_info=None):
        with lock:
            counts[key + " " + status.split(" ", 1)[0]] += 1
        return start_response(status, headers, exc_info)

    return app(environ, start)


logging.getLogger("werkzeug").setLevel(logging.ERROR)
server = make_server("127.0.0.1", 0, counting, threaded=True)
print("PORT", server.server_port, flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 120)
