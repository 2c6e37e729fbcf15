#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include "cpostgresql.h"

// The libpq functions used, bound by cpq_load.
static struct {
    PGconn *(*connectdb)(const char *);
    ConnStatusType (*status)(const PGconn *);
    char *(*errorMessage)(const PGconn *);
    void (*reset)(PGconn *);
    void (*finish)(PGconn *);
    int (*sendQueryParams)(PGconn *, const char *, int, const Oid *, const char *const *, const int *, const int *, int);
    int (*setnonblocking)(PGconn *, int);
    int (*flush)(PGconn *);
    int (*isBusy)(PGconn *);
    PGresult *(*getResult)(PGconn *);
    ExecStatusType (*resultStatus)(const PGresult *);
    char *(*resStatus)(ExecStatusType);
    char *(*resultErrorField)(const PGresult *, int);
    int (*ntuples)(const PGresult *);
    int (*nfields)(const PGresult *);
    int (*getisnull)(const PGresult *, int, int);
    int (*getlength)(const PGresult *, int, int);
    char *(*getvalue)(const PGresult *, int, int);
    void (*clear)(PGresult *);
    int (*consumeInput)(PGconn *);
    PGnotify *(*notifies)(PGconn *);
    void (*freemem)(void *);
    int (*backendPID)(const PGconn *);
    int (*socket)(const PGconn *);
    PQnoticeProcessor (*setNoticeProcessor)(PGconn *, PQnoticeProcessor, void *);
} pq;

static char load_error[512];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *library = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(load_error, sizeof load_error, "%s", dlerror());
        return;
    }
#define BIND(field)                                                                         \
    if ((*(void **)&pq.field = dlsym(library, "PQ" #field)) == NULL) {                      \
        snprintf(load_error, sizeof load_error, "libpq.so.5 has no PQ%s", #field);          \
        return;                                                                             \
    }
    BIND(connectdb)
    BIND(status)
    BIND(errorMessage)
    BIND(reset)
    BIND(finish)
    BIND(sendQueryParams)
    BIND(setnonblocking)
    BIND(flush)
    BIND(isBusy)
    BIND(getResult)
    BIND(resultStatus)
    BIND(resStatus)
    BIND(resultErrorField)
    BIND(ntuples)
    BIND(nfields)
    BIND(getisnull)
    BIND(getlength)
    BIND(getvalue)
    BIND(clear)
    BIND(consumeInput)
    BIND(notifies)
    BIND(freemem)
    BIND(backendPID)
    BIND(socket)
    BIND(setNoticeProcessor)
#undef BIND
}

const char *cpq_load(void) {
    pthread_once(&load_once, load);
    return load_error[0] ? load_error : NULL;
}

PGconn *cpq_connectdb(const char *conninfo) { return pq.connectdb(conninfo); }
ConnStatusType cpq_status(const PGconn *connection) { return pq.status(connection); }
char *cpq_errorMessage(const PGconn *connection) { return pq.errorMessage(connection); }
void cpq_reset(PGconn *connection) { pq.reset(connection); }
void cpq_finish(PGconn *connection) { pq.finish(connection); }
// Milliseconds left until `deadline` (CLOCK_MONOTONIC), at least 0.
static int left_until(const struct timespec *deadline) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long left = (long long)(deadline->tv_sec - now.tv_sec) * 1000 + (deadline->tv_nsec - now.tv_nsec) / 1000000;
    return left <= 0 ? 0 : left > 0x7fffffff ? 0x7fffffff : (int)left;
}

// Sends what libpq holds and reads until a result is ready (PQisBusy false), waiting in poll(2) on the socket:
// 1 ready, 0 the deadline passed, -1 the connection failed (PQgetResult then says why).
static int wait_ready(PGconn *connection, const struct timespec *deadline) {
    for (;;) {
        int flushed = pq.flush(connection);
        if (flushed < 0) return -1;
        if (flushed == 0 && !pq.isBusy(connection)) return 1;
        int left = left_until(deadline);
        if (left == 0) return 0;
        struct pollfd wait = {.fd = pq.socket(connection), .events = (short)(POLLIN | (flushed ? POLLOUT : 0))};
        int ready = poll(&wait, 1, left);
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0) return -1;
        if (ready == 0) return 0;
        if ((wait.revents & (POLLIN | POLLERR | POLLHUP)) && !pq.consumeInput(connection)) return -1;
    }
}

PGresult *cpq_execParamsWithin(PGconn *connection, int timeout_ms, int *timed_out, const char *command, int count,
                               const Oid *types, const char *const *values, const int *lengths, const int *formats,
                               int resultFormat) {
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
    if (deadline.tv_nsec >= 1000000000) {
        deadline.tv_sec += 1;
        deadline.tv_nsec -= 1000000000;
    }
    *timed_out = 0;
    pq.setnonblocking(connection, 1);
    if (!pq.sendQueryParams(connection, command, count, types, values, lengths, formats, resultFormat)) return NULL;
    // As PQexecParams: every result of the statement is read, up to the NULL that ends them; the first error is
    // kept, else the last result.
    PGresult *kept = NULL;
    for (;;) {
        if (wait_ready(connection, &deadline) == 0) {
            *timed_out = 1;
            pq.clear(kept);
            return NULL;
        }
        PGresult *next = pq.getResult(connection);
        if (next == NULL) return kept;
        if (kept != NULL && pq.resultStatus(kept) == PGRES_FATAL_ERROR) {
            pq.clear(next);
        } else {
            pq.clear(kept);
            kept = next;
        }
    }
}
ExecStatusType cpq_resultStatus(const PGresult *result) { return pq.resultStatus(result); }
char *cpq_resStatus(ExecStatusType status) { return pq.resStatus(status); }
char *cpq_resultErrorField(const PGresult *result, int field) { return pq.resultErrorField(result, field); }
int cpq_ntuples(const PGresult *result) { return pq.ntuples(result); }
int cpq_nfields(const PGresult *result) { return pq.nfields(result); }
int cpq_getisnull(const PGresult *result, int row, int column) { return pq.getisnull(result, row, column); }
int cpq_getlength(const PGresult *result, int row, int column) { return pq.getlength(result, row, column); }
char *cpq_getvalue(const PGresult *result, int row, int column) { return pq.getvalue(result, row, column); }
void cpq_clear(PGresult *result) { pq.clear(result); }
int cpq_consumeInput(PGconn *connection) { return pq.consumeInput(connection); }
PGnotify *cpq_notifies(PGconn *connection) { return pq.notifies(connection); }
void cpq_freemem(void *pointer) { pq.freemem(pointer); }
int cpq_backendPID(const PGconn *connection) { return pq.backendPID(connection); }
int cpq_socket(const PGconn *connection) { return pq.socket(connection); }
PQnoticeProcessor cpq_setNoticeProcessor(PGconn *connection, PQnoticeProcessor processor, void *argument) {
    return pq.setNoticeProcessor(connection, processor, argument);
}
