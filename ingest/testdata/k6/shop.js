// A k6 script for perflab's import tests (k6 v1.1.0): two scenarios at
// once, then a third after them (a stage of its own), against the test's
// server at __ENV.BASE. Every request's count is known: per-VU
// iterations. The thresholds (which always pass) have k6's summary give
// each request name's statistics, which the test compares with the import.
import http from 'k6/http';
import { check, group } from 'k6';
import { Trend } from 'k6/metrics';

const base = __ENV.BASE;
const cartTime = new Trend('cart_time', true);

export const options = {
  scenarios: {
    browse: { executor: 'per-vu-iterations', vus: 2, iterations: 5, exec: 'browse' },
    buy: { executor: 'per-vu-iterations', vus: 3, iterations: 4, exec: 'buy' },
    later: { executor: 'per-vu-iterations', vus: 1, iterations: 6, exec: 'later', startTime: '3s' },
  },
  thresholds: {
    'http_req_duration{name:GET /items/{id}}': ['max>=0'],
    'http_req_duration{name:POST /cart}': ['max>=0'],
    'http_req_duration{name:GET /list}': ['max>=0'],
    'group_duration{group:::checkout}': ['max>=0'],
  },
};

export function browse() {
  const r = http.get(`${base}/items/${__ITER}`, { tags: { name: 'GET /items/{id}' } });
  check(r, { 'item is 200': (x) => x.status === 200 });
  http.get(`${base}/fail`);
  http.get(`${base}/slow`, { timeout: '100ms' });
  http.get(`http://127.0.0.1:${__ENV.CLOSED}/closed`);
}

export function buy() {
  group('checkout', () => {
    const t = Date.now();
    const r = http.post(`${base}/cart`, JSON.stringify({ item: __VU }), { headers: { 'Content-Type': 'application/json' }, tags: { name: 'POST /cart' } });
    check(r, { 'cart is 201': (x) => x.status === 201, 'cart is 200': (x) => x.status === 200 });
    cartTime.add(Date.now() - t);
  });
}

export function later() {
  http.get(`${base}/list`, { tags: { name: 'GET /list' } });
}
