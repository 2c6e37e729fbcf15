/* The benchmark's C client: costs next to nothing per call, so the ratios between servers are the servers'.
 *
 *   ndjson-client stdio PING CALLS -- COMMAND...    spawn COMMAND with pipes; ping-pong then pipelined (64 in flight)
 *   ndjson-client socket PING CALLS PATH            the same over a Unix socket
 *   ndjson-client spawn RUNS -- COMMAND...          spawn, send one request, read the answer, stop; median
 *   ndjson-client rss PID PATH                      one call over the socket, then the server's VmRSS
 *   ndjson-client sequential CALLS PATH METHOD PARAMS [SETUP...]
 *                                                   each SETUP request line answered, then CALLS requests of
 *                                                   METHOD (PARAMS: a JSON object) one at a time over the
 *                                                   socket; notifications between answers are skipped
 *   ndjson-client calls PATH [SETUP...]             as sequential, driven from stdin: prints `ready` once the
 *                                                   SETUP lines are answered, then for each stdin line
 *                                                   `CALLS METHOD PARAMS` makes the calls and prints
 *                                                   sequential_ms (so that a driver can read the server's CPU
 *                                                   between the rows, Bench/cpu-bench.py)
 *   ndjson-client load SECONDS WARMUP IN_FLIGHT CONNECTIONS METHOD PARAMS INIT [SETUP...] -- PATH...
 *                                                   CONNECTIONS connections spread over the sockets PATH...
 *                                                   round robin, each sent INIT (`%d` replaced by its number)
 *                                                   and the SETUP lines; then IN_FLIGHT calls of METHOD kept
 *                                                   going, each on the next idle connection (one call per
 *                                                   connection at a time), WARMUP seconds, then SECONDS
 *                                                   measured. Prints `warm` when the measured part starts, then
 *                                                   calls, failures (answers with an error), seconds and
 *                                                   client_cpu (this client's own CPU seconds meanwhile)
 *
 * Requests are raw NDJSON lines for an unknown method (every server answers -32601); answers are only counted
 * by their newlines. Output lines are `name value`: pingpong_us, pipelined_us, spawn_ms, rss_kib, sequential_ms,
 * calls, failures, seconds, client_cpu. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEPTH 64

static char in_buf[1 << 16];

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static size_t request(char *out, long id) {
    return (size_t)sprintf(out, "{\"jsonrpc\":\"2.0\",\"method\":\"bench/unknown\",\"params\":{\"n\":1},\"id\":%ld}\n", id);
}

static void send_all(int fd, const char *data, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) { perror("write"); exit(1); }
        data += n;
        len -= (size_t)n;
    }
}

/* Reads once; returns how many answers (newlines) arrived. */
static long receive(int fd) {
    ssize_t n;
    do n = read(fd, in_buf, sizeof in_buf); while (n < 0 && errno == EINTR);
    if (n <= 0) { fprintf(stderr, "ndjson-client: server closed or failed\n"); exit(1); }
    long lines = 0;
    for (char *p = in_buf; (p = memchr(p, '\n', (size_t)(in_buf + n - p))) != NULL; p++) lines++;
    return lines;
}

static void round_trip(int out, int in, long id) {
    char line[128];
    send_all(out, line, request(line, id));
    long got = 0;
    while (got < 1) got += receive(in);
}

/* Microseconds per call, one request in flight. */
static double ping_pong(int out, int in, long calls) {
    for (long i = 0; i < (calls < 1000 ? calls : 1000); i++) round_trip(out, in, i);
    double start = now();
    for (long i = 0; i < calls; i++) round_trip(out, in, i);
    return (now() - start) / (double)calls * 1e6;
}

static void run_pipelined(int out, int in, long calls) {
    static char batch[DEPTH * 128];
    long sent = 0, received = 0;
    size_t len = 0;
    while (sent < calls && sent < DEPTH) len += request(batch + len, sent++);
    send_all(out, batch, len);
    while (received < calls) {
        long got = receive(in);
        received += got;
        len = 0;
        for (long i = 0; i < got && sent < calls; i++) len += request(batch + len, sent++);
        if (len) send_all(out, batch, len);
    }
}

