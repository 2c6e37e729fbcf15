#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include "csqlite.h"

// The SQLite functions used, bound by csq_load.
static struct {
    int (*open_v2)(const char *, sqlite3 **, int, const char *);
    int (*close)(sqlite3 *);
    int (*close_v2)(sqlite3 *);
    int (*busy_timeout)(sqlite3 *, int);
    int (*extended_result_codes)(sqlite3 *, int);
    const char *(*errstr)(int);
    int (*prepare_v3)(sqlite3 *, const char *, int, unsigned int, sqlite3_stmt **, const char **);
    int (*finalize)(sqlite3_stmt *);
    int (*reset)(sqlite3_stmt *);
    int (*clear_bindings)(sqlite3_stmt *);
    int (*bind_text)(sqlite3_stmt *, int, const char *, int, void (*)(void *));
    int (*bind_int64)(sqlite3_stmt *, int, sqlite3_int64);
    int (*bind_null)(sqlite3_stmt *, int);
    int (*step)(sqlite3_stmt *);
    int (*changes)(sqlite3 *);
    int (*column_type)(sqlite3_stmt *, int);
    const unsigned char *(*column_text)(sqlite3_stmt *, int);
    int (*column_bytes)(sqlite3_stmt *, int);
    sqlite3_int64 (*column_int64)(sqlite3_stmt *, int);
} sq;

static char load_error[512];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *library = dlopen("libsqlite3.so.0", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(load_error, sizeof load_error, "%s", dlerror());
        return;
    }
#define BIND(field)                                                                         \
    if ((*(void **)&sq.field = dlsym(library, "sqlite3_" #field)) == NULL) {                \
        snprintf(load_error, sizeof load_error, "libsqlite3.so.0 has no sqlite3_%s", #field); \
        return;                                                                             \
    }
    BIND(open_v2)
    BIND(close)
    BIND(close_v2)
    BIND(busy_timeout)
    BIND(extended_result_codes)
    BIND(errstr)
    BIND(prepare_v3)
    BIND(finalize)
    BIND(reset)
    BIND(clear_bindings)
    BIND(bind_text)
    BIND(bind_int64)
    BIND(bind_null)
    BIND(step)
    BIND(changes)
    BIND(column_type)
    BIND(column_text)
    BIND(column_bytes)
    BIND(column_int64)
#undef BIND
}

const char *csq_load(void) {
    pthread_once(&load_once, load);
    return load_error[0] ? load_error : NULL;
}

int csq_open_v2(const char *path, sqlite3 **handle, int flags, const char *vfs) { return sq.open_v2(path, handle, flags, vfs); }
int csq_close(sqlite3 *handle) { return sq.close(handle); }
int csq_close_v2(sqlite3 *handle) { return sq.close_v2(handle); }
int csq_busy_timeout(sqlite3 *handle, int milliseconds) { return sq.busy_timeout(handle, milliseconds); }
int csq_extended_result_codes(sqlite3 *handle, int on) { return sq.extended_result_codes(handle, on); }
const char *csq_errstr(int code) { return sq.errstr(code); }
int csq_prepare_v3(sqlite3 *handle, const char *sql, int bytes, unsigned int flags, sqlite3_stmt **statement,
                   const char **tail) {
    return sq.prepare_v3(handle, sql, bytes, flags, statement, tail);
}
int csq_finalize(sqlite3_stmt *statement) { return sq.finalize(statement); }
int csq_reset(sqlite3_stmt *statement) { return sq.reset(statement); }
int csq_clear_bindings(sqlite3_stmt *statement) { return sq.clear_bindings(statement); }
int csq_bind_text(sqlite3_stmt *statement, int position, const char *text, int bytes, void (*destructor)(void *)) {
    return sq.bind_text(statement, position, text, bytes, destructor);
}
int csq_bind_int64(sqlite3_stmt *statement, int position, sqlite3_int64 value) {
    return sq.bind_int64(statement, position, value);
}
int csq_bind_null(sqlite3_stmt *statement, int position) { return sq.bind_null(statement, position); }
int csq_step(sqlite3_stmt *statement) { return sq.step(statement); }
int csq_changes(sqlite3 *handle) { return sq.changes(handle); }
int csq_column_type(sqlite3_stmt *statement, int column) { return sq.column_type(statement, column); }
const unsigned char *csq_column_text(sqlite3_stmt *statement, int column) { return sq.column_text(statement, column); }
int csq_column_bytes(sqlite3_stmt *statement, int column) { return sq.column_bytes(statement, column); }
sqlite3_int64 csq_column_int64(sqlite3_stmt *statement, int column) { return sq.column_int64(statement, column); }
