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
 *
 * Requests are raw NDJSON lines for an unknown method (every server answers -32601); answers are only counted
 * by their newlines. Output lines are `name value`: pingpong_us, pipelined_us, spawn_ms, rss_kib, sequential_ms. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Milliseconds per call of METHOD, one in flight, after the SETUP lines and 10 warm-up calls. */
static double sequential(int fd, long calls, const char *method, const char *params, char **setup, int setups) {
    for (int i = 0; i < setups; i++) {
        send_all(fd, setup[i], strlen(setup[i]));
        send_all(fd, "\n", 1);
        await_answer(fd);
    }
    char *out = malloc(strlen(method) + strlen(params) + 128);
    double start = 0;
    for (long i = -10; i < calls; i++) {
        if (i == 0) start = now();
        send_all(fd, out, (size_t)sprintf(out, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"%s\",\"params\":%s}\n", i, method, params));
        await_answer(fd);
    }
    free(out);
    return (now() - start) / (double)calls * 1000;
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
    fprintf(stderr, "usage: ndjson-client stdio PING CALLS -- COMMAND... | socket PING CALLS PATH | spawn RUNS -- COMMAND... | rss PID PATH | sequential CALLS PATH METHOD PARAMS [SETUP...]\n");
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
        printf("sequential_ms %.3f\n", sequential(fd, atol(argv[2]), argv[4], argv[5], argv + 6, argc - 6));
        close(fd);
    } else {
        return usage();
    }
    return 0;
}