/* Microseconds per call, DEPTH requests in flight, refilled as answers arrive. */
static double pipelined(int out, int in, long calls) {
    run_pipelined(out, in, calls < 2000 ? calls : 2000);
    double start = now();
    run_pipelined(out, in, calls);
    return (now() - start) / (double)calls * 1e6;
}

struct child { pid_t pid; int to, from; };

static struct child spawn(char **argv) {
    int in[2], out[2];
    if (pipe(in) || pipe(out)) { perror("pipe"); exit(1); }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]); close(in[1]); close(out[0]); close(out[1]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    return (struct child){pid, in[1], out[0]};
}

static void stop(struct child c) {
    close(c.to);
    close(c.from);
    kill(c.pid, SIGTERM);
    waitpid(c.pid, NULL, 0);
}

static int connect_unix(const char *path) {
    struct sockaddr_un address = {0};
    address.sun_family = AF_UNIX;
    strncpy(address.sun_path, path, sizeof address.sun_path - 1);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) { perror(path); exit(1); }
    return fd;
}

/* Reads until the answer to the request just sent: the line that starts as passbridge starts a response;
 * other lines are notifications. */
static void await_answer(int fd) {
    static const char answer[] = "{\"jsonrpc\":\"2.0\",\"id\":";
    static char line[1 << 16];
    static size_t kept;
    for (int answered = 0; !answered;) {
        /* Waits in poll(2) as an event-loop host (asyncio, libuv) does, not in a blocking read(2): a reader
         * blocked in read(2) also wakes each time the server consumes this client's request (the kernel's
         * wake-up for room to write), and that wake-up and its context switches would be counted as the
         * server's CPU. */
        struct pollfd readable = {.fd = fd, .events = POLLIN};
        while (poll(&readable, 1, -1) < 0 && errno == EINTR) {}
        ssize_t n;
        do n = read(fd, line + kept, sizeof line - kept); while (n < 0 && errno == EINTR);
        if (n <= 0) { fprintf(stderr, "ndjson-client: server closed or failed\n"); exit(1); }
        kept += (size_t)n;
        char *begin = line, *end;
        while ((end = memchr(begin, '\n', kept - (size_t)(begin - line))) != NULL) {
            if (strncmp(begin, answer, sizeof answer - 1) == 0) answered = 1;
            begin = end + 1;
        }
        kept -= (size_t)(begin - line);
        memmove(line, begin, kept);
    }
}

/* Milliseconds per call of METHOD, one in flight, after the SETUP lines and WARMUP calls. */
static double sequential(int fd, long calls, long warmup, const char *method, const char *params, char **setup, int setups) {
    for (int i = 0; i < setups; i++) {
        send_all(fd, setup[i], strlen(setup[i]));
        send_all(fd, "\n", 1);
        await_answer(fd);
    }
    char *out = malloc(strlen(method) + strlen(params) + 128);
    double start = 0;
    for (long i = -warmup; i < calls; i++) {
        if (i == 0) start = now();
        send_all(fd, out, (size_t)sprintf(out, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"%s\",\"params\":%s}\n", i, method, params));
        await_answer(fd);
    }
    free(out);
    return (now() - start) / (double)calls * 1000;
}

/* `calls` mode: SETUP lines answered, `ready`, then one row of sequential calls per stdin line. */
static int calls_from_stdin(int fd, char **setup, int setups) {
    char line[1 << 16], method[256];
    for (int i = 0; i < setups; i++) {
        send_all(fd, setup[i], strlen(setup[i]));
        send_all(fd, "\n", 1);
        await_answer(fd);
    }
    printf("ready\n");
    fflush(stdout);
    while (fgets(line, sizeof line, stdin) != NULL) {
        long calls;
        int used = 0;
        if (sscanf(line, "%ld %255s %n", &calls, method, &used) < 2 || used == 0) break;
        char *params = line + used;
        params[strcspn(params, "\n")] = 0;
        printf("sequential_ms %.4f\n", sequential(fd, calls, 0, method, params, NULL, 0));
        fflush(stdout);
    }
    return 0;
}

