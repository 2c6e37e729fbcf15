/* The practical floor for the benchmark: a small C + jansson NDJSON JSON-RPC server.
 *
 *   ndjson-server --stdio          serve stdin/stdout
 *   ndjson-server --socket PATH    serve a Unix socket (poll loop, many clients)
 *
 * Every request is parsed with jansson and answered with a -32601 error object built with jansson,
 * echoing the id, exactly like passbridge answers an unknown method. Output is flushed once the
 * input buffer is drained, so pipelined requests are answered in batches. */
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_CLIENTS 4096

struct client {
    int in, out;
    char *buf;
    size_t len, cap;
};

static int write_all(int fd, const char *data, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) { struct pollfd p = {fd, POLLOUT, 0}; poll(&p, 1, -1); continue; }
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Answers every complete line in the client's buffer; returns -1 when the client is gone. */
static int serve(struct client *c) {
    if (c->cap - c->len < 65536) {
        c->cap = c->cap ? c->cap * 2 : 131072;
        c->buf = realloc(c->buf, c->cap);
    }
    ssize_t n = read(c->in, c->buf + c->len, c->cap - c->len);
    if (n == 0) return -1;
    if (n < 0) return (errno == EINTR || errno == EAGAIN) ? 0 : -1;
    c->len += (size_t)n;
    char *out = NULL;
    size_t out_len = 0, out_cap = 0;
    char *start = c->buf, *end = c->buf + c->len, *nl;
    while ((nl = memchr(start, '\n', (size_t)(end - start))) != NULL) {
        json_error_t error;
        json_t *request = json_loadb(start, (size_t)(nl - start), 0, &error);
        json_t *reply;
        if (request == NULL) {
            reply = json_pack("{s:s,s:n,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", "error", "code", -32700, "message", "Parse error");
        } else {
            json_t *id = json_object_get(request, "id");
            json_t *method = json_object_get(request, "method");
            reply = json_pack("{s:s,s:O,s:{s:i,s:s,s:{s:O}}}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error",
                              "code", -32601, "message", "Method not found", "data", "method", method ? method : json_null());
            json_decref(request);
        }
        size_t size = json_dumpb(reply, NULL, 0, JSON_COMPACT);
        if (out_len + size + 1 > out_cap) {
            out_cap = (out_len + size + 1) * 2;
            out = realloc(out, out_cap);
        }
        json_dumpb(reply, out + out_len, size, JSON_COMPACT);
        out_len += size;
        out[out_len++] = '\n';
        json_decref(reply);
        start = nl + 1;
    }
    c->len = (size_t)(end - start);
    memmove(c->buf, start, c->len);
    int result = out_len ? write_all(c->out, out, out_len) : 0;
    free(out);
    return result;
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    if (argc >= 2 && strcmp(argv[1], "--socket") == 0 && argc >= 3) {
        int listener = socket(AF_UNIX, SOCK_STREAM, 0);
        struct sockaddr_un addr = {0};
        addr.sun_family = AF_UNIX;
        strncpy(addr.sun_path, argv[2], sizeof(addr.sun_path) - 1);
        unlink(argv[2]);
        if (bind(listener, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(listener, 512) != 0) {
            perror("bind");
            return 1;
        }
        static struct pollfd polls[MAX_CLIENTS + 1];
        static struct client clients[MAX_CLIENTS + 1];
        int count = 1;
        polls[0].fd = listener;
        polls[0].events = POLLIN;
        for (;;) {
            if (poll(polls, (nfds_t)count, -1) < 0) continue;
            if (polls[0].revents & POLLIN) {
                int fd = accept(listener, NULL, NULL);
                if (fd >= 0 && count <= MAX_CLIENTS) {
                    polls[count] = (struct pollfd){fd, POLLIN, 0};
                    clients[count] = (struct client){fd, fd, NULL, 0, 0};
                    count++;
                } else if (fd >= 0) {
                    close(fd);
                }
            }
            for (int i = 1; i < count; i++) {
                if (polls[i].revents == 0) continue;
                if (serve(&clients[i]) < 0) {
                    close(polls[i].fd);
                    free(clients[i].buf);
                    polls[i] = polls[count - 1];
                    clients[i] = clients[count - 1];
                    count--;
                    i--;
                }
            }
        }
    }
    struct client c = {0, 1, NULL, 0, 0};
    while (serve(&c) == 0) {}
    return 0;
}
