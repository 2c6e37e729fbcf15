#ifndef CPOSTGRESQL_H
#define CPOSTGRESQL_H

#include <postgresql/libpq-fe.h>

// libpq through dlopen: the library (with its Kerberos, LDAP and TLS dependencies) is mapped only by a daemon
// whose store is PostgreSQL, so a set-top box needs neither the library nor the memory. Each function below
// calls the libpq function of the same name (PQ… for cpq_…) after `cpq_load` succeeded; calling one before is a
// programming error.

// Loads libpq.so.5 once (thread-safe); NULL when it is loaded, else why it could not be (dlerror's text).
const char *cpq_load(void);

PGconn *cpq_connectdb(const char *conninfo);
ConnStatusType cpq_status(const PGconn *connection);
char *cpq_errorMessage(const PGconn *connection);
void cpq_reset(PGconn *connection);
void cpq_finish(PGconn *connection);
// PQexecParams that waits at most `timeout_ms` for the server's answer (PQsendQueryParams, then poll(2) on the
// socket, in non-blocking mode). NULL with *timed_out set when the deadline passed: a statement is then still in
// flight and the connection is of no further use until PQreset. NULL without it as PQexecParams's NULL.
PGresult *cpq_execParamsWithin(PGconn *connection, int timeout_ms, int *timed_out, const char *command, int count,
                               const Oid *types, const char *const *values, const int *lengths, const int *formats,
                               int resultFormat);
ExecStatusType cpq_resultStatus(const PGresult *result);
char *cpq_resStatus(ExecStatusType status);
char *cpq_resultErrorField(const PGresult *result, int field);
int cpq_ntuples(const PGresult *result);
int cpq_nfields(const PGresult *result);
int cpq_getisnull(const PGresult *result, int row, int column);
int cpq_getlength(const PGresult *result, int row, int column);
char *cpq_getvalue(const PGresult *result, int row, int column);
void cpq_clear(PGresult *result);
int cpq_consumeInput(PGconn *connection);
PGnotify *cpq_notifies(PGconn *connection);
void cpq_freemem(void *pointer);
int cpq_backendPID(const PGconn *connection);
int cpq_socket(const PGconn *connection);
// What the server says outside an answer (a WARNING, the FATAL of a connection it ends) goes to `processor`, not to
// stderr as libpq's default does; kept across PQreset.
PQnoticeProcessor cpq_setNoticeProcessor(PGconn *connection, PQnoticeProcessor processor, void *argument);

#endif
