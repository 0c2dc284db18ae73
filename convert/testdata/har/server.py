import http.server, json, os, sys, threading
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'site'))
class H(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        if self.path.startswith('/api/items'):
            return self.json(200, [{"id": "i-1"}, {"id": "i-2"}])
        return super().do_GET()
    def do_POST(self):
        n = int(self.headers.get('Content-Length') or 0); self.rfile.read(n)
        if self.path == '/api/cart':
            return self.json(201, {"order": "o-1"})
        self.send_error(404)
    def json(self, code, v):
        b = json.dumps(v).encode(); self.send_response(code); self.send_header('Content-Type', 'application/json'); self.send_header('Content-Length', str(len(b))); self.end_headers(); self.wfile.write(b)
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(('127.0.0.1', int(sys.argv[1])), H)
threading.Timer(60, s.shutdown).start()
s.serve_forever()