/* This process's CPU (user + system) so far, in seconds. */
static double own_cpu(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

/* One connection of `load`: its socket, the bytes of an answer not yet ended, and whether a call is out. */
struct peer {
    int fd;
    char *kept;
    size_t len, cap;
    int busy;
};

static const char response_prefix[] = "{\"jsonrpc\":\"2.0\",\"id\":";

/* Reads what `p` has; returns the number of responses completed, adding those with an error to *failed. */
static long peer_read(struct peer *p, long *failed) {
    long answers = 0;
    for (;;) {
        if (p->cap - p->len < 65536) {
            p->cap = p->cap * 2 + 65536;
            p->kept = realloc(p->kept, p->cap);
        }
        ssize_t n = read(p->fd, p->kept + p->len, p->cap - p->len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (n <= 0) { fprintf(stderr, "ndjson-client: server closed or failed\n"); exit(1); }
        p->len += (size_t)n;
        if ((size_t)n < 65536) break;
    }
    char *begin = p->kept, *end;
    while ((end = memchr(begin, '\n', p->len - (size_t)(begin - p->kept))) != NULL) {
        if (strncmp(begin, response_prefix, sizeof response_prefix - 1) == 0) {
            answers++;
            /* The id is a number: what follows it says result or error. */
            char *after = begin + sizeof response_prefix - 1;
            while (after < end && *after != ',') after++;
            if (strncmp(after, ",\"error\"", 8) == 0) (*failed)++;
        }
        begin = end + 1;
    }
    p->len -= (size_t)(begin - p->kept);
    memmove(p->kept, begin, p->len);
    return answers;
}

/* As peer_read, after waiting for the connection to be readable. */
static long peer_read_waiting(struct peer *p, long *failed) {
    struct pollfd one = {.fd = p->fd, .events = POLLIN};
    while (poll(&one, 1, -1) < 0 && errno == EINTR) {}
    return peer_read(p, failed);
}

static int load(double seconds, double warmup, long in_flight, long count, const char *method, const char *params,
                const char *init, char **setup, int setups, char **paths, int npaths) {
    struct peer *peers = calloc((size_t)count, sizeof *peers);
    long *idle = calloc((size_t)count, sizeof *idle); /* a ring of idle connections, oldest first */
    long idle_head = 0, idle_count = 0;
    char *out = malloc(strlen(method) + strlen(params) + strlen(init) + 256);
    int epoll = epoll_create1(0);
    long failed = 0;
    /* Set up every connection: INIT, then each SETUP line, each answered before the next is sent. */
    for (long i = 0; i < count; i++) {
        peers[i].fd = connect_unix(paths[i % npaths]);
        fcntl(peers[i].fd, F_SETFL, fcntl(peers[i].fd, F_GETFL) | O_NONBLOCK);
        struct epoll_event event = {.events = EPOLLIN, .data.u64 = (uint64_t)i};
        epoll_ctl(epoll, EPOLL_CTL_ADD, peers[i].fd, &event);
        for (int s = -1; s < setups; s++) {
            size_t len = s < 0 ? (size_t)sprintf(out, init, (int)i) : (size_t)sprintf(out, "%s", setup[s]);
            out[len++] = '\n';
            send_all(peers[i].fd, out, len);
            long setup_failed = 0;
            while (peer_read_waiting(&peers[i], &setup_failed) == 0) {}
            if (setup_failed) { fprintf(stderr, "ndjson-client: set-up line %d of connection %ld failed\n", s + 2, i); exit(1); }
        }
        idle[(idle_head + idle_count++) % count] = i;
    }
    long next_id = 1, out_now = 0, done = 0, done_at_warm = 0, failed_at_warm = 0;
    double start = now(), warm_at = 0, cpu_at_warm = 0;
    struct epoll_event events[256];
    for (;;) {
        while (out_now < in_flight && idle_count > 0) {
            long i = idle[idle_head];
            idle_head = (idle_head + 1) % count;
            idle_count--;
            size_t len = (size_t)sprintf(out, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"%s\",\"params\":%s}\n", next_id++, method, params);
            send_all(peers[i].fd, out, len);
            peers[i].busy = 1;
            out_now++;
        }
        int n = epoll_wait(epoll, events, 256, 100);
        for (int e = 0; e < n; e++) {
            long i = (long)events[e].data.u64;
            long got = peer_read(&peers[i], &failed);
            if (got > 0 && peers[i].busy) {
                peers[i].busy = 0;
                out_now--;
                done++;
                idle[(idle_head + idle_count++) % count] = i;
            }
        }
        double t = now();
        if (warm_at == 0 && t - start >= warmup) {
            warm_at = t;
            done_at_warm = done;
            failed_at_warm = failed;
            cpu_at_warm = own_cpu();
            printf("warm\n");
            fflush(stdout);
        }
        if (warm_at != 0 && t - warm_at >= seconds) {
            printf("calls %ld\nfailures %ld\nseconds %.4f\nclient_cpu %.4f\n", done - done_at_warm, failed - failed_at_warm,
                   t - warm_at, own_cpu() - cpu_at_warm);
            fflush(stdout);
            break;
        }
    }
    for (long i = 0; i < count; i++) close(peers[i].fd);
    return 0;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static long rss_kib(const char *pid) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%s/status", pid);
    FILE *status = fopen(path, "r");
    long kib = 0;
    while (status && fgets(line, sizeof line, status))
        if (strncmp(line, "VmRSS:", 6) == 0) kib = atol(line + 6);
    if (status) fclose(status);
    return kib;
}

static int usage(void) {
    fprintf(stderr, "usage: ndjson-client stdio PING CALLS -- COMMAND... | socket PING CALLS PATH | spawn RUNS -- COMMAND... | rss PID PATH"
                    " | sequential CALLS PATH METHOD PARAMS [SETUP...] | calls PATH [SETUP...]"
                    " | load SECONDS WARMUP IN_FLIGHT CONNECTIONS METHOD PARAMS INIT [SETUP...] -- PATH...\n");
    return 2;
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    if (argc >= 6 && strcmp(argv[1], "stdio") == 0 && strcmp(argv[4], "--") == 0) {
        struct child c = spawn(argv + 5);
        printf("pingpong_us %.2f\n", ping_pong(c.to, c.from, atol(argv[2])));
        printf("pipelined_us %.2f\n", pipelined(c.to, c.from, atol(argv[3])));
        stop(c);
    } else if (argc == 5 && strcmp(argv[1], "socket") == 0) {
        int fd = connect_unix(argv[4]);
        printf("pingpong_us %.2f\n", ping_pong(fd, fd, atol(argv[2])));
        printf("pipelined_us %.2f\n", pipelined(fd, fd, atol(argv[3])));
        close(fd);
    } else if (argc >= 5 && strcmp(argv[1], "spawn") == 0 && strcmp(argv[3], "--") == 0) {
        int runs = atoi(argv[2]);
        double *samples = calloc((size_t)runs, sizeof *samples);
        for (int i = 0; i < runs; i++) {
            double start = now();
            struct child c = spawn(argv + 4);
            round_trip(c.to, c.from, 1);
            samples[i] = (now() - start) * 1000;
            stop(c);
        }
        qsort(samples, (size_t)runs, sizeof *samples, compare);
        printf("spawn_ms %.2f\n", samples[runs / 2]);
    } else if (argc == 4 && strcmp(argv[1], "rss") == 0) {
        int fd = connect_unix(argv[3]);
        round_trip(fd, fd, 1);
        close(fd);
        usleep(200000);
        printf("rss_kib %ld\n", rss_kib(argv[2]));
    } else if (argc >= 6 && strcmp(argv[1], "sequential") == 0) {
        int fd = connect_unix(argv[3]);
        printf("sequential_ms %.3f\n", sequential(fd, atol(argv[2]), 10, argv[4], argv[5], argv + 6, argc - 6));
        close(fd);
    } else if (argc >= 3 && strcmp(argv[1], "calls") == 0) {
        int fd = connect_unix(argv[2]);
        calls_from_stdin(fd, argv + 3, argc - 3);
        close(fd);
    } else if (argc >= 10 && strcmp(argv[1], "load") == 0) {
        int dashes = 9;
        while (dashes < argc && strcmp(argv[dashes], "--") != 0) dashes++;
        if (dashes >= argc - 1) return usage();
        return load(atof(argv[2]), atof(argv[3]), atol(argv[4]), atol(argv[5]), argv[6], argv[7], argv[8], argv + 9,
                    dashes - 9, argv + dashes + 1, argc - dashes - 1);
    } else {
        return usage();
    }
    return 0;
}
