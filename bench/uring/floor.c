// floor-uring: keep-alive GETs over N connections to 127.0.0.1:PORT for
// SECONDS (at most 600), on io_uring: each response's completion queues the
// connection's next send and receive, and every queued one is submitted
// with the next wait (io_uring_submit_and_wait), one system call a wake-up.
// No HTTP parsing beyond "the body ends in ok" (the bench's nginx serves
// "ok"), no histogram: the least a request costs a client on this kernel,
// beside wrk's and perflab's in the same run (docs/benchmarks.md).
//
//   apt-get install liburing-dev
//   gcc -O2 -o floor-uring bench/uring/floor.c -luring
//   taskset -c 0 ./floor-uring 50 18080 10
#include <liburing.h>
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static const char REQ[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1:18080\r\n\r\n";
#define BUF 4096
int main(int argc, char **argv) {
  if (argc != 4) { fprintf(stderr, "usage: floor-uring CONNECTIONS PORT SECONDS\n"); return 2; }
  int n = atoi(argv[1]), port = atoi(argv[2]); double secs = atof(argv[3]);
  if (n < 1 || n > 1000 || port < 1 || port > 65535 || !(secs > 0 && secs <= 600)) {
    fprintf(stderr, "floor-uring: 1-1000 connections, a port, 0-600 seconds\n"); return 2;
  }
  struct io_uring ring; struct io_uring_params p; memset(&p, 0, sizeof p);
  p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
  if (io_uring_queue_init_params(4096, &ring, &p) < 0) { perror("init"); return 1; }
  int *fds = calloc(n, sizeof(int)); char *bufs = malloc((size_t)n * BUF);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)}; inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  for (int i = 0; i < n; i++) {
    fds[i] = socket(AF_INET, SOCK_STREAM, 0); int one = 1; setsockopt(fds[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fds[i], (void *)&a, sizeof a)) { perror("connect"); return 1; }
  }
  io_uring_register_files(&ring, fds, n);
  for (int i = 0; i < n; i++) {
    struct io_uring_sqe *s = io_uring_get_sqe(&ring); io_uring_prep_send(s, i, REQ, sizeof REQ - 1, 0); s->flags |= IOSQE_FIXED_FILE | IOSQE_CQE_SKIP_SUCCESS; s->user_data = (uint64_t)i << 1;
    s = io_uring_get_sqe(&ring); io_uring_prep_recv(s, i, bufs + (size_t)i * BUF, BUF, 0); s->flags |= IOSQE_FIXED_FILE; s->user_data = ((uint64_t)i << 1) | 1;
  }
  struct timespec t0, t; clock_gettime(CLOCK_MONOTONIC, &t0); long done = 0, bad = 0, batches = 0;
  for (;;) {
    io_uring_submit_and_wait(&ring, 1); batches++;
    clock_gettime(CLOCK_MONOTONIC, &t); int stop = (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 > secs;
    struct io_uring_cqe *c; unsigned head, k = 0;
    io_uring_for_each_cqe(&ring, head, c) {
      k++; int i = c->user_data >> 1;
      if (!(c->user_data & 1)) { bad++; continue; } // a failed send
      if (c->res <= 0) { bad++; continue; }
      char *b = bufs + (size_t)i * BUF;
      if (c->res < 4 || memcmp(b + c->res - 2, "ok", 2)) bad++; else done++;
      if (stop) continue;
      struct io_uring_sqe *s = io_uring_get_sqe(&ring); io_uring_prep_send(s, i, REQ, sizeof REQ - 1, 0); s->flags |= IOSQE_FIXED_FILE | IOSQE_CQE_SKIP_SUCCESS; s->user_data = (uint64_t)i << 1;
      s = io_uring_get_sqe(&ring); io_uring_prep_recv(s, i, b, BUF, 0); s->flags |= IOSQE_FIXED_FILE; s->user_data = ((uint64_t)i << 1) | 1;
    }
    io_uring_cq_advance(&ring, k);
    if (stop) break;
  }
  printf("requests %ld bad %ld batches %ld\n", done, bad, batches);
  return 0;
}
