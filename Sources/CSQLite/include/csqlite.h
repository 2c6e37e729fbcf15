#ifndef CSQLITE_H
#define CSQLITE_H

#include <sqlite3.h>

// SQLite through dlopen: the library is mapped, and its symbols bound (it is linked with BIND_NOW, about 1,600
// relocations), by the first store call that opens the database, not at start-up, where it was a third of the
// daemon's instructions up to its first answer (Bench/README.md). Each function below calls the SQLite function
// of the same name (sqlite3_… for csq_…) after `csq_load` succeeded; calling one before is a programming error.

// Loads libsqlite3.so.0 once (thread-safe); NULL when it is loaded, else why it could not be (dlerror's text).
const char *csq_load(void);

int csq_open_v2(const char *path, sqlite3 **handle, int flags, const char *vfs);
int csq_close(sqlite3 *handle);
int csq_close_v2(sqlite3 *handle);
int csq_busy_timeout(sqlite3 *handle, int milliseconds);
int csq_extended_result_codes(sqlite3 *handle, int on);
const char *csq_errstr(int code);
int csq_prepare_v3(sqlite3 *handle, const char *sql, int bytes, unsigned int flags, sqlite3_stmt **statement,
                   const char **tail);
int csq_finalize(sqlite3_stmt *statement);
int csq_reset(sqlite3_stmt *statement);
int csq_clear_bindings(sqlite3_stmt *statement);
int csq_bind_text(sqlite3_stmt *statement, int position, const char *text, int bytes, void (*destructor)(void *));
int csq_bind_int64(sqlite3_stmt *statement, int position, sqlite3_int64 value);
int csq_bind_null(sqlite3_stmt *statement, int position);
int csq_step(sqlite3_stmt *statement);
int csq_changes(sqlite3 *handle);
int csq_column_type(sqlite3_stmt *statement, int column);
const unsigned char *csq_column_text(sqlite3_stmt *statement, int column);
int csq_column_bytes(sqlite3_stmt *statement, int column);
sqlite3_int64 csq_column_int64(sqlite3_stmt *statement, int column);

#endif
